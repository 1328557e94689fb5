package holtwinters

import (
	"testing"
)

// sseMargin is how much larger than the reference's SSE an estimated fit's
// SSE may be. The references also optimise the initial states (statsmodels
// "estimated", ets) or use their own (dshw); Fit takes them from a
// decomposition, which costs a little on short series.
const sseMargin = 1.10

// TestFitSSEComparableToReferences compares the SSE of estimated fits with
// statsmodels' (initialization_method="estimated") and R ets' on the
// 144-point monthly series, and with dshw's on the 4-week hourly series
// (fixtures: testdata/statsmodels_fixed.py, testdata/r_reference.R).
func TestFitSSEComparableToReferences(t *testing.T) {
	var sm statsmodelsFixture
	readJSON(t, "statsmodels_fixed.json", &sm)
	var r rFixture
	readJSON(t, "r_reference.json", &r)
	forms := map[string]Spec{
		"ANN":  {},
		"AAN":  {Trend: AdditiveTrend},
		"AAdN": {Trend: DampedTrend},
		"ANA":  {Seasonality: Additive, Periods: []int{12}},
		"AAA":  {Trend: AdditiveTrend, Seasonality: Additive, Periods: []int{12}},
		"AAdA": {Trend: DampedTrend, Seasonality: Additive, Periods: []int{12}},
		"ANM":  {Seasonality: Multiplicative, Periods: []int{12}},
		"AAM":  {Trend: AdditiveTrend, Seasonality: Multiplicative, Periods: []int{12}},
		"AAdM": {Trend: DampedTrend, Seasonality: Multiplicative, Periods: []int{12}},
	}
	for name, spec := range forms {
		t.Run(name, func(t *testing.T) {
			m, err := Fit(sm.Y, spec)
			if err != nil {
				t.Fatal(err)
			}
			ref := min(sm.EstimatedSSE[name], r.ETSSSE[name])
			t.Logf("%s: SSE %.2f, statsmodels %.2f, ets %.2f", name, m.SSE(), sm.EstimatedSSE[name], r.ETSSSE[name])
			if m.SSE() > sseMargin*ref {
				t.Errorf("SSE %.2f > %.2f × best reference %.2f", m.SSE(), sseMargin, ref)
			}
		})
	}
	t.Run("dshw", func(t *testing.T) {
		spec := Spec{Trend: AdditiveTrend, Seasonality: Multiplicative, Periods: []int{24, 168}, AR1: true, Update: Taylor}
		m, err := Fit(r.Y, spec)
		if err != nil {
			t.Fatal(err)
		}
		ref := r.DSHWEstimated.MSE * float64(len(r.Y))
		t.Logf("dshw form: SSE %.3f, dshw %.3f; params %+v", m.SSE(), ref, m.Params().Gamma)
		if m.SSE() > sseMargin*ref {
			t.Errorf("SSE %.3f > %.2f × dshw's %.3f", m.SSE(), sseMargin, ref)
		}
	})
}
