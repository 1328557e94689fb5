package holtwinters

import (
	"math"
	"math/rand/v2"
	"testing"
)

// simulate draws n observations from spec with parameters p and Gaussian
// innovations of standard deviation sd, by running the model's own
// recursion with random errors.
func simulate(spec Spec, p Params, n int, sd float64, rng *rand.Rand) []float64 {
	rec := newRecursion(spec, p)
	st := newState(p, rec.nSeasonal)
	y := make([]float64, n)
	for t := range y {
		eps := sd * rng.NormFloat64()
		yhat, _ := rec.stepNoise(st, math.NaN(), eps)
		y[t] = yhat + eps
	}
	return y
}

func sinIndices(m int, amp, center float64) []float64 {
	s := make([]float64, m)
	for j := range s {
		s[j] = center + amp*math.Sin(2*math.Pi*float64(j)/float64(m))
	}
	return s
}

// TestIntervalCoverageSimulated fits each form to series simulated from a
// known model of that form and checks that the 95% interval of
// Model.Forecast covers 93–97% of the simulated futures (300 series × 12
// steps each, fixed seeds).
func TestIntervalCoverageSimulated(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation study skipped in -short mode")
	}
	tests := []struct {
		name string
		spec Spec
		p    Params
		sd   float64
	}{
		{"ANN", Spec{}, Params{Alpha: 0.4, Level0: 100}, 2},
		{"AAdN", Spec{Trend: DampedTrend}, Params{Alpha: 0.3, Beta: 0.2, Phi: 0.9, Level0: 100, Trend0: 1}, 2},
		{"ANA", Spec{Seasonality: Additive, Periods: []int{12}},
			Params{Alpha: 0.3, Gamma: []float64{0.1}, Level0: 100, Seasonal0: [][]float64{sinIndices(12, 10, 0)}}, 2},
		{"AAA", Spec{Trend: AdditiveTrend, Seasonality: Additive, Periods: []int{12}},
			Params{Alpha: 0.2, Beta: 0.1, Phi: 1, Gamma: []float64{0.1}, Level0: 100, Trend0: 0.2, Seasonal0: [][]float64{sinIndices(12, 10, 0)}}, 2},
		{"ANM", Spec{Seasonality: Multiplicative, Periods: []int{12}},
			Params{Alpha: 0.3, Gamma: []float64{0.1}, Level0: 100, Seasonal0: [][]float64{sinIndices(12, 0.2, 1)}}, 2},
		{"ANA double + AR1", Spec{Seasonality: Additive, Periods: []int{6, 24}, AR1: true},
			Params{Alpha: 0.2, Gamma: []float64{0.1, 0.1}, AR: 0.5, Level0: 100, Seasonal0: [][]float64{sinIndices(6, 5, 0), sinIndices(24, 3, 0)}}, 2},
	}
	const (
		reps  = 300
		n     = 240
		h     = 12
		level = 0.95
	)
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ti)+1, 99))
			var covered, total int
			for range reps {
				y := simulate(tc.spec, tc.p, n+h, tc.sd, rng)
				m, err := Fit(y[:n], tc.spec)
				if err != nil {
					t.Fatal(err)
				}
				fc, err := m.Forecast(h, level)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range y[n:] {
					if v >= fc.Lower[k] && v <= fc.Upper[k] {
						covered++
					}
					total++
				}
			}
			cov := float64(covered) / float64(total)
			t.Logf("coverage of the %.0f%% interval: %.3f", 100*level, cov)
			if cov < 0.93 || cov > 0.97 {
				t.Errorf("coverage %.3f outside [0.93, 0.97]", cov)
			}
		})
	}
}
