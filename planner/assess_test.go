package planner

import (
	"math"
	"testing"

	"github.com/prewarm/prewarm/model"
)

// constForecaster forecasts a constant and records the longest history it
// was given.
type constForecaster struct {
	v       float64
	longest *int
}

func (c constForecaster) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	if c.longest != nil {
		*c.longest = max(*c.longest, len(history))
	}
	m := make([]float64, horizon)
	for i := range m {
		m[i] = c.v
	}
	return model.Forecast{Mean: m, Upper: m, Lower: m, Level: level}, nil
}

func TestAssess(t *testing.T) {
	// A period-4 pattern 0,10,0,10,... : seasonal naive (period 2 or 4)
	// is exact, a constant 5 is off by 5 everywhere.
	x := make([]float64, 40)
	for i := range x {
		x[i] = float64(10 * (i % 2))
	}
	longest := 0
	in, err := Assess(x, 2, 4, 8, 3, 0.9, constForecaster{v: 5, longest: &longest}, constForecaster{v: 10})
	if err != nil {
		t.Fatal(err)
	}
	if in.ModelError != 5 || in.NaiveError != 0 || in.ProfileError != 5 || in.HistorySteps != 40 {
		t.Errorf("Assess = %+v, want model 5, profile 5, naive 0 over 40 steps", in)
	}
	if longest != 38 {
		t.Errorf("the longest history was %d steps, want 38: origins 32, 35, 38 (window 8, chunks of 3)", longest)
	}
	if g := planConfig().Gate(in); g.Level != GateReactive {
		t.Errorf("both worse than naive: gate %s, want reactive", g.Level)
	}
	short, _ := Assess(x[:3], 2, 4, 8, 3, 0.9, constForecaster{v: 5}, nil)
	if !math.IsNaN(short.ModelError) || !math.IsNaN(short.NaiveError) {
		t.Errorf("too short to assess: %+v, want NaN errors", short)
	}
}
