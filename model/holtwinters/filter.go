package holtwinters

import "math"

// recursion holds the parameters of one member of the family in the flat
// form the inner loops use.
type recursion struct {
	trend     bool // false: b is held at 0
	season    Seasonality
	taylor    bool
	alpha     float64
	beta      float64 // Holt-Winters β (the ETS β* is α·β)
	phi       float64
	gamma     []float64
	ar        float64
	nSeasonal int
}

func newRecursion(s Spec, p Params) recursion {
	r := recursion{
		trend:  s.Trend != NoTrend,
		season: s.Seasonality,
		taylor: s.Update == Taylor,
		alpha:  p.Alpha,
		beta:   p.Beta,
		phi:    1,
		gamma:  p.Gamma,
	}
	if s.Trend == DampedTrend {
		r.phi = p.Phi
	}
	if s.AR1 {
		r.ar = p.AR
	}
	if !s.seasonal() {
		r.season = None
		r.gamma = nil
	}
	r.nSeasonal = len(r.gamma)
	return r
}

// state is the model's state between observations: the level l, the trend
// b, the previous error e (for the AR adjustment) and one ring buffer of
// seasonal indices per period. seas[i][pos[i]] is the index that applies to
// the next observation.
type state struct {
	level, trend, err float64
	seas              [][]float64
	pos               []int
}

// newState lays out the initial state of p (time 0) in ring buffers.
func newState(p Params, nSeasonal int) *state {
	st := &state{level: p.Level0, trend: p.Trend0}
	st.seas = make([][]float64, nSeasonal)
	st.pos = make([]int, nSeasonal)
	for i := 0; i < nSeasonal; i++ {
		st.seas[i] = append([]float64(nil), p.Seasonal0[i]...)
	}
	return st
}

// reset restores st to the initial state of p without allocating; st must
// have been made by newState with the same periods.
func (st *state) reset(p Params) {
	st.level, st.trend, st.err = p.Level0, p.Trend0, 0
	for i := range st.seas {
		copy(st.seas[i], p.Seasonal0[i])
		st.pos[i] = 0
	}
}

// copyFrom makes st equal to src (same shape) without allocating.
func (st *state) copyFrom(src *state) {
	st.level, st.trend, st.err = src.level, src.trend, src.err
	for i := range st.seas {
		copy(st.seas[i], src.seas[i])
		st.pos[i] = src.pos[i]
	}
}

// clone returns a deep copy of st.
func (st *state) clone() *state {
	c := &state{level: st.level, trend: st.trend, err: st.err}
	c.seas = make([][]float64, len(st.seas))
	for i := range st.seas {
		c.seas[i] = append([]float64(nil), st.seas[i]...)
	}
	c.pos = append([]int(nil), st.pos...)
	return c
}

// step processes one observation y (NaN for a missing one) and advances
// the state. It returns the model's one-step forecast of y made before
// seeing it (including the AR adjustment) and the one-step error y − ŷ
// (0 when y is missing: a missing observation is replaced by its forecast,
// which is the conditional expectation the state-space model implies).
//
// The component-form recursions are, with base = l + φb and S the sum
// (additive) or product (multiplicative) of the seasonal indices due now:
//
//	μ  = base + S          or  base·S
//	ŷ  = μ + ρ·e_{t-1}
//	e  = y − μ
//	l' = α(y − S) + (1−α)·base       or  α·y/S + (1−α)·base
//	b' = β(l' − l) + (1−β)·φ·b
//	s' = γ(y − base − S₋) + (1−γ)·s  or  γ·y/(base·S₋) + (1−γ)·s
//
// where S₋ combines the other periods' indices. The Taylor form uses l'
// in place of base in the seasonal update.
func (r *recursion) step(st *state, y float64) (yhat, innov float64) {
	return r.stepNoise(st, y, 0)
}

