package holtwinters

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAutoCandidates(t *testing.T) {
	pos := []float64{1, 2, 3}
	withZero := []float64{1, 0, 3}
	tests := []struct {
		name    string
		opts    AutoOptions
		y       []float64
		periods []int
		want    int
	}{
		{"default seasonal positive", AutoOptions{}, pos, []int{24, 168}, 4}, // {N,Ad} × {raw, log}
		{"default seasonal with zeros", AutoOptions{}, withZero, []int{24}, 2},
		{"default non-seasonal", AutoOptions{}, pos, nil, 4},
		{"ets positive", ETSOptions(), pos, []int{12}, 9},
		{"ets with zeros", ETSOptions(), withZero, []int{12}, 6},
		{"ets non-seasonal", ETSOptions(), pos, nil, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.opts.candidates(tc.y, tc.periods)
			if len(got) != tc.want {
				t.Errorf("%d candidates %v, want %d", len(got), got, tc.want)
			}
		})
	}
}

// TestAutoPicksTheSimulatingForm checks that Auto's AICc choice among the
// ets candidates recovers the components of the model that generated the
// data.
func TestAutoPicksTheSimulatingForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	tests := []struct {
		name string
		spec Spec
		p    Params
	}{
		{"level only", Spec{}, Params{Alpha: 0.3, Level0: 100}},
		{"trend", Spec{Trend: AdditiveTrend}, Params{Alpha: 0.3, Beta: 0.1, Phi: 1, Level0: 100, Trend0: 2}},
		{"additive seasonality", Spec{Seasonality: Additive, Periods: []int{12}},
			Params{Alpha: 0.2, Gamma: []float64{0.1}, Level0: 100, Seasonal0: [][]float64{sinIndices(12, 15, 0)}}},
		{"multiplicative seasonality", Spec{Seasonality: Multiplicative, Periods: []int{12}},
			Params{Alpha: 0.2, Gamma: []float64{0.1}, Level0: 100, Seasonal0: [][]float64{sinIndices(12, 0.4, 1)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := simulate(tc.spec, tc.p, 240, 1, rng)
			m, err := Auto(y, []int{12}, ETSOptions())
			if err != nil {
				t.Fatal(err)
			}
			got := m.Spec()
			if got.Seasonality != tc.spec.Seasonality || (got.Trend == NoTrend) != (tc.spec.Trend == NoTrend) {
				t.Errorf("Auto chose %v for data from %v", got, tc.spec)
			}
		})
	}
}

func TestAutoErrors(t *testing.T) {
	if _, err := Auto([]float64{1, 2}, []int{24}, AutoOptions{}); err == nil {
		t.Error("Auto on 2 points: no error")
	}
	if _, err := Auto([]float64{math.NaN(), math.NaN(), math.NaN()}, nil, AutoOptions{}); err == nil {
		t.Error("Auto on NaNs: no error")
	}
}
