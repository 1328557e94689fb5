package seasonal

import (
	"fmt"
	"math"
	"sort"
)

// STLOptions tunes STL. The zero value is a sensible default.
type STLOptions struct {
	// SeasonalWindow is how many cycles the smoother of each position's
	// subseries spans (odd, ≥ 3); smaller follows a changing seasonal
	// shape faster. 0 means 7.
	SeasonalWindow int
	// TrendWindow is the span in steps of the trend smoother (odd); 0
	// means the smallest odd number ≥ 1.5·period.
	TrendWindow int
	// Robust adds outer iterations that down-weight outliers with
	// bisquare weights on the remainder, as STL's robust mode does.
	Robust bool
}

// STL splits x additively into trend, seasonal and remainder following
// the structure of Cleveland et al.'s STL (1990): an inner loop that
// alternately smooths each position's cycle-subseries of the detrended
// series (removing what a low-pass filter of the result finds, so the
// seasonal part carries no trend) and smooths the deseasonalised series
// into the trend; and, with Robust, outer iterations that weight each step
// by the bisquare of its remainder over six median absolute remainders.
//
// It is "STL-like": the smoothers are local linear fits with uniform
// (robustness) weights rather than LOESS's tricube-weighted ones, which
// keeps it short and fast; like LOESS they keep their width and
// extrapolate at the ends of the series. Missing values (NaN) get
// weight 0 and are filled by the fit. For multiplicative seasonality,
// decompose the logarithm. Figure holds the seasonal part of the last full
// cycle, the shape to carry forward when forecasting.
func STL(x []float64, period int, opts STLOptions) (Decomposition, error) {
	if period < 2 {
		return Decomposition{}, fmt.Errorf("period %d: must be at least 2", period)
	}
	n := len(x)
	if n < 2*period {
		return Decomposition{}, fmt.Errorf("%w: %d observations, period %d", ErrTooShort, n, period)
	}
	if countFinite(x) < 2*period {
		return Decomposition{}, fmt.Errorf("%w: %d finite observations, period %d", ErrTooShort, countFinite(x), period)
	}
	sw := opts.SeasonalWindow
	if sw <= 0 {
		sw = 7
	}
	sw |= 1
	tw := opts.TrendWindow
	if tw <= 0 {
		tw = int(math.Ceil(1.5 * float64(period)))
	}
	tw |= 1

	weights := make([]float64, n)
	for t, v := range x {
		if finite(v) {
			weights[t] = 1
		}
	}
	trend := make([]float64, n)
	seasonal := make([]float64, n)
	work := make([]float64, n)
	outer := 1
	if opts.Robust {
		outer = 6
	}
	for o := 0; o < outer; o++ {
		for inner := 0; inner < 2; inner++ {
			// Cycle-subseries smoothing of the detrended series.
			for t := range work {
				work[t] = x[t] - trend[t]
			}
			// cycle[e] is the smoothed value at time e−period: one
			// extra cycle either side, which the low-pass filter's
			// moving averages (period, period, 3) consume.
			cycle := smoothSubseries(work, weights, period, sw)
			low := validMA(validMA(validMA(cycle, period), period), 3)
			for t := range seasonal {
				seasonal[t] = cycle[t+period] - low[t]
			}
			for t := range work {
				work[t] = x[t] - seasonal[t]
			}
			trend = movingAverage(work, weights, tw)
		}
		if opts.Robust && o < outer-1 {
			robustnessWeights(x, trend, seasonal, weights)
		}
	}
	d := Decomposition{Period: period, Trend: trend, Seasonal: seasonal, Remainder: make([]float64, n),
		Figure: make([]float64, period)}
	for t := range x {
		d.Remainder[t] = x[t] - trend[t] - seasonal[t]
	}
	for t := n - period; t < n; t++ {
		d.Figure[t%period] = seasonal[t]
	}
	return d, nil
}

