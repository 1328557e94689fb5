package holtwinters

import (
	"math"
	"testing"
)

// TestMultiStepCriterionMatchesBruteForce checks the in-sample j-step
// mean squared errors of the multi-step criterion, computed in one pass
// with rings of past states, against forecasting from every origin
// explicitly (clone the state, run the recursion j steps ahead), for
// linear forms where the one-pass computation is exact.
func TestMultiStepCriterionMatchesBruteForce(t *testing.T) {
	y := synthDouble(24*7, 6, 24, 0.5, 14)
	y[50], y[51] = math.NaN(), math.NaN()
	tests := []struct {
		name string
		spec Spec
	}{
		{"ANN", Spec{}},
		{"AAdN+ar1", Spec{Trend: DampedTrend, AR1: true}},
		{"AAdA double+ar1", Spec{Trend: DampedTrend, Seasonality: Additive, Periods: []int{6, 24}, AR1: true}},
		{"ANA taylor", Spec{Seasonality: Additive, Periods: []int{6}, Update: Taylor}},
	}
	const k = 6
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := initialParams(y, tc.spec)
			p.Alpha, p.Beta, p.Phi, p.AR = 0.3, 0.2, 0.9, 0.5
			for i := range p.Gamma {
				p.Gamma[i] = 0.1
			}
			rec := newRecursion(tc.spec, p)
			st := newState(p, rec.nSeasonal)
			ms := newMultiStep(k, st)
			rec.amse(st, y, ms)

			var sumSq [k + 1]float64
			var counts [k + 1]int
			st = newState(p, rec.nSeasonal)
			for t0 := range y {
				rec.step(st, y[t0]) // st is now the state at origin t0
				fc := st.clone()
				for j := 1; j <= k && t0+j < len(y); j++ {
					f, _ := rec.step(fc, math.NaN())
					if v := y[t0+j]; !math.IsNaN(v) {
						sumSq[j] += (v - f) * (v - f)
						counts[j]++
					}
				}
			}
			for j := 1; j <= k; j++ {
				if ms.counts[j] != counts[j] {
					t.Fatalf("horizon %d: %d errors scored, brute force %d", j, ms.counts[j], counts[j])
				}
				if !relClose(ms.sumSq[j], sumSq[j], 1e-9) {
					t.Fatalf("horizon %d: sum of squares %.12g, brute force %.12g", j, ms.sumSq[j], sumSq[j])
				}
			}
		})
	}
}
