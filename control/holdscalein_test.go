package control

import (
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
)

// With ScaleInOnForecast false (scale_in_on_forecast: false) the forecast
// alone does not lower the pool; the reactive rules' idle spell does, one
// scale-in step at a time.
func TestHoldForecastScaleIn(t *testing.T) {
	now := t0.Add(10 * time.Hour)
	drop := planner.Step{At: now, Desired: 10, Reason: "forecast: 95 req/s"}
	tests := []struct {
		name             string
		hold             bool
		step             planner.Step
		lastOut, lastAny time.Time
		want             int
	}{
		{"allowed: the forecast scales in", false, drop, time.Time{}, time.Time{}, 10},
		{"refused: no idle spell", true, drop, time.Time{}, time.Time{}, 20},
		{"refused: the reactive rules scaled out now", true, drop, now, now, 20},
		{"idle spell: one step down", true, drop, time.Time{}, now, 19},
		{"rising is never held", true, planner.Step{At: now, Desired: 25, Reason: "forecast"}, time.Time{}, time.Time{}, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPlanner()
			p.ScaleInOnForecast = !tt.hold
			c, err := New(p, hourly(func([]int) model.Forecaster { return constant(100) }))
			if err != nil {
				t.Fatal(err)
			}
			c.reactive.LastOut, c.reactive.LastAction = tt.lastOut, tt.lastAny
			if got := c.holdScaleIn(tt.step, now, 20); got.Desired != tt.want {
				t.Errorf("desired %d (%s), want %d", got.Desired, got.Reason, tt.want)
			}
		})
	}
}