// smoothSubseries fits, for every time t from −period to n+period−1, a
// weighted least-squares line through the span observations of t's
// position in the cycle nearest to t, and returns its values at t (so the
// first and last cycles are extrapolated one cycle beyond the series).
func smoothSubseries(x, w []float64, period, span int) []float64 {
	n := len(x)
	out := make([]float64, n+2*period)
	for e := range out {
		t := e - period
		r := ((t % period) + period) % period
		count := (n-1-r)/period + 1 // observations at position r
		jt := (t - r) / period      // t's index among them: −1 … count
		if t < 0 {
			jt = -1
		}
		lo := min(max(jt-span/2, 0), max(count-span, 0))
		hi := min(lo+span-1, count-1)
		var sw, sj, sx, sjj, sjx float64
		for j := lo; j <= hi; j++ {
			u := r + j*period
			if w[u] == 0 || !finite(x[u]) {
				continue
			}
			fj := float64(j)
			sw += w[u]
			sj += w[u] * fj
			sx += w[u] * x[u]
			sjj += w[u] * fj * fj
			sjx += w[u] * fj * x[u]
		}
		out[e] = lineAt(sw, sj, sx, sjj, sjx, float64(jt))
	}
	return out
}

// lineAt evaluates at k the weighted least-squares line whose sums of
// weights, w·k, w·x, w·k² and w·k·x are given; the weighted mean when the
// points do not fix a slope, 0 without points.
func lineAt(sw, sk, sx, skk, skx, k float64) float64 {
	if sw == 0 {
		return 0
	}
	mk, mx := sk/sw, sx/sw
	varK := skk/sw - mk*mk
	if varK <= 1e-12 {
		return mx
	}
	return mx + (skx/sw-mk*mx)/varK*(k-mk)
}

// validMA is the moving average of span steps over the windows that fit
// inside x: len(x)−span+1 values.
func validMA(x []float64, span int) []float64 {
	out := make([]float64, len(x)-span+1)
	s := 0.0
	for i := 0; i < span; i++ {
		s += x[i]
	}
	for i := range out {
		out[i] = s / float64(span)
		if i+span < len(x) {
			s += x[i+span] - x[i]
		}
	}
	return out
}

// movingAverage smooths x over span steps by local linear regression: in
// the interior, with a centred window, that is the plain weighted moving
// average; at the ends the window keeps its width and the line
// extrapolates, as LOESS does, instead of the window collapsing onto the
// last point. nil weights mean all 1. An even span averages the fits of
// span−1 and span+1 (a 2×span average in the interior).
func movingAverage(x, w []float64, span int) []float64 {
	if span%2 == 0 {
		a := localLinear(x, w, span-1, 1)
		b := localLinear(x, w, span+1, 1)
		for i := range a {
			a[i] = (a[i] + b[i]) / 2
		}
		return a
	}
	return localLinear(x, w, span, 1)
}

// localLinear fits, at every t, a weighted least-squares line through the
// span points t + k·stride nearest to t (the window shifted, not shrunk, at
// the ends of the series) and returns its value at t. Missing values and
// zero weights drop out; with fewer than two usable points the fit is
// their mean, or the previous fitted value when there are none.
func localLinear(x, w []float64, span, stride int) []float64 {
	n := len(x)
	out := make([]float64, n)
	half := span / 2
	for t := range x {
		// Window in units of stride within t's residue class.
		kMin := -(t / stride)
		kMax := (n - 1 - t) / stride
		lo := max(kMin, -half)
		hi := min(kMax, lo+span-1)
		lo = max(kMin, hi-span+1)
		var sw, sk, sx, skk, skx float64
		for k := lo; k <= hi; k++ {
			u := t + k*stride
			wu := 1.0
			if w != nil {
				wu = w[u]
			}
			if wu == 0 || !finite(x[u]) {
				continue
			}
			fk := float64(k)
			sw += wu
			sk += wu * fk
			sx += wu * x[u]
			skk += wu * fk * fk
			skx += wu * fk * x[u]
		}
		if sw == 0 && t > 0 {
			out[t] = out[t-1]
			continue
		}
		out[t] = lineAt(sw, sk, sx, skk, skx, 0)
	}
	return out
}

// robustnessWeights sets w to the bisquare of the remainder over six
// times its median absolute value (0 for missing values).
func robustnessWeights(x, trend, seasonal, w []float64) {
	var abs []float64
	for t, v := range x {
		if finite(v) {
			abs = append(abs, math.Abs(v-trend[t]-seasonal[t]))
		}
	}
	sort.Float64s(abs)
	h := 6 * quantileSorted(abs, 0.5)
	for t, v := range x {
		if !finite(v) {
			w[t] = 0
			continue
		}
		if h == 0 {
			w[t] = 1
			continue
		}
		u := math.Abs(v-trend[t]-seasonal[t]) / h
		if u >= 1 {
			w[t] = 0
		} else {
			w[t] = (1 - u*u) * (1 - u*u)
		}
	}
}
