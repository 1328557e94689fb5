package holtwinters

import (
	"testing"
	"time"
)

func TestDebugM4(t *testing.T) {
	train := readM4(t, "Hourly-train.csv")
	test := readM4(t, "Hourly-test.csv")
	specs := []Spec{
		{Seasonality: Additive, Periods: []int{24, 168}, AR1: true},
		{Seasonality: Multiplicative, Periods: []int{24, 168}, AR1: true},
		{Trend: AdditiveTrend, Seasonality: Multiplicative, AR1: true, Update: Taylor, Periods: []int{24, 168}},
	}
	dshwStart := &Params{Alpha: 0.1, Beta: 0.01, Gamma: []float64{0.001, 0.001}}
	for _, opts := range []FitOptions{{}, {RefineInitial: true}, {Horizon: 24}, {Horizon: 24, RefineInitial: true}} {
		for _, spec := range specs {
			var sc m4Scores
			start := time.Now()
			for i := 0; i < 20; i++ {
				m, err := opts.Fit(train[i], spec)
				if err != nil {
					t.Fatal(err)
				}
				fc, err := m.Forecast(48, 0.95)
				if err != nil {
					t.Fatal(err)
				}
				sc.add(train[i], test[i], fc)
			}
			t.Logf("h=%d refine=%v %v: %v %v", opts.Horizon, opts.RefineInitial, spec, &sc, time.Since(start).Round(time.Millisecond))
		}
	}
}
