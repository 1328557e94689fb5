package holtwinters

import "testing"

func BenchmarkTmpMinuteSSE(b *testing.B) {
	y := synthDouble(40320, 1440, 10080, 0.3, 3)
	for _, s := range []Seasonality{Additive, Multiplicative} {
		spec := Spec{Seasonality: s, Periods: []int{1440, 10080}, AR1: true}
		p := initialParams(y, spec)
		rec := newRecursion(spec, p)
		st := newState(p, rec.nSeasonal)
		b.Run(s.String(), func(b *testing.B) {
			for b.Loop() {
				st.reset(p)
				rec.sse(st, y, nil)
			}
		})
	}
}
