package holtwinters

import (
	"errors"
	"math"
	"testing"
)

// PointForecast over a prefix of the history is FitWith on that prefix
// followed by Forecast, to rounding, for every form family.
func TestPointForecastMatchesFitWith(t *testing.T) {
	y := synthDouble(24*40, 24, 168, 0.3, 9)
	specs := []Spec{
		{},
		{Trend: DampedTrend},
		{Seasonality: Additive, Periods: []int{24}},
		{Trend: DampedTrend, Seasonality: Multiplicative, Periods: []int{24}},
		{Seasonality: Additive, Periods: []int{24, 168}, AR1: true},
		{Seasonality: Additive, Periods: []int{24}, BoxCox: Lambda(0)},
	}
	for _, spec := range specs {
		t.Run(spec.String(), func(t *testing.T) {
			m, err := FitOptions{Horizon: 24, Tolerance: 1e-3, KeepInitial: true}.Fit(y, spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, cut := range []int{0, 48, 200} {
				prefix := y[:len(y)-cut]
				got, err := m.PointForecast(prefix, 30)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := FitWith(prefix, spec, m.Params())
				if err != nil {
					t.Fatal(err)
				}
				want, err := ref.Forecast(30, 0.9)
				if err != nil {
					t.Fatal(err)
				}
				for j := range got {
					if math.Abs(got[j]-want.Mean[j]) > 1e-9*math.Max(1, math.Abs(want.Mean[j])) {
						t.Fatalf("cut %d step %d: %v, FitWith+Forecast %v", cut, j, got[j], want.Mean[j])
					}
				}
			}
		})
	}
	m, _ := Fit(y, Spec{Seasonality: Additive, Periods: []int{168}})
	if _, err := m.PointForecast(y[:100], 5); !errors.Is(err, ErrTooShort) {
		t.Errorf("short prefix: err = %v, want ErrTooShort", err)
	}
	if _, err := m.PointForecast(y, 0); err == nil {
		t.Error("horizon 0 accepted")
	}
}

// A looser tolerance and kept initial states cost fewer evaluations and
// fit about as well.
func TestFitOptionsCheaperSearch(t *testing.T) {
	y := synthDouble(24*30, 24, 168, 0.3, 10)
	spec := Spec{Trend: DampedTrend, Seasonality: Additive, Periods: []int{24}}
	full, err := FitOptions{Horizon: 24}.Fit(y, spec)
	if err != nil {
		t.Fatal(err)
	}
	cheap, err := FitOptions{Horizon: 24, Tolerance: 1e-3, KeepInitial: true, ScoredHorizons: 4}.Fit(y, spec)
	if err != nil {
		t.Fatal(err)
	}
	if cheap.Evaluations() >= full.Evaluations() {
		t.Errorf("cheap search took %d evaluations, the default %d", cheap.Evaluations(), full.Evaluations())
	}
	if cheap.SSE() > 1.5*full.SSE() {
		t.Errorf("cheap search SSE %.4g, default %.4g", cheap.SSE(), full.SSE())
	}
}
