package control_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/control"
)

// Each observation is (minutes since the first, asked, ready); the starts
// measured are the minutes from when an instance was owed to when one more
// served.
func TestStartTimesFromObservations(t *testing.T) {
	type obs struct{ at, asked, ready int }
	tests := []struct {
		name       string
		seq        []obs
		wantStarts int
		wantMedian time.Duration
		wantReady  bool
	}{
		{"nothing owed", []obs{{0, 3, 3}, {1, 3, 3}}, 0, 0, false},
		{"owed before the first look is not measured", []obs{{0, 5, 2}, {4, 5, 5}}, 0, 0, false},
		// Asked at 1; two ready between 10 and 11 (counted 10:30), one between 11 and 13 (12).
		{"three asked, ready after 9.5, 9.5 and 11", []obs{{0, 2, 2}, {1, 5, 2}, {10, 5, 2}, {11, 5, 4}, {13, 5, 5}}, 3, 9*time.Minute + 30*time.Second, false},
		{"a scale-in before the boots ended drops the newest",
			// 4 asked at 1, 2 cancelled at 3: the two left ready at 11.
			[]obs{{0, 0, 0}, {1, 4, 0}, {3, 2, 0}, {11, 2, 2}, {12, 2, 2}}, 2, 6 * time.Minute, false},
		{"a replaced instance is owed from when it stopped serving",
			// Stopped between 4 and 5 (4:30), ready between 14 and 15 (14:30).
			[]obs{{0, 3, 3}, {4, 3, 3}, {5, 3, 2}, {14, 3, 2}, {15, 3, 3}}, 1, 10 * time.Minute, false},
		{"five starts make an estimate",
			[]obs{{0, 0, 0}, {1, 5, 0}, {9, 5, 2}, {10, 5, 2}, {11, 5, 5}}, 5, 9*time.Minute + 30*time.Second, true},
	}
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s control.StartTimes
			for _, o := range tc.seq {
				s.Observe(t0.Add(time.Duration(o.at)*time.Minute), o.asked, o.ready)
			}
			est, ready := s.Estimate()
			if est.Starts != tc.wantStarts || est.Median != tc.wantMedian || ready != tc.wantReady {
				t.Errorf("estimate %+v (enough: %v), want %d starts, median %v, enough %v", est, ready, tc.wantStarts, tc.wantMedian, tc.wantReady)
			}
		})
	}
}

// Against the simulated fleet, with boots drawn around 10 minutes and
// spot instances interrupted and replaced, a minute between observations:
// the learned median is within 10% of the fleet's and the 90th percentile
// above it.
func TestStartTimesConvergeOnTheFleet(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts simulated.Options
	}{
		{"fixed boots", simulated.Options{BootDelay: 10 * time.Minute}},
		{"spread boots", simulated.Options{BootDelay: 10 * time.Minute, BootSpread: 3 * time.Minute}},
		{"spot interruptions", simulated.Options{BootDelay: 8 * time.Minute, BootSpread: 2 * time.Minute, SpotShare: 0.5, InterruptionsPerHour: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := actuatortest.NewClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
			opts := tc.opts
			opts.Now, opts.Rand = clock.Now, rand.New(rand.NewPCG(7, 1))
			fleet := simulated.New(opts)
			fleet.AddPool("gpu", 2, 1, 40)
			var s control.StartTimes
			r := rand.New(rand.NewPCG(3, 4))
			for minute := range 3 * 24 * 60 {
				if minute%45 == 0 {
					if err := fleet.SetDesired(ctx, "gpu", 2+r.IntN(20), "test"); err != nil {
						t.Fatal(err)
					}
				}
				c, err := fleet.Capacity(ctx, "gpu")
				if err != nil {
					t.Fatal(err)
				}
				s.Observe(clock.Now(), c.Desired, c.Ready)
				clock.Advance(time.Minute)
			}
			est, ok := s.Estimate()
			// The log-normal's median is its mean over sqrt(1 + cv²).
			cv := float64(opts.BootSpread) / float64(opts.BootDelay)
			want := time.Duration(float64(opts.BootDelay) / math.Sqrt(1+cv*cv))
			if !ok || math.Abs(float64(est.Median-want)) > 0.1*float64(want) || est.P90 < est.Median {
				t.Errorf("learned %+v (enough: %v), want a median within 10%% of %v", est, ok, want)
			}
			t.Logf("fleet median %v: learned median %v, p90 %v over %d starts", want, est.Median, est.P90, est.Starts)
		})
	}
}

// Measured and Restore carry the start times across a restart: the same
// estimate comes back, at most the last 128 positive ones are kept, and
// Recorded counts only starts measured after the restore.
func TestStartTimesRestore(t *testing.T) {
	var saved []time.Duration
	for i := range 200 {
		saved = append(saved, time.Duration(i+1)*time.Second)
	}
	cases := []struct {
		name      string
		saved     []time.Duration
		wantN     int
		wantFirst time.Duration
	}{
		{"none", nil, 0, 0},
		{"non-positive ones are dropped", []time.Duration{-time.Minute, 0, 3 * time.Minute, 5 * time.Minute}, 2, 3 * time.Minute},
		{"the last 128 are kept", saved, 128, 73 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s control.StartTimes
			s.Restore(tc.saved)
			got := s.Measured()
			if len(got) != tc.wantN || (tc.wantN > 0 && got[0] != tc.wantFirst) || s.Recorded() != 0 {
				t.Fatalf("restored %d starts (first %v), recorded %d; want %d (first %v), 0", len(got), got, s.Recorded(), tc.wantN, tc.wantFirst)
			}
			var again control.StartTimes
			again.Restore(got)
			e1, ok1 := s.Estimate()
			e2, ok2 := again.Estimate()
			if e1 != e2 || ok1 != ok2 {
				t.Errorf("a second round trip estimates %+v %v, want %+v %v", e2, ok2, e1, ok1)
			}
		})
	}
	var s control.StartTimes
	s.Restore([]time.Duration{time.Minute})
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s.Observe(t0, 2, 2)
	s.Observe(t0.Add(time.Minute), 3, 2) // one more asked for
	s.Observe(t0.Add(3*time.Minute), 3, 3)
	if s.Recorded() != 1 || len(s.Measured()) != 2 {
		t.Errorf("after one start measured on a restored one: recorded %d, measured %v; want 1 and two starts", s.Recorded(), s.Measured())
	}
}
