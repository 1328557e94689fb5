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
				s.Observe(t0.Add(time.Duration(o.at)*time.Minute), control.FleetRead{Asked: o.asked, Ready: o.ready}, o.asked)
			}
			est, ready := s.Estimate(control.ColdBoot)
			if est.Starts != tc.wantStarts || est.Median != tc.wantMedian || ready != tc.wantReady {
				t.Errorf("estimate %+v (enough: %v), want %d starts, median %v, enough %v", est, ready, tc.wantStarts, tc.wantMedian, tc.wantReady)
			}
		})
	}
}

// Against the simulated fleet, with boots drawn around 10 minutes and
// spot instances interrupted and replaced, or a warm tier whose stopped
// instances start in 3m20s, a decision a minute: each kind's learned
// median is within 10% of the fleet's and the 90th percentile above it.
func TestStartTimesConvergeOnTheFleet(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts simulated.Options
		warm int // the warm tier's size
	}{
		{"fixed boots", simulated.Options{BootDelay: 10 * time.Minute}, 0},
		{"spread boots", simulated.Options{BootDelay: 10 * time.Minute, BootSpread: 3 * time.Minute}, 0},
		{"spot interruptions", simulated.Options{BootDelay: 8 * time.Minute, BootSpread: 2 * time.Minute, SpotShare: 0.5, InterruptionsPerHour: 1}, 0},
		{"a warm tier", simulated.Options{BootDelay: 10 * time.Minute, WarmStart: 3*time.Minute + 20*time.Second}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := actuatortest.NewClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
			opts := tc.opts
			opts.Now, opts.Rand = clock.Now, rand.New(rand.NewPCG(7, 1))
			fleet := simulated.New(opts)
			fleet.AddPool("gpu", 2, 1, 40)
			if err := fleet.SetWarm(ctx, "gpu", tc.warm, "test"); err != nil {
				t.Fatal(err)
			}
			var s control.StartTimes
			r := rand.New(rand.NewPCG(3, 4))
			for minute := range 3 * 24 * 60 {
				c, err := fleet.Capacity(ctx, "gpu")
				if err != nil {
					t.Fatal(err)
				}
				asked := c.Desired
				if minute%45 == 0 {
					asked = 2 + r.IntN(20)
					if err := fleet.SetDesired(ctx, "gpu", asked, "test"); err != nil {
						t.Fatal(err)
					}
				}
				s.Observe(clock.Now(), control.FleetRead{Asked: c.Desired, Ready: c.Ready, Stopped: c.Stopped, StoppedKnown: c.StoppedKnown}, asked)
				clock.Advance(time.Minute)
			}
			kinds := map[control.StartKind]time.Duration{control.ColdBoot: opts.BootDelay}
			if tc.warm > 0 {
				kinds[control.WarmStart] = opts.WarmStart
			}
			for kind, mean := range kinds {
				est, ok := s.Estimate(kind)
				// The log-normal's median is its mean over sqrt(1 + cv²).
				cv := float64(opts.BootSpread) / float64(opts.BootDelay)
				want := time.Duration(float64(mean) / math.Sqrt(1+cv*cv))
				if !ok || math.Abs(float64(est.Median-want)) > 0.1*float64(want) || est.P90 < est.Median {
					t.Errorf("%v: learned %+v (enough: %v), want a median within 10%% of %v", kind, est, ok, want)
				}
				t.Logf("%v: fleet median %v: learned median %v, p90 %v over %d starts", kind, want, est.Median, est.P90, est.Starts)
			}
		})
	}
}

