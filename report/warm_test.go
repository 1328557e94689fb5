package report

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

// With a warm_start the report's plan says what it keeps stopped: the
// most and the mean instances, the stopped instance-hours summed over its
// decisions and their cost at prices.stopped_per_hour, in the JSON and in
// both renderings; without one it says nothing of a warm tier.
func TestReportShowsTheWarmTier(t *testing.T) {
	cases := []struct {
		name      string
		warmStart time.Duration
	}{
		{"no warm tier", 0},
		{"a warm tier starting in 90s", 90 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := syntheticInput(t, 21)
			in.PlanOnly, in.Horizon = true, 2*24*time.Hour
			in.Backtest.Planner.Fleet.WarmStart = c.warmStart
			rep, err := Build(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"md", "html"} {
				var b strings.Builder
				if err := Render(&b, rep, format); err != nil {
					t.Fatal(err)
				}
				if shown := strings.Contains(b.String(), "Warm tier"); shown != (c.warmStart > 0) {
					t.Errorf("%s: shows a warm tier: %v, want %v", format, shown, c.warmStart > 0)
				}
			}
			w := rep.Plan.Warm
			if c.warmStart == 0 {
				if w != nil {
					t.Errorf("a fleet without warm_start has a warm tier in its plan: %+v", *w)
				}
				return
			}
			if w == nil || w.Peak <= 0 || time.Duration(w.WarmStart) != c.warmStart {
				t.Fatalf("warm tier %+v: want stopped instances kept, starting in %v", w, c.warmStart)
			}
			hours := rep.Plan.End.Sub(rep.Plan.Start).Hours()
			if !(w.Mean > 0 && w.Mean <= float64(w.Peak)) || math.Abs(w.StoppedHours-w.Mean*hours) > 1e-6*w.StoppedHours {
				t.Errorf("mean %v over %v h and %v stopped hours do not agree with a peak of %d", w.Mean, hours, w.StoppedHours, w.Peak)
			}
			if want := w.StoppedHours * in.Backtest.Planner.Prices.StoppedPerHour; math.Abs(w.Cost-want) > 1e-9*want || w.PricePerHour != in.Backtest.Planner.Prices.StoppedPerHour {
				t.Errorf("cost %v at %v an hour, want %v", w.Cost, w.PricePerHour, want)
			}
		})
	}
}
