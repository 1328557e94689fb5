package seasonal

import (
	"fmt"
	"math"
	"slices"
)

// STLOptions sets STL's smoothing parameters, named as in R's stl(). The
// zero value is R's default for s.window = 11 (the window R's mstl and
// stlf give the first seasonal period): seasonal degree 0, trend and
// low-pass degree 1, the trend window
// nextodd(⌈1.5·period/(1 − 1.5/s.window)⌉), the low-pass window
// nextodd(period), each jump ⌈window/10⌉, and 2 inner iterations without
// robustness (1 inner and 15 outer with it).
type STLOptions struct {
	// SeasonalWindow is s.window: the span, in cycles, of the LOESS
	// smoother of each position's subseries (odd, at least 3; an even
	// value is rounded up). Smaller follows a changing seasonal shape
	// faster. 0 means 11.
	SeasonalWindow int
	// SeasonalDegree is s.degree, 0 (locally constant, R's default) or 1.
	SeasonalDegree int
	// TrendWindow is t.window, in steps; 0 means R's default above.
	TrendWindow int
	// LowPassWindow is l.window, in steps; 0 means nextodd(period).
	LowPassWindow int
	// Robust adds R's robustness iterations: the fit is repeated with
	// each step weighted by the bisquare of its remainder over six
	// median absolute remainders, so outliers stop pulling the trend
	// and seasonal parts.
	Robust bool
	// Inner and Outer override the iteration counts (0: R's defaults).
	Inner, Outer int
}

