package holtwinters

import "testing"

func TestDebugParams(t *testing.T) {
	var sm statsmodelsFixture
	readJSON(t, "statsmodels_fixed.json", &sm)
	for _, spec := range []Spec{
		{Trend: DampedTrend, Seasonality: Additive, Periods: []int{12}},
		{Seasonality: Multiplicative, Periods: []int{12}},
		{Trend: DampedTrend, Seasonality: Multiplicative, Periods: []int{12}},
	} {
		m, _ := Fit(sm.Y, spec)
		p := m.Params()
		t.Logf("%v sse=%.2f a=%.4f b=%.4f phi=%.4f g=%.4f l0=%.3f b0=%.4f evals=%d", spec, m.SSE(), p.Alpha, p.Beta, p.Phi, p.Gamma, p.Level0, p.Trend0, m.evals)
	}
}
