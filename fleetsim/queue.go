package fleetsim

import "math"

// segment is a run of queued requests that arrived at a constant rate:
// request j (0 ≤ j < n) arrived at a0 + j/rate seconds.
type segment struct {
	a0, rate, n float64
}

// fluidQueue is a FIFO queue of requests treated as a fluid: counts may be
// fractional and waits are computed exactly for piecewise-constant arrival
// and service rates.
type fluidQueue struct {
	segs []segment
	head int
}

// eps is the request count below which a segment is considered empty.
const eps = 1e-9

// len returns the number of queued requests.
func (q *fluidQueue) len() float64 {
	s := 0.0
	for _, g := range q.segs[q.head:] {
		s += g.n
	}
	return s
}

// arrive queues rate requests/s arriving over [t, t+dur) seconds.
func (q *fluidQueue) arrive(t, dur, rate float64) {
	if rate > 0 && dur > 0 {
		q.segs = append(q.segs, segment{a0: t, rate: rate, n: rate * dur})
	}
}

// serve runs a server of mu requests/s from t0 to t1 over the queue in FIFO
// order and reports each served run's waits to rec. A request served at
// time d waits d − arrival; within a segment the departure of request j is
// max(a0 + j/rate, τ + j/mu), τ being when the server reaches the segment,
// so its wait is linear in j and clipped at zero.
//
// With timeoutS > 0 no request is served after waiting longer than
// timeoutS: requests older than that when the server reaches them have
// given up and are dropped, and once the wait grows to timeoutS the queue's
// head stays exactly timeoutS old, the server taking mu requests/s at that
// wait while the rest of the arrivals time out. dropped counts them; the
// caller records them (latencies.addDropped).
func (q *fluidQueue) serve(t0, t1, mu, timeoutS float64, rec *latencies) (served, dropped float64) {
	if !(mu > 0) {
		return 0, 0
	}
	tau := t0
	for q.head < len(q.segs) && tau < t1 {
		g := &q.segs[q.head]
		start := math.Max(tau, g.a0)
		if start >= t1 {
			break
		}
		if timeoutS > 0 {
			if k := math.Min(g.n, g.rate*(start-timeoutS-g.a0)); k > 0 {
				dropped += k
				g.a0 += k / g.rate
				g.n -= k
				if g.n <= eps {
					q.head++
					continue
				}
			}
		}
		j := math.Min(g.n, math.Min(g.rate*(t1-g.a0), mu*(t1-start)))
		if j <= 0 {
			break
		}
		// wait(x) = max(0, w0 + slope·x) for x in [0, j].
		w0, slope := start-g.a0, 1/mu-1/g.rate
		capped := timeoutS > 0 && slope > 0 && w0+slope*j > timeoutS
		if capped {
			j = math.Max(0, (timeoutS-w0)/slope)
		}
		rec.addLinear(w0, slope, j)
		served += j
		tau = math.Max(g.a0+j/g.rate, start+j/mu)
		g.a0 += j / g.rate
		g.n -= j
		if capped {
			// The head is now timeoutS old and stays so until t1 or the
			// segment's last arrival: per second the server takes mu
			// requests at that wait and rate − mu give up.
			end := math.Min(t1, g.a0+g.n/g.rate+timeoutS)
			if dt := end - tau; dt > 0 {
				passed := math.Min(g.n, g.rate*dt)
				s := math.Min(passed, mu*dt)
				rec.add(timeoutS, s)
				served += s
				dropped += passed - s
				g.a0 += passed / g.rate
				g.n -= passed
				tau = end
			}
		}
		if g.n > eps {
			break
		}
		q.head++
	}
	q.compact()
	return served, dropped
}

// dropOlder drops the queued requests that arrived before cutoff (they have
// waited past the timeout) and returns how many.
func (q *fluidQueue) dropOlder(cutoff float64) float64 {
	dropped := 0.0
	for q.head < len(q.segs) {
		g := &q.segs[q.head]
		k := math.Min(g.n, g.rate*(cutoff-g.a0))
		if k <= 0 {
			break
		}
		dropped += k
		g.a0 += k / g.rate
		g.n -= k
		if g.n > eps {
			break
		}
		q.head++
	}
	q.compact()
	return dropped
}

func (q *fluidQueue) compact() {
	if q.head == len(q.segs) {
		q.segs, q.head = q.segs[:0], 0
	} else if q.head > 64 && q.head*2 > len(q.segs) {
		q.segs = append(q.segs[:0], q.segs[q.head:]...)
		q.head = 0
	}
}
