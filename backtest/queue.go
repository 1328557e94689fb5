package backtest

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

// latencies accumulates the wait distribution of served requests as a
// histogram with log-spaced buckets (20 per decade from 1 ms) plus an exact
// zero bucket, and counts the requests within the SLO exactly.
type latencies struct {
	slo      float64
	zero     float64
	buckets  []float64
	total    float64
	withinSL float64
	// longest is the longest wait recorded: quantiles never exceed it,
	// whatever the interpolation inside its bucket says.
	longest float64
}

const (
	histMin       = 1e-3
	histPerDecade = 20
	histDecades   = 9
)

func newLatencies(sloS float64) *latencies {
	return &latencies{slo: sloS, buckets: make([]float64, histPerDecade*histDecades+1)}
}

func bucketEdge(i int) float64 { return histMin * math.Pow(10, float64(i)/histPerDecade) }

func bucketOf(w float64) int {
	if w <= histMin {
		return 0
	}
	i := int(math.Log10(w/histMin) * histPerDecade)
	return min(i, histPerDecade*histDecades)
}

// add records mass requests that all waited w seconds.
func (l *latencies) add(w, mass float64) {
	if mass <= 0 {
		return
	}
	l.total += mass
	l.longest = math.Max(l.longest, w)
	if w <= l.slo {
		l.withinSL += mass
	}
	if w <= 0 {
		l.zero += mass
		return
	}
	l.buckets[bucketOf(w)] += mass
}

// addDropped records mass requests that gave up after waiting w seconds:
// they count in the latency distribution and as SLO misses.
func (l *latencies) addDropped(w, mass float64) {
	if mass <= 0 {
		return
	}
	l.total += mass
	l.longest = math.Max(l.longest, w)
	l.buckets[bucketOf(w)] += mass
}

// addLinear records mass requests whose waits run linearly from w0 to
// w0+slope·mass (clipped at zero), i.e. spread uniformly over that range.
func (l *latencies) addLinear(w0, slope, mass float64) {
	if mass <= 0 {
		return
	}
	w1 := w0 + slope*mass
	if math.Abs(w1-w0) < 1e-12 {
		l.add(math.Max(w0, 0), mass)
		return
	}
	lo, hi := math.Min(w0, w1), math.Max(w0, w1)
	density := mass / (hi - lo)
	if lo < 0 {
		l.add(0, density*(math.Min(hi, 0)-lo))
		lo = 0
	}
	if hi <= lo {
		return
	}
	m := density * (hi - lo)
	l.total += m
	l.longest = math.Max(l.longest, hi)
	l.withinSL += density * math.Max(0, math.Min(hi, l.slo)-lo)
	// Spread over the buckets the range covers.
	for b := bucketOf(lo); b <= bucketOf(hi); b++ {
		a, z := bucketEdge(b), bucketEdge(b+1)
		if b == 0 {
			a = 0
		}
		if b == len(l.buckets)-1 {
			z = math.Inf(1)
		}
		ov := math.Min(hi, z) - math.Max(lo, a)
		if ov > 0 {
			l.buckets[b] += density * ov
		}
	}
}

// quantile returns the q-quantile of the recorded waits in seconds,
// interpolating log-linearly inside a bucket and never above the longest
// wait recorded.
func (l *latencies) quantile(q float64) float64 {
	return math.Min(l.bucketQuantile(q), l.longest)
}

func (l *latencies) bucketQuantile(q float64) float64 {
	if l.total <= 0 {
		return 0
	}
	target := q * l.total
	if target <= l.zero {
		return 0
	}
	cum := l.zero
	for b, m := range l.buckets {
		if cum+m >= target && m > 0 {
			frac := (target - cum) / m
			a, z := bucketEdge(b), bucketEdge(b+1)
			if b == 0 {
				return z * frac
			}
			return a * math.Pow(z/a, frac)
		}
		cum += m
	}
	return bucketEdge(len(l.buckets))
}
