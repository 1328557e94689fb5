package holtwinters

import (
	"math"
	"strconv"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/prewarm/prewarm/model"
)

// seasonalNaive forecasts each step by the last finite observation of the
// same phase of period m: ŷ_{n+k} = y_{n+k−m·⌈k/m⌉}. The interval uses the
// standard deviation σ of the finite seasonal differences y_t − y_{t−m}:
// Var(k) = σ²·(⌊(k−1)/m⌋ + 1). With m = 1 it is the naive method and
// Var(k) = σ²·k. y must hold at least one finite value.
func seasonalNaive(y []float64, m, h int, level float64) model.Forecast {
	name := "naive"
	if m > 1 {
		name = "snaive[" + strconv.Itoa(m) + "]"
	}
	n := len(y)
	last := math.NaN()
	for _, v := range y {
		if !math.IsNaN(v) {
			last = v
		}
	}
	// lastByPhase[j] is the latest finite value at phase j of the future
	// steps: step k has phase (k−1) mod m.
	lastByPhase := make([]float64, m)
	for j := range lastByPhase {
		lastByPhase[j] = last
		for t := n - m + j; t >= 0; t -= m {
			if !math.IsNaN(y[t]) {
				lastByPhase[j] = y[t]
				break
			}
		}
	}
	sigma := rms(func(yield func(float64)) {
		for t := m; t < n; t++ {
			if d := y[t] - y[t-m]; !math.IsNaN(d) {
				yield(d)
			}
		}
	})
	z := distuv.UnitNormal.Quantile(0.5 + level/2)
	f := model.Forecast{
		Method: name,
		Mean:   make([]float64, h),
		Lower:  make([]float64, h),
		Upper:  make([]float64, h),
		Level:  level,
	}
	for k := range h {
		f.Mean[k] = lastByPhase[k%m]
		sd := sigma * math.Sqrt(float64(k/m+1))
		f.Lower[k], f.Upper[k] = clampFinite(f.Mean[k]-z*sd), clampFinite(f.Mean[k]+z*sd)
	}
	return f
}

// rms is the root mean square of the values each yields, scaled so that
// it does not overflow for values near the float64 limit; 0 for none.
func rms(each func(yield func(float64))) float64 {
	scale := 0.0
	each(func(v float64) { scale = math.Max(scale, math.Abs(v)) })
	if scale == 0 || math.IsInf(scale, 0) {
		return scale
	}
	var ss float64
	var n int
	each(func(v float64) {
		v /= scale
		ss += v * v
		n++
	})
	return scale * math.Sqrt(ss/float64(n))
}

// clampFinite maps ±Inf to ±MaxFloat64: an interval bound that overflows
// is reported as the largest finite value rather than as Inf.
func clampFinite(v float64) float64 {
	return math.Max(-math.MaxFloat64, math.Min(v, math.MaxFloat64))
}
