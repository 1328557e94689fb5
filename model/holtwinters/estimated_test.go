package holtwinters

import (
	"testing"
)

// sseMargin is how much larger than the reference's SSE an estimated fit's
// SSE may be: 1%. Like statsmodels ("estimated") and ets, Fit estimates
// the initial states too (by least squares, alternating with the
// parameter search).
const sseMargin = 1.01

// TestFitSSEComparableToReferences compares the SSE of estimated fits with
// statsmodels' (initialization_method="estimated") and R ets' (restrict =
// FALSE, so the A,·,M forms are allowed) on the
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
			if !m.Converged() || m.Evaluations() == 0 {
				t.Errorf("search did not converge (status %v, %d evaluations)", m.status, m.Evaluations())
			}
			ref := min(sm.EstimatedSSE[name], r.ETSSSE[name])
			if spec.Trend == DampedTrend {
				// statsmodels lets φ reach 0.995; ets and Fit stop at 0.98.
				ref = r.ETSSSE[name]
			}
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
		if !m.Converged() {
			t.Errorf("search did not converge (status %v, %d evaluations)", m.status, m.Evaluations())
		}
		ref := r.DSHWEstimated.MSE * float64(len(r.Y))
		t.Logf("dshw form: SSE %.3f, dshw %.3f; params %+v", m.SSE(), ref, m.Params().Gamma)
		// dshw's search starts at small α and stops in a local minimum
		// far above Fit's.
		if m.SSE() > ref {
			t.Errorf("SSE %.3f > dshw's %.3f", m.SSE(), ref)
		}
	})
}

// TestStallIterationsStopsSooner: a search allowed fewer iterations
// without improvement stops with fewer evaluations, and a value out of
// range (or 0) runs the default of 5 per parameter.
func TestStallIterationsStopsSooner(t *testing.T) {
	y := synthDouble(24*28, 24, 168, 0.3, 9)
	spec := Spec{Trend: DampedTrend, Seasonality: Additive, Periods: []int{24}}
	evals := func(stall int) int {
		m, err := FitOptions{Horizon: 12, KeepInitial: true, StallIterations: stall}.Fit(y, spec)
		if err != nil {
			t.Fatal(err)
		}
		return m.Evaluations()
	}
	def := evals(0)
	tests := []struct {
		stall int
		want  func(n int) bool
		what  string
	}{
		{1, func(n int) bool { return n < def }, "fewer than the default's"},
		{3, func(n int) bool { return n < def }, "fewer than the default's"},
		{5, func(n int) bool { return n == def }, "the default's"},
		{101, func(n int) bool { return n == def }, "the default's (out of range)"},
		{-1, func(n int) bool { return n == def }, "the default's (out of range)"},
	}
	for _, tt := range tests {
		if n := evals(tt.stall); !tt.want(n) {
			t.Errorf("StallIterations %d: %d evaluations, want %s (%d)", tt.stall, n, tt.what, def)
		}
	}
}

// TestPointOnlyKeepsThePointForecast: skipping the in-sample multi-step
// errors changes neither the estimates nor the point forecasts, only
// where the interval's variance comes from.
func TestPointOnlyKeepsThePointForecast(t *testing.T) {
	y := synthDouble(24*28, 24, 168, 0.3, 4)
	for _, spec := range []Spec{
		{Seasonality: Additive, Periods: []int{24}},
		{Trend: DampedTrend, Seasonality: Multiplicative, Periods: []int{24}},
	} {
		full, err := FitOptions{Horizon: 12}.Fit(y, spec)
		if err != nil {
			t.Fatal(err)
		}
		point, err := FitOptions{Horizon: 12, PointOnly: true}.Fit(y, spec)
		if err != nil {
			t.Fatal(err)
		}
		if full.stepMSE == nil || point.stepMSE != nil {
			t.Fatalf("%v: step errors %v with, %v without PointOnly", spec, point.stepMSE, full.stepMSE)
		}
		if fp, pp := full.Params(), point.Params(); fp.Alpha != pp.Alpha || fp.Level0 != pp.Level0 || full.AICc() != point.AICc() {
			t.Errorf("%v: PointOnly changed the estimates: %+v against %+v", spec, pp, fp)
		}
		ff, err := full.Forecast(24, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := point.Forecast(24, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		for k := range ff.Mean {
			if ff.Mean[k] != pf.Mean[k] {
				t.Fatalf("%v: step %d mean %v with PointOnly, %v without", spec, k, pf.Mean[k], ff.Mean[k])
			}
		}
	}
}