// stepNoise is step, except that a missing y is replaced by its forecast
// plus eps: it draws the next value of a simulated path.
func (r *recursion) stepNoise(st *state, y, eps float64) (yhat, innov float64) {
	ns := r.nSeasonal
	mult := r.season == Multiplicative
	// cur holds each period's index due now; all are read before any is
	// updated.
	var cur [maxPeriods]float64
	sum := 0.0
	if mult {
		sum = 1
	}
	for i := 0; i < ns; i++ {
		cur[i] = st.seas[i][st.pos[i]]
		if mult {
			sum *= cur[i]
		} else {
			sum += cur[i]
		}
	}
	base := st.level
	if r.trend {
		base += r.phi * st.trend
	}
	mu := base + sum
	if mult {
		mu = base * sum
	}
	yhat = mu + r.ar*st.err
	if y != y { // missing
		y = yhat + eps
	} else {
		innov = y - yhat
	}
	e := y - mu

	level := base + r.alpha*e
	if mult {
		level = r.alpha*y/sum + (1-r.alpha)*base
	}
	if r.trend {
		st.trend = r.beta*(level-st.level) + (1-r.beta)*r.phi*st.trend
	}
	ref := base
	if r.taylor {
		ref = level
	}
	// Additive: s' = γ(y − ref − S₋ᵢ) + (1−γ)s with S₋ᵢ = S − s.
	// Multiplicative: s' = γ·y/(ref·S₋ᵢ) + (1−γ)s = s·(1 + γ(q − 1))
	// with q = y/(ref·S), one division for all periods.
	q := 0.0
	if mult {
		q = y / (ref * sum)
	}
	for i := 0; i < ns; i++ {
		s, g := cur[i], r.gamma[i]
		var next float64
		if mult {
			next = s + g*s*(q-1)
		} else {
			next = g*(y-ref-(sum-s)) + (1-g)*s
		}
		p := st.pos[i]
		ring := st.seas[i]
		ring[p] = next
		if p++; p == len(ring) {
			p = 0
		}
		st.pos[i] = p
	}
	st.level = level
	st.err = e
	return yhat, innov
}

// sse runs the recursion over y from st and returns the sum of squared
// one-step errors over the finite observations, or +Inf when a forecast is
// not finite (an exploding multiplicative model), so the optimiser steers
// away.
func (r *recursion) sse(st *state, y []float64) float64 {
	sse, firstBad := r.run(st, y, nil)
	if firstBad < len(y) || sse != sse {
		return math.Inf(1)
	}
	return sse
}

// maxPeriods bounds the number of seasonal periods of one model.
const maxPeriods = 4

