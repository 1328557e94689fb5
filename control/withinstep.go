package control

import (
	"math"
	"slices"
	"time"
)

// withinStep learns how demand varies inside a forecast step: the
// distribution, per slot of the day, of each observation's demand over
// its step's mean (the ratio z). A forecast says what a step's mean will
// be; requests wait when the demand of a minute is above what is ready,
// so the plan sizes for the minutes' distribution, (mean + error)·z, not
// for the mean alone. Where the demand is recorded once per step, every z
// is 1 and the plan is the mean's.
//
// Each slot holds a histogram of z on a log scale (binsPerOctave bins per
// doubling from zLow to zHigh, plus an exact point mass at z = 1), whose
// weights decay by decayPerDay so the last couple of weeks count.
type withinStep struct {
	step time.Duration
	// slots[s] are the weights of slot s: index 0 is z = 1 exactly, then
	// the bins.
	slots [][]float32
	// cur gathers the observations of the step now running.
	cur    int64
	obs    []weighted
	mean   float64 // running weighted sum of demand
	weight float64
	// lastDay is, per slot, the day number of its last update (decay).
	lastDay []int64
	// pooled is one histogram over every slot of u = (demand − step
	// mean)/recent mean + 1: the deviations in units of the recent mean
	// demand, for demand whose bursts have a height of their own rather
	// than a share of the level; pooledDay is its last update's day.
	pooled    []float32
	pooledDay int64
	// pools caches pool's and additive's sums until the histograms
	// change (finish, restore): a refit bounds every step of its horizon,
	// and a pool's shadows bound the same refit, from the same sums.
	pools map[poolKey]ratios
}

// poolKey names one cached sum of withinStep: the slot and the spread
// either side, or additive's pooled histogram (slot −1).
type poolKey struct{ slot, spread int }

type weighted struct{ rps, w float64 }

const (
	zLow          = 1.0 / 16
	zHigh         = 32.0
	binsPerOctave = 6
	zBins         = 9 * binsPerOctave // log2(zHigh/zLow) octaves
	// decayPerDay is how much of a slot's weight survives a day: about
	// two weeks of memory.
	decayPerDay = 0.93
	// minStepShare is the least a step's mean must be, as a share of the
	// recent mean demand, for its ratios to count: near-empty steps would
	// read any request as a huge ratio.
	minStepShare = 0.01
)

func newWithinStep(step time.Duration, season int) *withinStep {
	w := &withinStep{step: step, slots: make([][]float32, season), lastDay: make([]int64, season)}
	return w
}

// add records an observation of rps over [at−span, at). The step it
// belongs to is the one holding at−span; when a later step begins the
// finished one's ratios are added to its slot. recentMean is the recent
// mean demand (0: unknown).
func (w *withinStep) add(at time.Time, span time.Duration, rps, recentMean float64) {
	if span <= 0 || math.IsNaN(rps) || rps < 0 {
		return
	}
	k := stepIndex(at.Add(-span), w.step)
	if k != w.cur {
		w.finish(recentMean)
		w.cur = k
	}
	w.obs = append(w.obs, weighted{rps, span.Seconds()})
	w.mean += rps * span.Seconds()
	w.weight += span.Seconds()
}

// finish adds the step gathered so far to its slot.
func (w *withinStep) finish(recentMean float64) {
	defer func() { w.obs, w.mean, w.weight = w.obs[:0], 0, 0 }()
	if len(w.obs) < 2 || w.weight <= 0 || len(w.slots) == 0 {
		return
	}
	mean := w.mean / w.weight
	if !(mean > 0) || mean < minStepShare*recentMean {
		return
	}
	clear(w.pools)
	season := int64(len(w.slots))
	s := ((w.cur % season) + season) % season
	day := w.cur / season
	h := w.slots[s]
	if h == nil {
		h = make([]float32, zBins+1)
		w.slots[s] = h
	} else if d := day - w.lastDay[s]; d > 0 {
		f := float32(math.Pow(decayPerDay, float64(d)))
		for i := range h {
			h[i] *= f
		}
	}
	w.lastDay[s] = day
	for _, o := range w.obs {
		h[zIndex(o.rps/mean)] += float32(o.w / w.weight)
	}
	if recentMean <= 0 {
		return
	}
	if w.pooled == nil {
		w.pooled = make([]float32, zBins+1)
	} else if d := day - w.pooledDay; d > 0 {
		f := float32(math.Pow(decayPerDay, float64(d)))
		for i := range w.pooled {
			w.pooled[i] *= f
		}
	}
	w.pooledDay = day
	for _, o := range w.obs {
		w.pooled[zIndex((o.rps-mean)/recentMean+1)] += float32(o.w / w.weight)
	}
}

// additive returns the pooled deviations, u = deviation/recent mean + 1;
// ok is false before any.
func (w *withinStep) additive() (ratios, bool) {
	if w.pooled == nil {
		return ratios{}, false
	}
	key := poolKey{slot: -1}
	if r, ok := w.pools[key]; ok {
		return r, r.total > 0
	}
	r, _ := poolOf([][]float32{w.pooled})
	return w.keep(key, r)
}

