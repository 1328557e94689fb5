package holtwinters

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzForecaster feeds arbitrary series (any float64 bit pattern,
// including NaN, ±Inf, huge and tiny values) through Fit, Auto and the
// Forecaster: none may panic, and every forecast the Forecaster returns
// must be finite. Run: go test -run='^$' -fuzz=FuzzForecaster -fuzztime=20s
func FuzzForecaster(f *testing.F) {
	seed := func(v ...float64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		return b
	}
	f.Add(seed(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), uint8(4))
	f.Add(seed(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1), uint8(4))
	f.Add(seed(1e300, -1e300, 1e-300, math.NaN(), 5, 5, 5, 5), uint8(2))
	f.Add(seed(3, 3, 3, 3, 3, 3, 3, 3.0000001), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, period uint8) {
		y := make([]float64, len(data)/8)
		for i := range y {
			y[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
		periods := []int{int(period%8) + 2}
		for _, spec := range []Spec{
			{},
			{Trend: DampedTrend, Seasonality: Additive, Periods: periods, AR1: true},
			{Trend: AdditiveTrend, Seasonality: Multiplicative, Periods: periods, BoxCox: Lambda(0.5)},
		} {
			if m, err := Fit(y, spec); err == nil {
				_, _ = m.Forecast(5, 0.9) // may fail, must not panic
			}
		}
		fc, err := Forecaster{Periods: periods}.Forecast(y, 5, 0.9)
		if err != nil {
			return
		}
		for k := range fc.Mean {
			if isNaNOrInf(fc.Mean[k]) || isNaNOrInf(fc.Lower[k]) || isNaNOrInf(fc.Upper[k]) {
				t.Fatalf("y=%v: step %d not finite: %v [%v, %v] (%s; %s)", y, k+1, fc.Mean[k], fc.Lower[k], fc.Upper[k], fc.Method, fc.Fallback)
			}
		}
	})
}