func isNaNOrInf(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// multiStep holds the scratch space of the multi-step criterion.
type multiStep struct {
	k      int       // horizons 1..k
	stride int       // score horizons 1, 1+stride, 1+2·stride, …
	phiSum []float64 // phiSum[j] = φ + … + φ^j (0 without trend)
	arCoef []float64 // arCoef[j]: effect of e_t on the j-step forecast
	// window is a ring of the states after the latest observations, each
	// written twice (at o and o+k) so that the k most recent origins are
	// always the contiguous window[o : o+k].
	window []origin
	next   int       // the ring slot of the next origin
	scored []horizon // the horizons scored, shortest first
	sumSq  []float64 // per-horizon sum of squared errors
	counts []int
	zero   *state // scratch for arCoef
}

// origin is the state after one observation: what the criterion
// forecasts the next k observations from.
type origin struct{ level, trend, err float64 }

// horizon is one scored horizon j with its coefficients and its running
// sum of squared errors.
type horizon struct {
	j              int
	phiSum, arCoef float64
	sumSq          float64
}

func newMultiStep(k int, st *state) *multiStep {
	return &multiStep{
		k:      k,
		stride: 1,
		phiSum: make([]float64, k+1),
		arCoef: make([]float64, k+1),
		window: make([]origin, 2*k),
		sumSq:  make([]float64, k+1),
		counts: make([]int, k+1),
		zero:   st.clone(),
	}
}

// amse runs the recursion over y from st and returns the mean over
// horizons j = 1..k of the mean squared j-step-ahead in-sample error, the
// criterion R's ets calls "amse". It forecasts y_{t+j} from origin t with
// the states at t and the seasonal indices the recursion holds when it
// reaches t+j, which are the ones at t because j ≤ the shortest period.
// The AR term's effect is linearised: arCoef[j]·e_t.
func (r *recursion) amse(st *state, y []float64, ms *multiStep) float64 {
	k := ms.k
	pow, sum := 1.0, 0.0
	for j := 1; j <= k; j++ {
		pow *= r.phi
		sum += pow
		ms.phiSum[j] = sum
		if !r.trend {
			ms.phiSum[j] = 0
		}
		ms.sumSq[j], ms.counts[j] = 0, 0
	}
	// The AR response: from a zero state with e = 1 for the linear forms;
	// ρ^j (as dshw) for multiplicative seasonality.
	z := ms.zero
	z.level, z.trend, z.err = 0, 0, 1
	for i := range z.seas {
		clear(z.seas[i])
	}
	if r.season == Multiplicative || r.ar == 0 {
		p := 1.0
		for j := 1; j <= k; j++ {
			p *= r.ar
			ms.arCoef[j] = p
		}
	} else {
		for j := 1; j <= k; j++ {
			ms.arCoef[j], _ = r.step(z, math.NaN())
		}
	}
	ms.scored = ms.scored[:0]
	for j := 1; j <= k; j += ms.stride {
		ms.scored = append(ms.scored, horizon{j: j, phiSum: ms.phiSum[j], arCoef: ms.arCoef[j]})
	}
	ms.next = 0
	_, firstBad := r.run(st, y, ms)
	ms.keepSums()
	if firstBad < len(y) {
		return math.Inf(1)
	}
	// counts[j] held how many scored observations had exactly j origins
	// (j < k only near the start); horizon j is scored by all with ≥ j.
	for j := k - 1; j >= 1; j-- {
		ms.counts[j] += ms.counts[j+1]
	}
	var crit float64
	for j := 1; j <= k; j += ms.stride {
		if ms.counts[j] > 0 {
			crit += ms.sumSq[j] / float64(ms.counts[j])
		}
	}
	crit /= float64(k)
	if crit != crit {
		return math.Inf(1)
	}
	return crit
}

// score adds the squared j-step errors of observation t (value v, with
// the combined seasonal index comb due at it) forecast from the origins
// t−j in the window, for each scored horizon j ≤ t, and counts the
// observation under its number of origins.
func (ms *multiStep) score(t int, v, comb float64, mult bool) {
	k := ms.k
	// w[i] is origin t−k+i, so horizon j reads w[k−j].
	w := ms.window[ms.next : ms.next+k]
	jmax := min(k, t)
	for h := range ms.scored {
		hz := &ms.scored[h]
		if hz.j > jmax {
			break
		}
		from := w[k-hz.j]
		f := from.level + hz.phiSum*from.trend
		if mult {
			f *= comb
		} else {
			f += comb
		}
		d := v - f - hz.arCoef*from.err
		hz.sumSq += d * d
	}
	ms.counts[jmax]++ // turned into per-horizon counts by amse
}

// push adds the state after the latest observation to the window.
func (ms *multiStep) push(now origin) {
	ms.window[ms.next], ms.window[ms.next+ms.k] = now, now
	if ms.next++; ms.next == ms.k {
		ms.next = 0
	}
}

// keepSums copies the scored horizons' sums into sumSq.
func (ms *multiStep) keepSums() {
	for _, hz := range ms.scored {
		ms.sumSq[hz.j] = hz.sumSq
	}
}

// dueIndex is the combined seasonal index due at the next observation:
// the sum (additive) or product (multiplicative) of each period's index,
// 0 without seasonality.
func (r *recursion) dueIndex(st *state) float64 {
	mult := r.season == Multiplicative
	comb := 0.0
	if mult {
		comb = 1
	}
	for i := range r.nSeasonal {
		if mult {
			comb *= st.seas[i][st.pos[i]]
		} else {
			comb += st.seas[i][st.pos[i]]
		}
	}
	return comb
}