// An increase asked while k instances of a warm tier are stopped starts
// its first min(increase, k) warm and the rest cold, and each kind is
// learned apart; without a stopped count every start is cold. Each
// decision is (minutes since the first, what the read showed, the size
// asked).
func TestStartTimesSplitWarmAndCold(t *testing.T) {
	type decision struct {
		at    int
		read  control.FleetRead
		asked int
	}
	stopped := func(asked, ready, stopped int) control.FleetRead {
		return control.FleetRead{Asked: asked, Ready: ready, Stopped: stopped, StoppedKnown: true}
	}
	type want struct {
		starts int
		median time.Duration
	}
	tests := []struct {
		name       string
		expect     [2]time.Duration // cold, warm
		seq        []decision
		cold, warm want
	}{
		{"5 asked with 3 stopped: 3 warm, 2 cold", [2]time.Duration{},
			// Asked at 0; 3 ready between 0 and 2 (1m), 2 between 2 and 10 (6m).
			[]decision{{0, stopped(2, 2, 3), 7}, {2, stopped(7, 5, 0), 7}, {10, stopped(7, 7, 0), 7}},
			want{2, 6 * time.Minute}, want{3, time.Minute}},
		{"2 asked with 5 stopped: both warm", [2]time.Duration{},
			[]decision{{0, stopped(2, 2, 5), 4}, {2, stopped(4, 4, 3), 4}},
			want{0, 0}, want{2, time.Minute}},
		{"no stopped count known: all cold", [2]time.Duration{},
			[]decision{{0, control.FleetRead{Asked: 2, Ready: 2}, 7}, {2, control.FleetRead{Asked: 7, Ready: 5}, 7}, {10, control.FleetRead{Asked: 7, Ready: 7}, 7}},
			want{5, time.Minute}, want{0, 0}},
		{"an increase asked elsewhere starts warm from what was left stopped", [2]time.Duration{},
			// 3 asked by a scheduled policy between 0 and 1, seen at 1, ready between 1 and 3.
			[]decision{{0, stopped(2, 2, 3), 2}, {1, stopped(5, 2, 0), 5}, {3, stopped(5, 5, 0), 5}},
			want{0, 0}, want{3, time.Minute}},
		{"a warm start asked after a cold boot serves first", [2]time.Duration{10 * time.Minute, time.Minute},
			// 2 cold asked at 0, 1 warm at 5; one ready between 5 and 7 (6: the warm one), two between 7 and 11 (9).
			[]decision{{0, stopped(0, 0, 0), 2}, {5, stopped(2, 0, 1), 3}, {7, stopped(3, 1, 0), 3}, {11, stopped(3, 3, 0), 3}},
			want{2, 9 * time.Minute}, want{1, time.Minute}},
	}
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s control.StartTimes
			s.Expect(tc.expect[0], tc.expect[1])
			for _, d := range tc.seq {
				s.Observe(t0.Add(time.Duration(d.at)*time.Minute), d.read, d.asked)
			}
			for kind, w := range map[control.StartKind]want{control.ColdBoot: tc.cold, control.WarmStart: tc.warm} {
				if est, _ := s.Estimate(kind); est.Starts != w.starts || est.Median != w.median {
					t.Errorf("%v: %+v, want %d starts of median %v", kind, est, w.starts, w.median)
				}
			}
		})
	}
}

// Measured and Restore carry the start times of each kind across a
// restart: the same estimates come back, at most the last 128 positive
// ones of each are kept, and Recorded counts only starts measured after
// the restore.
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
		for _, kind := range []control.StartKind{control.ColdBoot, control.WarmStart} {
			t.Run(tc.name+" "+kind.String(), func(t *testing.T) {
				var s control.StartTimes
				other := []time.Duration{time.Second, 2 * time.Second}
				if kind == control.ColdBoot {
					s.Restore(tc.saved, other)
				} else {
					s.Restore(other, tc.saved)
				}
				got := s.Measured(kind)
				if len(got) != tc.wantN || (tc.wantN > 0 && got[0] != tc.wantFirst) || s.Recorded() != 0 {
					t.Fatalf("restored %d starts (first %v), recorded %d; want %d (first %v), 0", len(got), got, s.Recorded(), tc.wantN, tc.wantFirst)
				}
				var again control.StartTimes
				again.Restore(s.Measured(control.ColdBoot), s.Measured(control.WarmStart))
				for _, k := range []control.StartKind{control.ColdBoot, control.WarmStart} {
					e1, ok1 := s.Estimate(k)
					e2, ok2 := again.Estimate(k)
					if e1 != e2 || ok1 != ok2 {
						t.Errorf("%v: a second round trip estimates %+v %v, want %+v %v", k, e2, ok2, e1, ok1)
					}
				}
			})
		}
	}
	var s control.StartTimes
	s.Restore([]time.Duration{time.Minute}, nil)
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s.Observe(t0, control.FleetRead{Asked: 2, Ready: 2}, 3) // one more asked for
	s.Observe(t0.Add(2*time.Minute), control.FleetRead{Asked: 3, Ready: 3}, 3)
	if s.Recorded() != 1 || len(s.Measured(control.ColdBoot)) != 2 {
		t.Errorf("after one start measured on a restored one: recorded %d, measured %v; want 1 and two starts", s.Recorded(), s.Measured(control.ColdBoot))
	}
}
