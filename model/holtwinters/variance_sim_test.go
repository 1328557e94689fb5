package holtwinters

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAnalyticVarianceMatchesSimulation checks the model's own k-step
// forecast mean and variance (Hyndman et al. 2008, class 1 for the linear
// forms; the delta method for multiplicative seasonality), without the
// in-sample multi-step errors that Forecast prefers where it has them,
// against 20,000 futures simulated from the fitted model's final state
// with Gaussian innovations of variance Sigma2 (fixed seeds). Tolerances:
// the simulated variance has a relative standard error of √(2/20000) = 1%,
// so 4% for the linear forms (where the formula is exact) and 8% for the
// multiplicative one (where it is a linearisation); the mean within four
// standard errors.
func TestAnalyticVarianceMatchesSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation study skipped in -short mode")
	}
	tests := []struct {
		name   string
		spec   Spec
		p      Params
		relTol float64
	}{
		{"ANN", Spec{}, Params{Alpha: 0.4, Level0: 100}, 0.04},
		{"AAN", Spec{Trend: AdditiveTrend}, Params{Alpha: 0.3, Beta: 0.2, Phi: 1, Level0: 100, Trend0: 0.5}, 0.04},
		{"AAdN+ar1", Spec{Trend: DampedTrend, AR1: true}, Params{Alpha: 0.3, Beta: 0.2, Phi: 0.9, AR: 0.5, Level0: 100, Trend0: 1}, 0.04},
		{"AAA", Spec{Trend: AdditiveTrend, Seasonality: Additive, Periods: []int{12}},
			Params{Alpha: 0.2, Beta: 0.1, Phi: 1, Gamma: []float64{0.3}, Level0: 100, Trend0: 0.2, Seasonal0: [][]float64{sinIndices(12, 10, 0)}}, 0.04},
		{"AAdA double+ar1", Spec{Trend: DampedTrend, Seasonality: Additive, Periods: []int{6, 12}, AR1: true},
			Params{Alpha: 0.2, Beta: 0.1, Phi: 0.9, Gamma: []float64{0.2, 0.3}, AR: -0.4, Level0: 100, Seasonal0: [][]float64{sinIndices(6, 5, 0), sinIndices(12, 3, 0)}}, 0.04},
		{"ANA taylor", Spec{Seasonality: Additive, Periods: []int{12}, Update: Taylor},
			Params{Alpha: 0.3, Gamma: []float64{0.4}, Level0: 100, Seasonal0: [][]float64{sinIndices(12, 10, 0)}}, 0.04},
		{"AAM", Spec{Trend: AdditiveTrend, Seasonality: Multiplicative, Periods: []int{12}},
			Params{Alpha: 0.3, Beta: 0.1, Phi: 1, Gamma: []float64{0.2}, Level0: 100, Trend0: 0.2, Seasonal0: [][]float64{sinIndices(12, 0.2, 1)}}, 0.08},
	}
	const (
		n    = 120
		h    = 30
		reps = 20000
	)
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ti)+7, 2026))
			y := simulate(tc.spec, tc.p, n, 2, rng)
			mod, err := FitWith(y, tc.spec, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			mod.stepMSE = nil // the model's own variance only
			mean := make([]float64, h)
			st := mod.final.clone()
			for k := range mean {
				mean[k], _ = mod.rec.step(st, math.NaN())
			}
			v := mod.variances(mean)
			sd := math.Sqrt(mod.Sigma2())
			var sum, sumSq [h]float64
			for range reps {
				st.copyFrom(mod.final)
				for k := range h {
					eps := sd * rng.NormFloat64()
					yhat, _ := mod.rec.stepNoise(st, math.NaN(), eps)
					d := yhat + eps - mean[k]
					sum[k] += d
					sumSq[k] += d * d
				}
			}
			for k := range h {
				bias := sum[k] / reps
				simVar := sumSq[k]/reps - bias*bias
				if math.Abs(bias) > 4*math.Sqrt(simVar/reps) {
					t.Errorf("step %d: simulated mean differs from the point forecast by %.4g (sd %.4g)", k+1, bias, math.Sqrt(simVar))
				}
				if math.Abs(v[k]/simVar-1) > tc.relTol {
					t.Errorf("step %d: analytic variance %.5g, simulated %.5g (ratio %.3f)", k+1, v[k], simVar, v[k]/simVar)
				}
			}
			t.Logf("step %d: analytic variance %.4g, simulated %.4g", h, v[h-1], sumSq[h-1]/reps)
		})
	}
}