// STL splits x additively into trend, seasonal and remainder by
// Cleveland, Cleveland, McRae and Terpenning's STL (1990), as R's
// stats::stl computes it (the netlib Fortran): an inner loop that smooths
// each position's cycle-subseries of the detrended series with LOESS
// (tricube weights, extrapolated one cycle beyond each end), removes what
// a low-pass filter of the result finds (moving averages of period,
// period and 3 steps, then LOESS), and smooths the deseasonalised series
// into the trend with LOESS; and, with Robust, outer iterations that
// re-weight each step by its remainder. Like R it evaluates each LOESS
// fit every jump-th point and interpolates linearly between.
//
// The result matches R's stl() with the same parameters to 1e-9 relative
// (TestSTLMatchesR, fixtures in testdata/). Missing values (NaN) are
// filled by linear interpolation first (R's stl refuses them; R's mstl
// interpolates too) and keep a NaN remainder. For multiplicative
// seasonality, decompose the logarithm. Figure holds the seasonal part of
// the last full cycle, the shape to carry forward when forecasting.
//
// x must hold more than two full periods (R's requirement).
func STL(x []float64, period int, opts STLOptions) (Decomposition, error) {
	if period < 2 {
		return Decomposition{}, fmt.Errorf("period %d: must be at least 2", period)
	}
	n := len(x)
	if n <= 2*period || countFinite(x) <= 2*period {
		return Decomposition{}, fmt.Errorf("%w: %d observations (%d finite), period %d", ErrTooShort, n, countFinite(x), period)
	}
	y := Interpolate(x)
	p := newSTLParams(period, opts)
	trend, seasonal := make([]float64, n), make([]float64, n)
	newSTLWork(n, period).run(y, p, trend, seasonal)
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

// stlParams are the resolved parameters of one STL run, in the Fortran's
// terms.
type stlParams struct {
	np                  int // period
	ns, nt, nl          int // windows, odd and ≥ 3
	sDeg, tDeg, lDeg    int
	sJump, tJump, lJump int
	inner, outer        int
}

func newSTLParams(period int, o STLOptions) stlParams {
	sw := o.SeasonalWindow
	if sw <= 0 {
		sw = 11
	}
	tw := o.TrendWindow
	if tw <= 0 {
		tw = nextOdd(math.Ceil(1.5 * float64(period) / (1 - 1.5/float64(sw))))
	}
	lw := o.LowPassWindow
	if lw <= 0 {
		lw = nextOdd(float64(period))
	}
	jump := func(w int) int { return int(math.Ceil(float64(w) / 10)) }
	p := stlParams{np: max(2, period), ns: oddAtLeast3(sw), nt: oddAtLeast3(tw), nl: oddAtLeast3(lw),
		sDeg: min(max(o.SeasonalDegree, 0), 1), tDeg: 1, lDeg: 1,
		sJump: jump(sw), tJump: jump(tw), lJump: jump(lw), inner: 2}
	if o.Robust {
		p.inner, p.outer = 1, 15
	}
	if o.Inner > 0 {
		p.inner = o.Inner
	}
	if o.Outer > 0 {
		p.outer = o.Outer
	}
	return p
}

// nextOdd is R's nextodd: round, then up to the next odd integer.
func nextOdd(x float64) int {
	k := int(math.Round(x))
	if k%2 == 0 {
		k++
	}
	return k
}

func oddAtLeast3(k int) int {
	k = max(3, k)
	if k%2 == 0 {
		k++
	}
	return k
}

// stlWork is the scratch space of STL runs on series of one length, for
// any of the periods it was sized for, reusable across runs (MSTL's
// periods and iterations). It keeps the tricube kernel of each span it
// has smoothed with.
type stlWork struct {
	detrended, cycle, low []float64
	ma1, ma2              []float64
	sub, subW, subFit     []float64
	rw                    []float64 // robustness weights, made on first use
	kernels               map[int][]float64
}

// newSTLWork sizes the scratch for series of length n and the given
// periods (each at least 2).
func newSTLWork(n int, periods ...int) *stlWork {
	w := &stlWork{kernels: map[int][]float64{}}
	w.size(n, periods...)
	return w
}

// size makes w's buffers fit series of length n and the given periods,
// reusing their memory where it is large enough. Every buffer is written
// before it is read, so nothing needs clearing.
func (w *stlWork) size(n int, periods ...int) {
	longest, shortest := slices.Max(periods), slices.Min(periods)
	m := n + 2*longest
	k := n/shortest + 1
	w.detrended, w.low = resize(w.detrended, n), resize(w.low, n)
	w.cycle, w.ma1, w.ma2 = resize(w.cycle, m), resize(w.ma1, m), resize(w.ma2, m)
	w.sub, w.subW, w.subFit = resize(w.sub, k), resize(w.subW, k), resize(w.subFit, k+2)
	if w.rw != nil {
		w.rw = resize(w.rw, n)
	}
}

// resize returns b with length n, in b's memory when it holds n.
func resize(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// Scratch is working memory that successive MSTL decompositions reuse
// instead of allocating their own (MSTLOptions.Scratch): a forecaster
// validating at several origins decomposes many prefixes of one history.
// It is not safe for concurrent use. The zero value is ready.
type Scratch struct{ w *stlWork }

// work returns the scratch's STL work sized for n and periods.
func (s *Scratch) work(n int, periods ...int) *stlWork {
	if s.w == nil {
		s.w = newSTLWork(n, periods...)
	} else {
		s.w.size(n, periods...)
	}
	return s.w
}

// kernel returns tricubeKernel(span), computed once per work.
func (w *stlWork) kernel(span int) []float64 {
	k, ok := w.kernels[span]
	if !ok {
		k = tricubeKernel(span)
		w.kernels[span] = k
	}
	return k
}

// run fills trend and seasonal with the STL of y (no NaN): the outer loop
// of R's stl.
func (w *stlWork) run(y []float64, p stlParams, trend, seasonal []float64) {
	clear(trend)
	var rw []float64 // nil: no robustness weights yet
	for k := 0; ; k++ {
		w.onePass(y, p, rw, trend, seasonal)
		if k >= p.outer {
			break
		}
		for i := range y {
			w.low[i] = trend[i] + seasonal[i]
		}
		if w.rw == nil {
			w.rw = make([]float64, len(y))
		}
		robustWeights(y, w.low, w.rw, w.detrended)
		rw = w.rw
	}
}

// onePass is the inner loop (the Fortran's onestp).
func (w *stlWork) onePass(y []float64, p stlParams, rw, trend, seasonal []float64) {
	n, np := len(y), p.np
	for range p.inner {
		for i := range y {
			w.detrended[i] = y[i] - trend[i]
		}
		w.smoothCycles(w.detrended, p, rw)
		// Low-pass filter of the cycle-subseries: MA(np), MA(np), MA(3),
		// then LOESS.
		a := movingAverageInto(w.cycle[:n+2*np], np, w.ma1)
		b := movingAverageInto(a, np, w.ma2)
		c := movingAverageInto(b, 3, w.ma1)
		w.loessSmooth(c, p.nl, p.lDeg, p.lJump, nil, w.low)
		for i := range seasonal {
			seasonal[i] = w.cycle[np+i] - w.low[i]
		}
		for i := range y {
			w.detrended[i] = y[i] - seasonal[i]
		}
		w.loessSmooth(w.detrended, p.nt, p.tDeg, p.tJump, rw, trend)
	}
}

// smoothCycles smooths each position's subseries of x with LOESS and
// extrapolates it one cycle either way into w.cycle (length n+2·np, the
// Fortran's ss): w.cycle[np+t] is the smoothed value at t.
func (w *stlWork) smoothCycles(x []float64, p stlParams, rw []float64) {
	n, np := len(x), p.np
	for j := 0; j < np; j++ {
		k := (n-1-j)/np + 1
		sub, subW, fit := w.sub[:k], w.subW[:k], w.subFit[:k+2]
		var weights []float64
		for i := range sub {
			sub[i] = x[i*np+j]
			if rw != nil {
				subW[i] = rw[i*np+j]
			}
		}
		if rw != nil {
			weights = subW
		}
		w.loessSmooth(sub, p.ns, p.sDeg, p.sJump, weights, fit[1:k+1])
		v, ok := loessAt(sub, p.ns, p.sDeg, -1, 0, min(p.ns, k)-1, weights)
		if !ok {
			v = fit[1]
		}
		fit[0] = v
		v, ok = loessAt(sub, p.ns, p.sDeg, float64(k), max(0, k-p.ns), k-1, weights)
		if !ok {
			v = fit[k]
		}
		fit[k+1] = v
		for m, v := range fit {
			w.cycle[m*np+j] = v
		}
	}
}

// movingAverageInto writes the span-step moving averages of the windows
// inside x (len(x)−span+1 values) into out and returns them.
func movingAverageInto(x []float64, span int, out []float64) []float64 {
	out = out[:len(x)-span+1]
	s := 0.0
	for i := 0; i < span; i++ {
		s += x[i]
	}
	out[0] = s / float64(span)
	for j := 1; j < len(out); j++ {
		s += x[j+span-1] - x[j-1]
		out[j] = s / float64(span)
	}
	return out
}

// loessSmooth writes into ys the LOESS smooth of y with span points and
// local degree deg, fitted every jump-th point (and at the last) and
// linearly interpolated between (the Fortran's ess). rw, when not nil,
// multiplies the tricube weights.
func (w *stlWork) loessSmooth(y []float64, span, deg, jump int, rw, ys []float64) {
	n := len(y)
	if n < 2 {
		ys[0] = y[0]
		return
	}
	nj := min(jump, n-1)
	nleft, nright := 0, n-1
	// Without robustness weights, a window centred on its point has the
	// same weights wherever it is, and for degree 1 the local slope
	// cancels: the fit is the dot product with one tricube kernel.
	var kernel []float64
	if rw == nil && span < n {
		kernel = w.kernel(span)
	}
	fit := func(i int) {
		if kernel != nil && i-nleft == nright-i {
			v := 0.0
			for k, wt := range kernel {
				v += wt * y[nleft+k]
			}
			ys[i] = v
			return
		}
		v, ok := loessAt(y, span, deg, float64(i), nleft, nright, rw)
		if !ok {
			v = y[i]
		}
		ys[i] = v
	}
	half := (span + 1) / 2
	switch {
	case span >= n:
		for i := 0; i < n; i += nj {
			fit(i)
		}
	case nj == 1:
		nleft, nright = 0, span-1
		for i := 0; i < n; i++ {
			if i+1 > half && nright != n-1 {
				nleft++
				nright++
			}
			fit(i)
		}
	default:
		for i := 0; i < n; i += nj {
			switch {
			case i+1 < half:
				nleft, nright = 0, span-1
			case i+1 >= n-half+1:
				nleft, nright = n-span, n-1
			default:
				nleft, nright = i-half+1, span+i-half
			}
			fit(i)
		}
	}
	if nj == 1 {
		return
	}
	for i := 0; i < n-nj; i += nj {
		delta := (ys[i+nj] - ys[i]) / float64(nj)
		for j := i + 1; j < i+nj; j++ {
			ys[j] = ys[i] + delta*float64(j-i)
		}
	}
	k := ((n-1)/nj)*nj + 1 // 1-based index of the last point fitted
	if k == n {
		return
	}
	fit(n - 1)
	if k != n-1 {
		delta := (ys[n-1] - ys[k-1]) / float64(n-k)
		for j := k; j < n-1; j++ {
			ys[j] = ys[k-1] + delta*float64(j-k+1)
		}
	}
}

// tricubeKernel returns the normalised tricube weights loessAt gives the
// span points of a window centred on its point (span odd).
func tricubeKernel(span int) []float64 {
	h := float64(span / 2)
	k := make([]float64, span)
	total := 0.0
	for j := range k {
		r := math.Abs(float64(j) - h)
		switch {
		case r > 0.999*h:
		case r <= 0.001*h:
			k[j] = 1
		default:
			q := r / h
			q = 1 - q*q*q
			k[j] = q * q * q
		}
		total += k[j]
	}
	for j := range k {
		k[j] /= total
	}
	return k
}

// loessAt fits at position xs a local polynomial of degree deg (0 or 1)
// through y[nleft..nright], with tricube weights over the half-width
// h = max(xs−nleft, nright−xs) (widened by (span−n)/2 when the span
// exceeds the series) times rw when not nil, and returns its value; ok is
// false when every weight is 0 (the Fortran's est).
//
// It is the Fortran's arithmetic in one pass: with normalised weights w,
// mean position a = Σw·j, spread c = Σw·(j−a)² and weighted mean ȳ, the
// degree-1 fit is ȳ + (xs−a)/c · Σw·(j−a)·y when √c > 0.001·(n−1), and ȳ
// otherwise; positions are taken relative to xs to keep the sums exact.
func loessAt(y []float64, span, deg int, xs float64, nleft, nright int, rw []float64) (v float64, ok bool) {
	n := len(y)
	h := math.Max(xs-float64(nleft), float64(nright)-xs)
	if span > n {
		h += float64((span - n) / 2)
	}
	h9, h1 := 0.999*h, 0.001*h
	var sw, swd, swdd, swy, swdy float64
	for j := nleft; j <= nright; j++ {
		d := float64(j) - xs
		r := math.Abs(d)
		if r > h9 {
			continue
		}
		w := 1.0
		if r > h1 {
			q := r / h
			q = 1 - q*q*q
			w = q * q * q
		}
		if rw != nil {
			w *= rw[j]
		}
		sw += w
		swd += w * d
		swdd += w * d * d
		swy += w * y[j]
		swdy += w * d * y[j]
	}
	if sw <= 0 {
		return 0, false
	}
	mean := swy / sw
	if h > 0 && deg > 0 {
		a := swd / sw
		c := swdd/sw - a*a
		if math.Sqrt(c) > 0.001*float64(n-1) {
			return mean + (-a)/c*(swdy/sw-a*mean), true
		}
	}
	return mean, true
}

// robustWeights sets rw to the bisquare of |y − fit| over six times its
// median (the Fortran's stlrwt, whose median comes from partialSort);
// scratch holds len(y) values.
func robustWeights(y, fit, rw, scratch []float64) {
	n := len(y)
	for i := range y {
		scratch[i] = math.Abs(y[i] - fit[i])
	}
	s := scratch[:n]
	mid1 := n/2 + 1
	mid2 := n - mid1 + 1
	partialSort(s, []int{mid1, mid2})
	cmad := 3 * (s[mid1-1] + s[mid2-1])
	c9, c1 := 0.999*cmad, 0.001*cmad
	for i := range y {
		r := math.Abs(y[i] - fit[i])
		switch {
		case r <= c1:
			rw[i] = 1
		case r <= c9:
			u := r / cmad
			rw[i] = (1 - u*u) * (1 - u*u)
		default:
			rw[i] = 0
		}
	}
}

// Interpolate returns a copy of x with each missing value (NaN or ±Inf)
// replaced by the straight line between the nearest finite values either
// side; leading and trailing gaps take the nearest finite value. A series
// without a finite value is returned as is.
func Interpolate(x []float64) []float64 {
	out := append([]float64(nil), x...)
	prev := -1
	for i, v := range out {
		if !finite(v) {
			continue
		}
		switch {
		case prev < 0:
			for j := 0; j < i; j++ {
				out[j] = v
			}
		case i-prev > 1:
			for j := prev + 1; j < i; j++ {
				f := float64(j-prev) / float64(i-prev)
				out[j] = out[prev] + f*(v-out[prev])
			}
		}
		prev = i
	}
	if prev >= 0 {
		for j := prev + 1; j < len(out); j++ {
			out[j] = out[prev]
		}
	}
	return out
}
