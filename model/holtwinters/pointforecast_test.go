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

// PointForecastRestarted keeps the estimated smoothing parameters and
// derives the initial states from the window it is given: on the history
// the model was estimated on (with KeepInitial) it is PointForecast, and
// on a window that starts part of a cycle later it keeps the seasonal
// indices in phase, where PointForecast, which keeps the estimation's
// initial states, puts them out of phase.
func TestPointForecastRestartedKeepsPhase(t *testing.T) {
	const day, week, h = 24, 168, 24
	y := synthDouble(24*70, day, week, 0.2, 3)
	specs := []Spec{
		{Seasonality: Additive, Periods: []int{day}},
		{Trend: DampedTrend, Seasonality: Multiplicative, Periods: []int{day}},
		{Seasonality: Additive, Periods: []int{day, week}, AR1: true},
		{Seasonality: Additive, Periods: []int{day}, BoxCox: Lambda(0)},
		{Trend: DampedTrend},
	}
	for _, spec := range specs {
		t.Run(spec.String(), func(t *testing.T) {
			fitOn := y[:24*42]
			m, err := FitOptions{Horizon: h, Tolerance: 1e-3, KeepInitial: true}.Fit(fitOn, spec)
			if err != nil {
				t.Fatal(err)
			}
			same, err := m.PointForecastRestarted(fitOn, h)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := m.PointForecast(fitOn, h)
			if err != nil {
				t.Fatal(err)
			}
			for j := range same {
				if math.Abs(same[j]-kept[j]) > 1e-9*math.Max(1, math.Abs(kept[j])) {
					t.Fatalf("on the estimation's history, step %d: restarted %v, PointForecast %v", j, same[j], kept[j])
				}
			}
			// A window of the same length starting 7 steps (part of a
			// day) later, forecast against the series that follows it.
			const shift = 7
			window := y[shift : shift+len(fitOn)]
			actual := y[shift+len(fitOn) : shift+len(fitOn)+h]
			restarted, err := m.PointForecastRestarted(window, h)
			if err != nil {
				t.Fatal(err)
			}
			stale, err := m.PointForecast(window, h)
			if err != nil {
				t.Fatal(err)
			}
			mae := func(f []float64) float64 {
				s := 0.0
				for j, a := range actual {
					s += math.Abs(f[j] - a)
				}
				return s / float64(len(actual))
			}
			t.Logf("shifted window: MAE %.3f restarted, %.3f with the estimation's initial states", mae(restarted), mae(stale))
			if !spec.seasonal() {
				return // no phase to keep
			}
			// The noise is 0.2 a step; a forecast in phase stays within
			// a few of it.
			if got := mae(restarted); got > 0.6 {
				t.Errorf("restarted on a shifted window: MAE %.3f, want ≤ 0.6", got)
			}
			if mae(stale) < 2*mae(restarted) {
				t.Errorf("the shifted window does not test the phase: the estimation's initial states score %.3f, restarted %.3f", mae(stale), mae(restarted))
			}
		})
	}
}