// keep caches r, the sum of key, and returns it as pool does. The sums
// are shared: callers must not change them.
func (w *withinStep) keep(key poolKey, r ratios) (ratios, bool) {
	if w.pools == nil {
		w.pools = make(map[poolKey]ratios)
	}
	w.pools[key] = r
	return r, r.total > 0
}

// zIndex is the histogram index of ratio z: 0 for z = 1 (to a part in a
// billion), else its bin, the ends taking what lies beyond them.
func zIndex(z float64) int {
	if math.Abs(z-1) < 1e-9 {
		return 0
	}
	if z <= zLow {
		return 1
	}
	b := int(math.Log2(z/zLow) * binsPerOctave)
	return 1 + min(b, zBins-1)
}

// zEdge is the lower edge of bin b (0-based among the bins).
func zEdge(b int) float64 { return zLow * math.Exp2(float64(b)/binsPerOctave) }

// ratios is the pooled distribution of z over a set of slots, for
// quantiles.
type ratios struct {
	point float64   // mass at z = 1
	bins  []float64 // masses of the bins
	// below[b] is the mass of the bins before b.
	below []float64
	total float64
	// edge1 is zEdge(1), the first bin's upper edge, which cdf reads at
	// every call: kept here so that it is computed once a pool.
	edge1 float64
}

// pool sums the histograms of the slots around slot s (spread either
// side). ok is false when they hold nothing.
func (w *withinStep) pool(s, spread int) (ratios, bool) {
	n := len(w.slots)
	if n == 0 {
		return ratios{}, false
	}
	key := poolKey{slot: s, spread: spread}
	if r, ok := w.pools[key]; ok {
		return r, r.total > 0
	}
	hs := make([][]float32, 0, 2*spread+1)
	for j := -spread; j <= spread; j++ {
		hs = append(hs, w.slots[((s+j)%n+n)%n])
	}
	r, _ := poolOf(hs)
	return w.keep(key, r)
}

// poolOf sums histograms (nil ones hold nothing).
func poolOf(hs [][]float32) (ratios, bool) {
	r := ratios{bins: make([]float64, zBins), edge1: zEdge(1)}
	for _, h := range hs {
		if h == nil {
			continue
		}
		r.point += float64(h[0])
		for b, v := range h[1:] {
			r.bins[b] += float64(v)
		}
	}
	r.below = make([]float64, zBins+1)
	for b, v := range r.bins {
		r.below[b+1] = r.below[b] + v
	}
	r.total = r.below[zBins] + r.point
	return r, r.total > 0
}

// flat reports whether every observation sat at its step's mean.
func (r ratios) flat() bool { return r.total == r.point }

// cdf is P(z ≤ x), log-linear inside a bin (the first bin, which also
// holds everything below zLow, linear from 0).
func (r ratios) cdf(x float64) float64 {
	switch {
	case x <= 0 || math.IsNaN(x):
		return 0
	case x >= zHigh: // zEdge(zBins), exactly
		return 1
	}
	cum, v, inFirst := r.head(x)
	if inFirst {
		return v
	}
	return r.inBins(cum, math.Log2(x/zLow)*binsPerOctave)
}

// head is the part of cdf(z), 0 < z < zHigh, that needs no logarithm:
// cum is the point mass at 1 when z ≥ 1, and when z lies in the first bin
// inFirst is true and v is cdf(z).
func (r *ratios) head(z float64) (cum, v float64, inFirst bool) {
	if z >= 1 {
		cum = r.point
	}
	if z < r.edge1 {
		return cum, (cum + r.bins[0]*z/r.edge1) / r.total, true
	}
	return cum, 0, false
}

// inBins is cdf(z) for z past the first bin and below zHigh, from cum
// (head's) and z's position in the bins, pos = log2(z/zLow)·binsPerOctave.
func (r *ratios) inBins(cum, pos float64) float64 {
	b := int(pos)
	if b >= zBins {
		return 1
	}
	return math.Min((cum+r.below[b]+r.bins[b]*(pos-float64(b)))/r.total, 1)
}

// quantile is the q-quantile of z.
func (r ratios) quantile(q float64) float64 {
	return invert(r.cdf, r.top(), q)
}

// invert returns the least x in [0, hi] with cdf(x) ≥ level, by
// bisection to a relative 1e-4 (cdf non-decreasing; hi ≤ 0 gives 0).
func invert(cdf func(float64) float64, hi, level float64) float64 {
	if hi <= 0 {
		return 0
	}
	lo := 0.0
	for range 40 {
		mid := (lo + hi) / 2
		if cdf(mid) >= level {
			hi = mid
		} else {
			lo = mid
		}
		if hi-lo <= 1e-4*hi {
			break
		}
	}
	return hi
}

