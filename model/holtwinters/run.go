package holtwinters

// run advances st over y as r.step on each observation does, with the
// same arithmetic in the same order, so that the results are the same to
// the bit (TestRunMatchesStep): it is the parameter search's inner loop,
// written with the state in local variables. It returns the sum of
// squared one-step errors over the finite observations and the index of
// the first observation whose forecast is not finite (len(y) when there
// is none); from there on the sum means nothing. With ms it also scores
// the multi-step errors, up to that observation (see amse). Models with
// more than two seasonal periods go through r.step.
func (r *recursion) run(st *state, y []float64, ms *multiStep) (sse float64, firstBad int) {
	n := len(y)
	firstBad = n
	if r.nSeasonal > 2 {
		return r.runSteps(st, y, ms)
	}
	var rings [2][]float64
	var pos [2]int
	var gamma [2]float64
	for i := range r.nSeasonal {
		rings[i], pos[i], gamma[i] = st.seas[i], st.pos[i], r.gamma[i]
	}
	ring0, ring1, p0, p1, g0, g1 := rings[0], rings[1], pos[0], pos[1], gamma[0], gamma[1]
	ns := r.nSeasonal
	mult := r.season == Multiplicative
	hasTrend, taylor := r.trend, r.taylor
	alpha, beta, phi, ar := r.alpha, r.beta, r.phi, r.ar
	level, trend, prevErr := st.level, st.trend, st.err
	for t, v := range y {
		// The indices due now, combined as dueIndex does.
		sum, c0, c1 := 0.0, 0.0, 0.0
		if mult {
			sum = 1
		}
		if ns > 0 {
			c0 = ring0[p0]
			sum = combineIndex(mult, sum, c0)
		}
		if ns > 1 {
			c1 = ring1[p1]
			sum = combineIndex(mult, sum, c1)
		}
		if ms != nil && v == v && t > 0 && firstBad == n {
			ms.score(t, v, sum, mult)
		}
		base := level
		if hasTrend {
			base += phi * trend
		}
		mu := base + sum
		if mult {
			mu = base * sum
		}
		yhat := mu + ar*prevErr
		if v != v { // missing: replaced by its forecast
			v = yhat
		} else {
			innov := v - yhat
			sse += innov * innov
		}
		if firstBad == n && notFinite(yhat) {
			firstBad = t
		}
		e := v - mu
		next := base + alpha*e
		if mult {
			next = alpha*v/sum + (1-alpha)*base
		}
		if hasTrend {
			trend = beta*(next-level) + (1-beta)*phi*trend
		}
		ref := base
		if taylor {
			ref = next
		}
		q := 0.0
		if mult {
			q = v / (ref * sum)
		}
		if ns > 0 {
			ring0[p0] = seasonalUpdate(mult, c0, g0, q, v, ref, sum)
			p0 = nextSlot(p0, len(ring0))
		}
		if ns > 1 {
			ring1[p1] = seasonalUpdate(mult, c1, g1, q, v, ref, sum)
			p1 = nextSlot(p1, len(ring1))
		}
		level, prevErr = next, e
		if ms != nil {
			ms.push(origin{level, trend, e})
		}
	}
	st.level, st.trend, st.err = level, trend, prevErr
	pos[0], pos[1] = p0, p1
	for i := range r.nSeasonal {
		st.pos[i] = pos[i]
	}
	return sse, firstBad
}

// combineIndex adds (or, multiplicative, multiplies) one period's index
// c into the combined index sum.
func combineIndex(mult bool, sum, c float64) float64 {
	if mult {
		return sum * c
	}
	return sum + c
}

// nextSlot is the ring slot after p in a ring of n.
func nextSlot(p, n int) int {
	if p++; p == n {
		return 0
	}
	return p
}

// seasonalUpdate is step's new index of one period from its index s due
// now.
func seasonalUpdate(mult bool, s, g, q, y, ref, sum float64) float64 {
	if mult {
		return s + g*s*(q-1)
	}
	return g*(y-ref-(sum-s)) + (1-g)*s
}

// runSteps is run through r.step, for any number of periods.
func (r *recursion) runSteps(st *state, y []float64, ms *multiStep) (sse float64, firstBad int) {
	n := len(y)
	firstBad = n
	for t, v := range y {
		if ms != nil && v == v && t > 0 && firstBad == n {
			ms.score(t, v, r.dueIndex(st), r.season == Multiplicative)
		}
		yhat, innov := r.step(st, v)
		sse += innov * innov
		if firstBad == n && notFinite(yhat) {
			firstBad = t
		}
		if ms != nil {
			ms.push(origin{st.level, st.trend, st.err})
		}
	}
	return sse, firstBad
}

// notFinite reports whether v is ±Inf or NaN: v − v is 0 for every finite
// v and NaN otherwise. It is the hot loop's cheaper math.IsInf || IsNaN.
func notFinite(v float64) bool { return v-v != 0 }
