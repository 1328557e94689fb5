package holtwinters

import "testing"

// BenchmarkCriterion times one evaluation of the one-step SSE and of the
// 24-step criterion on 960 hourly points with periods 24 and 168.
func BenchmarkCriterion(b *testing.B) {
	y := synthDouble(960, 24, 168, 0.3, 4)
	spec := Spec{Seasonality: Additive, Periods: []int{24, 168}, AR1: true}
	p := initialParams(y, spec)
	p.AR = 0.5
	rec := newRecursion(spec, p)
	st := newState(p, rec.nSeasonal)
	b.Run("sse", func(b *testing.B) {
		for b.Loop() {
			st.reset(p)
			rec.sse(st, y)
		}
	})
	b.Run("amse24", func(b *testing.B) {
		ms := newMultiStep(24, st)
		for b.Loop() {
			st.reset(p)
			rec.amse(st, y, ms)
		}
	})
}
