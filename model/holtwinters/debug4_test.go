package holtwinters

import (
	"encoding/json"
	"os"
	"testing"
)

// Dumps per-series metrics and AICc of 8 candidates for offline selection analysis.
func TestDebugDump(t *testing.T) {
	train := readM4(t, "Hourly-train.csv")
	test := readM4(t, "Hourly-test.csv")
	p := []int{24, 168}
	type rec struct {
		Name                        string
		AICc, AMSE                  float64
		SMAPE, MASE, MSIS, Coverage float64
	}
	var out [][]rec
	for i := range train {
		var row []rec
		for _, lam := range []*float64{nil, Lambda(0)} {
			for _, s := range []Seasonality{Additive, Multiplicative} {
				for _, tr := range []Trend{NoTrend, DampedTrend} {
					spec := Spec{Trend: tr, Seasonality: s, Periods: p, AR1: true, BoxCox: lam}
					m, err := FitOptions{Horizon: 24}.Fit(train[i], spec)
					if err != nil {
						row = append(row, rec{Name: spec.String(), AICc: 1e300})
						continue
					}
					f, err := m.forecast(48, 0.95, 1.3)
					if err != nil {
						row = append(row, rec{Name: spec.String(), AICc: 1e300})
						continue
					}
					var sc m4Scores
					sc.add(train[i], test[i], f)
					row = append(row, rec{spec.String(), m.AICc(), m.amseAt(), sc.smape, sc.mase, sc.msis, sc.covered / sc.steps})
				}
			}
		}
		var sn m4Scores
		sn.add(train[i], test[i], seasonalNaive(train[i], 24, 48, 0.95))
		row = append(row, rec{"snaive", 1e300, 0, sn.smape, sn.mase, sn.msis, sn.covered / sn.steps})
		out = append(out, row)
	}
	b, _ := json.Marshal(out)
	os.WriteFile("/tmp/hw_dump.json", b, 0o644)
}