// top is the largest ratio the pool can hold: the upper edge of its last
// bin with weight, or 1.
func (r ratios) top() float64 {
	for b := zBins - 1; b >= 0; b-- {
		if r.bins[b] > 0 {
			return zEdge(b + 1)
		}
	}
	return 1
}

// mixtureQuantile is the q-quantile of (base + e)·z with e drawn from the
// sorted errors (equal weights) and z from r, independently: the demand
// of an observation of a step whose mean is forecast at base. Levels e
// with base + e ≤ 0 stand for no demand. The mixture holds as many points
// as the errors times the observations, so it needs no conformal
// correction of its own.
func mixtureQuantile(base float64, errs []float64, r ratios, q float64) float64 {
	n := len(errs)
	if n == 0 {
		return math.Max(base, 0) * r.quantile(q)
	}
	m := newMixture(base, errs, r)
	return invert(m.cdf, math.Max(base+errs[n-1], 0)*r.top(), q)
}

// mixture is the distribution mixtureQuantile inverts, with what its cdf
// needs of each level base + e worked out once: the bisection reads the
// cdf a few dozen times, each over every level, so the logarithm of a
// level is taken once rather than at every reading.
type mixture struct {
	r ratios
	// none is how many levels stand for no demand (base + e ≤ 0).
	none float64
	// levels are the levels l above 0 and log2 their log2(l)·binsPerOctave.
	levels, log2 []float64
	n            float64
}

// newMixture works out the levels base + e of errs (sorted) and their
// logarithms.
func newMixture(base float64, errs []float64, r ratios) mixture {
	m := mixture{r: r, n: float64(len(errs)), levels: make([]float64, 0, len(errs)), log2: make([]float64, 0, len(errs))}
	for _, e := range errs {
		l := base + e
		if l <= 0 {
			m.none++
			continue
		}
		m.levels = append(m.levels, l)
		m.log2 = append(m.log2, math.Log2(l)*binsPerOctave)
	}
	return m
}

// cdf is P(demand ≤ x): the mean over the levels l of r.cdf(x/l), the
// bin of x/l found from log2(x) − log2(l) instead of a logarithm a level.
func (m *mixture) cdf(x float64) float64 {
	if x <= 0 || math.IsNaN(x) {
		return m.none / m.n
	}
	// pos(x/l) = log2(x/l / zLow)·binsPerOctave = log2(x)·bpo − log2(l)·bpo − log2(zLow)·bpo.
	lx := math.Log2(x)*binsPerOctave - math.Log2(zLow)*binsPerOctave
	s := m.none
	for k, l := range m.levels {
		z := x / l
		if z >= zHigh {
			s++
			continue
		}
		cum, v, inFirst := m.r.head(z)
		if !inFirst {
			v = m.r.inBins(cum, lx-m.log2[k])
		}
		s += v
	}
	return s / m.n
}

// additiveQuantile is the q-quantile of base + e + scale·(u − 1) with e
// drawn from the sorted errors (equal weights) and u from r,
// independently: the demand of an observation of a step whose mean is
// forecast at base, when its deviations have a height of their own.
func additiveQuantile(base float64, errs []float64, r ratios, scale, q float64) float64 {
	if len(errs) == 0 {
		errs = []float64{0}
	}
	cdf := func(x float64) float64 {
		s := 0.0
		for _, e := range errs {
			s += r.cdf((x-base-e)/scale + 1)
		}
		return s / float64(len(errs))
	}
	return invert(cdf, math.Max(base+errs[len(errs)-1], 0)+scale*math.Max(r.top()-1, 0), q)
}

// state copies what w has learned.
func (w *withinStep) state() WithinStepState {
	st := WithinStepState{Slots: make([][]float32, len(w.slots)), LastDay: slices.Clone(w.lastDay), Step: w.cur,
		Pooled: slices.Clone(w.pooled), PooledDay: w.pooledDay}
	for i, h := range w.slots {
		st.Slots[i] = slices.Clone(h)
	}
	for _, o := range w.obs {
		st.Obs = append(st.Obs, o.rps, o.w)
	}
	return st
}

// restore replaces what w has learned with st; a state of another season
// or bin layout (or none) leaves w empty.
func (w *withinStep) restore(st WithinStepState) {
	season := len(w.slots)
	*w = *newWithinStep(w.step, season)
	if len(st.Slots) != season || len(st.LastDay) != season {
		return
	}
	for _, h := range st.Slots {
		if h != nil && len(h) != zBins+1 {
			return
		}
	}
	for i, h := range st.Slots {
		w.slots[i] = slices.Clone(h)
	}
	copy(w.lastDay, st.LastDay)
	if len(st.Pooled) == zBins+1 {
		w.pooled, w.pooledDay = slices.Clone(st.Pooled), st.PooledDay
	}
	w.cur = st.Step
	for i := 0; i+1 < len(st.Obs); i += 2 {
		w.obs = append(w.obs, weighted{st.Obs[i], st.Obs[i+1]})
		w.mean += st.Obs[i] * st.Obs[i+1]
		w.weight += st.Obs[i+1]
	}
}
