package planner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) // a Monday

func at(hhmm string) time.Time {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		panic(err)
	}
	return time.Date(t0.Year(), t0.Month(), t0.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC)
}

// planConfig serves 10 req/s per instance at 100% target, boots in 10m.
func planConfig() Config {
	c := DefaultConfig()
	c.Fleet.RPSPerInstance = 10
	c.TargetUtilisation = 1
	c.Fleet.BootDelay = 10 * time.Minute
	return c
}

// halfHourly builds a forecast from 09:00 in 30-minute steps whose upper
// bounds are upper (mean = upper/2).
func halfHourly(upper ...float64) DemandForecast {
	mean := make([]float64, len(upper))
	for i, u := range upper {
		mean[i] = u / 2
	}
	return DemandForecast{Start: at("09:00"), Step: 30 * time.Minute,
		Forecast: model.Forecast{Mean: mean, Lower: make([]float64, len(upper)), Upper: upper, Level: 0.9}}
}

func TestForecastPlan(t *testing.T) {
	type want struct {
		at      string
		desired int
		reason  string
	}
	cases := []struct {
		name string
		cfg  func(*Config)
		fc   DemandForecast
		now  string
		want []want
	}{
		{
			name: "pre-warms one boot delay before a rise",
			fc:   halfHourly(20, 20, 60, 60),
			now:  "09:00",
			want: []want{{"09:00", 2, "forecast 20 req/s for Mon 2 Mar 09:00 (its 95th percentile) needs 2"},
				{"09:50", 6, "forecast 60 req/s for Mon 2 Mar 10:00 (its 95th percentile) needs 6 (pre-warm 10m)"}},
		},
		{
			name: "scale-in waits until the busy interval has passed",
			fc:   halfHourly(60, 60, 20, 20),
			now:  "09:00",
			want: []want{{"09:00", 6, "forecast 60 req/s"}, {"10:00", 2, "forecast 20 req/s"}},
		},
		{
			name: "a short dip shorter than the lead is not released",
			cfg:  func(c *Config) { c.Fleet.BootDelay = 45 * time.Minute },
			fc:   halfHourly(60, 20, 60, 60),
			now:  "09:00",
			want: []want{{"09:00", 6, "forecast 60 req/s"}},
		},
		{
			name: "min instances floor the plan and say so",
			cfg:  func(c *Config) { c.Fleet.MinInstances = 3 },
			fc:   halfHourly(0, 0),
			now:  "09:00",
			want: []want{{"09:00", 3, "min instances 3"}},
		},
		{
			name: "max instances cap the plan and say so",
			cfg:  func(c *Config) { c.Fleet.MaxInstances = 4 },
			fc:   halfHourly(100, 100),
			now:  "09:00",
			want: []want{{"09:00", 4, "max instances 4"}},
		},
		{
			name: "starts at now, mid-interval",
			fc:   halfHourly(20, 40, 40),
			now:  "09:20",
			want: []want{{"09:20", 4, "(pre-warm 10m)"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig()
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			got, err := ForecastPlan(at(tc.now), tc.fc, c)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d steps %v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if !g.At.Equal(at(w.at)) || g.Desired != w.desired || !strings.Contains(g.Reason, w.reason) {
					t.Errorf("step %d = {%s %d %q}, want {%s %d ~%q}", i, g.At.Format("15:04"), g.Desired, g.Reason, w.at, w.desired, w.reason)
				}
			}
		})
	}
}

func TestForecastPlanEmpty(t *testing.T) {
	_, err := ForecastPlan(t0, DemandForecast{Start: t0, Step: time.Hour}, planConfig())
	if !errors.Is(err, ErrEmptyForecast) {
		t.Errorf("err = %v, want ErrEmptyForecast", err)
	}
}

func TestScheduleAt(t *testing.T) {
	s := Schedule{{At: at("09:00"), Desired: 2}, {At: at("10:00"), Desired: 5}}
	cases := []struct {
		name string
		t    string
		want int
		ok   bool
	}{
		{"before the first step", "08:59", 0, false},
		{"at the first step", "09:00", 2, true},
		{"between steps", "09:59", 2, true},
		{"at a later step", "10:00", 5, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, ok := s.At(at(tc.t))
			if ok != tc.ok || st.Desired != tc.want {
				t.Errorf("At(%s) = %d, %v; want %d, %v", tc.t, st.Desired, ok, tc.want, tc.ok)
			}
		})
	}
}

// With a warm tier the plan asks for running capacity a warm start ahead
// and keeps stopped, a cold boot before that, what it will run beyond it.
func TestForecastPlanWarmTier(t *testing.T) {
	type want struct {
		at            string
		desired, warm int
	}
	cases := []struct {
		name string
		cfg  func(*Config)
		fc   DemandForecast
		want []want
	}{
		{
			name: "no warm tier: a boot ahead, nothing stopped",
			fc:   halfHourly(20, 20, 60, 60),
			want: []want{{"09:00", 2, 0}, {"09:50", 6, 0}},
		},
		{
			name: "a rise is kept warm a boot and a warm start ahead, and run a warm start ahead",
			cfg:  func(c *Config) { c.Fleet.WarmStart = 2 * time.Minute },
			fc:   halfHourly(20, 20, 60, 60),
			want: []want{{"09:00", 2, 0}, {"09:48", 2, 4}, {"09:58", 6, 0}},
		},
		{
			name: "a fall is released a warm start after, into the warm tier",
			cfg:  func(c *Config) { c.Fleet.WarmStart = 2 * time.Minute },
			fc:   halfHourly(60, 60, 20, 20),
			want: []want{{"09:00", 6, 0}, {"10:00", 2, 0}},
		},
		{
			name: "the warm tier stays within max",
			cfg: func(c *Config) {
				c.Fleet.WarmStart = 2 * time.Minute
				c.Fleet.MaxInstances = 4
			},
			fc:   halfHourly(20, 20, 60, 60),
			want: []want{{"09:00", 2, 0}, {"09:48", 2, 2}, {"09:58", 4, 0}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig()
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			s, err := ForecastPlan(at("09:00"), tc.fc, c)
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, st := range s {
				got = append(got, want{st.At.Format("15:04"), st.Desired, st.Warm})
			}
			if len(got) != len(tc.want) {
				t.Fatalf("plan %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("step %d: %+v, want %+v (plan %+v)", i, got[i], tc.want[i], got)
				}
			}
		})
	}
}
