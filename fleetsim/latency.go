package fleetsim

import (
	"math"

	"github.com/prewarm/prewarm/planner"
)

// histogram is a distribution of seconds with log-spaced buckets (20 per
// decade from 1 ms; bucket 0 is [0, 1 ms]) plus an exact zero.
type histogram struct {
	zero    float64
	buckets [histBuckets]float64
	total   float64
	// longest bounds the recorded values: quantiles never exceed it,
	// whatever the interpolation inside its bucket says.
	longest float64
}

const (
	histMin       = 1e-3
	histPerDecade = 20
	histDecades   = 9
	histBuckets   = histPerDecade*histDecades + 1
)

// histEdges[b] is the lower edge of bucket b (0 for bucket 0) and
// histEdges[b+1] its upper edge; the last bucket is open above.
var histEdges = func() [histBuckets + 1]float64 {
	var e [histBuckets + 1]float64
	for b := 1; b <= histBuckets; b++ {
		e[b] = histMin * math.Pow(10, float64(b-1)/histPerDecade)
	}
	return e
}()

func bucketOf(w float64) int {
	if w <= histMin {
		return 0
	}
	return min(1+int(math.Log10(w/histMin)*histPerDecade), histBuckets-1)
}

// addPoint records mass values equal to w ≥ 0.
func (h *histogram) addPoint(w, mass float64) {
	if mass <= 0 {
		return
	}
	h.total += mass
	h.longest = math.Max(h.longest, w)
	if w <= 0 {
		h.zero += mass
		return
	}
	h.buckets[bucketOf(w)] += mass
}

// addCDF records mass values distributed on [lo, hi] with the cumulative
// distribution function cdf (cdf(lo) = 0; what cdf leaves above hi goes
// into hi's bucket).
func (h *histogram) addCDF(lo, hi, mass float64, cdf func(float64) float64) {
	if mass <= 0 {
		return
	}
	h.total += mass
	h.longest = math.Max(h.longest, hi)
	last := bucketOf(hi)
	prev := 0.0
	for b := bucketOf(lo); b < last; b++ {
		f := cdf(histEdges[b+1])
		h.buckets[b] += mass * (f - prev)
		prev = f
	}
	h.buckets[last] += mass * (1 - prev)
}

// quantile returns the q-quantile in seconds, interpolating log-linearly
// inside a bucket and never above the longest value recorded.
func (h *histogram) quantile(q float64) float64 {
	if h.total <= 0 {
		return 0
	}
	target := q * h.total
	if target <= h.zero {
		return 0
	}
	cum := h.zero
	for b, m := range h.buckets {
		if cum+m >= target && m > 0 {
			frac := (target - cum) / m
			a, z := histEdges[b], histEdges[b+1]
			if b == 0 {
				return math.Min(z*frac, h.longest)
			}
			if b == histBuckets-1 {
				return h.longest
			}
			return math.Min(a*math.Pow(z/a, frac), h.longest)
		}
		cum += m
	}
	return h.longest
}

// tailCut is how far out an exponential tail is recorded: where its
// survival is 1e-9.
const tailCut = 20.72 // −ln(1e-9)

// latencies records every request's wait for a server and its latency
// (wait plus service), and counts the requests that waited within the SLO
// exactly. Waits come from the fluid queue while there is a backlog, and
// from Erlang C for the requests that arrive when the servers have caught
// up: within a tick below capacity an M/M/c queue of the tick's arrival
// rate and servers is taken to be in its steady state, so a request waits
// with probability C(c, a) (Erlang C, a = λ·S) and then exponentially with
// rate (c − a)/S. Service times are exponential with mean S, as M/M/c has
// them. A wait that reaches the queue timeout is a drop: it counts as a
// miss, at the timeout, in both distributions.
type latencies struct {
	sloS, timeoutS, serviceS float64
	wait, latency            histogram
	within                   float64 // served within the SLO
	erlangDropped            float64 // Erlang-C tails cut at the timeout
	// off stops the distributions (not the counts): outside the scored
	// window.
	off bool
	// regime is the current tick's queue for requests served on arrival;
	// pending accumulates their mass while the regime stays the same, so
	// a long run of equal ticks costs one histogram update.
	regime, pending erlangRegime
	pendingMass     float64
	// serviceOnly is the mass of requests that did not wait: their latency
	// is the service time alone, one distribution for all of them, added
	// once by finish.
	serviceOnly float64
}

// erlangRegime is an M/M/c queue: lambda requests/s, servers servers of
// mean service time serviceS.
type erlangRegime struct {
	lambda  float64
	servers int
	// pWait is the probability of waiting at all (Erlang C) and theta the
	// rate of the wait once waiting; stable is false when a ≥ c.
	pWait, theta float64
	stable       bool
	// missSLO and missTimeout are the shares of requests waiting longer
	// than the SLO and than the queue timeout (0: no timeout); queue is
	// the mean number waiting, pWait·a/(c − a).
	missSLO, missTimeout, queue float64
}

// meanQueue is the regime's mean number of requests waiting (0 when
// unstable: the fluid queue holds them then).
func (r erlangRegime) meanQueue() float64 { return r.queue }

func newLatencies(sloS, timeoutS, serviceS float64) *latencies {
	return &latencies{sloS: sloS, timeoutS: timeoutS, serviceS: serviceS}
}

// setRegime sets the queue that requests served on arrival join.
func (l *latencies) setRegime(lambda float64, servers int) {
	if l.regime.lambda == lambda && l.regime.servers == servers {
		return
	}
	r := erlangRegime{lambda: lambda, servers: servers}
	a := lambda * l.serviceS
	if servers > 0 && a < float64(servers) {
		r.stable = true
		r.pWait = planner.ErlangC(servers, a)
		r.theta = (float64(servers) - a) / l.serviceS
		r.missSLO = r.pWait * math.Exp(-r.theta*l.sloS)
		if l.timeoutS > 0 {
			r.missTimeout = r.pWait * math.Exp(-r.theta*l.timeoutS)
			if l.sloS >= l.timeoutS {
				r.missSLO = r.missTimeout // a drop is a miss even within a long SLO
			}
		}
		r.queue = r.pWait * a / (float64(servers) - a)
	}
	l.regime = r
}

// add records mass requests that waited w seconds in the fluid queue; w ≤
// 0 means served on arrival, which joins the Erlang-C regime.
func (l *latencies) add(w, mass float64) {
	if mass <= 0 {
		return
	}
	if w <= 0 {
		l.onArrival(mass)
		return
	}
	if w <= l.sloS {
		l.within += mass
	}
	if l.off {
		return
	}
	l.wait.addPoint(w, mass)
	mu := 1 / l.serviceS
	l.latency.addCDF(w, w+tailCut/mu, mass, func(t float64) float64 {
		if t <= w {
			return 0
		}
		return -math.Expm1(-mu * (t - w))
	})
}

// addDropped records mass requests that gave up after waiting w seconds:
// they are misses, at w in both distributions.
func (l *latencies) addDropped(w, mass float64) {
	if l.off {
		return
	}
	l.wait.addPoint(w, mass)
	l.latency.addPoint(w, mass)
}

// addLinear records mass requests whose waits run linearly from w0 to
// w0+slope·mass, i.e. spread uniformly over that range; the part below
// zero was served on arrival.
func (l *latencies) addLinear(w0, slope, mass float64) {
	if mass <= 0 {
		return
	}
	w1 := w0 + slope*mass
	if math.Abs(w1-w0) < 1e-12 {
		l.add(w0, mass)
		return
	}
	lo, hi := math.Min(w0, w1), math.Max(w0, w1)
	density := mass / (hi - lo)
	if lo < 0 {
		l.onArrival(density * (math.Min(hi, 0) - lo))
		lo = 0
	}
	if hi <= lo {
		return
	}
	m := density * (hi - lo)
	l.within += density * math.Max(0, math.Min(hi, l.sloS)-lo)
	if l.off {
		return
	}
	l.wait.addCDF(lo, hi, m, func(t float64) float64 { return math.Min(math.Max((t-lo)/(hi-lo), 0), 1) })
	mu := 1 / l.serviceS
	span := hi - lo
	l.latency.addCDF(lo, hi+tailCut/mu, m, func(t float64) float64 {
		switch {
		case t <= lo:
			return 0
		case t <= hi:
			return ((t - lo) + math.Expm1(-mu*(t-lo))/mu) / span
		}
		return 1 - (math.Exp(-mu*(t-hi))-math.Exp(-mu*(t-lo)))/(mu*span)
	})
}

// onArrival records mass requests that found no backlog: Erlang-C waits in
// a stable regime, none otherwise.
func (l *latencies) onArrival(mass float64) {
	r := l.regime
	if !r.stable {
		l.within += mass
		if l.off {
			return
		}
		l.wait.addPoint(0, mass)
		l.serviceOnly += mass
		return
	}
	l.within += mass * (1 - r.missSLO)
	l.erlangDropped += mass * r.missTimeout
	if l.off {
		return
	}
	if l.pending.lambda != r.lambda || l.pending.servers != r.servers {
		l.flush()
		l.pending = l.regime
	}
	l.pendingMass += mass
}

func (l *latencies) serviceCDF(t float64) float64 { return -math.Expm1(-t / l.serviceS) }

// finish records what is pending; call it once, at the end.
func (l *latencies) finish() {
	l.flush()
	l.latency.addCDF(0, l.serviceS*tailCut, l.serviceOnly, l.serviceCDF)
	l.serviceOnly = 0
}

// flush records the pending Erlang-C mass in the distributions (onArrival
// has counted it).
func (l *latencies) flush() {
	m, r := l.pendingMass, l.pending
	l.pendingMass = 0
	if m <= 0 {
		return
	}
	waiting := m * r.pWait
	l.wait.addPoint(0, m-waiting)
	l.serviceOnly += m - waiting
	if r.pWait < 1e-12 {
		return // no one waits: nothing more to record
	}
	T := l.timeoutS
	cut := tailCut / r.theta
	if T > 0 && T < cut {
		cut = T
	}
	tail := m * r.missTimeout // waits beyond the timeout: dropped
	// Waits: exponential for C, cut at the timeout.
	theta := r.theta
	norm := -math.Expm1(-theta * cut)
	l.wait.addCDF(0, cut, waiting-tail, func(t float64) float64 { return -math.Expm1(-theta*t) / norm })
	l.wait.addPoint(T, tail)
	// Latency: wait + service (hypoexponential) for C, the drops at the
	// timeout.
	mu := 1 / l.serviceS
	l.latency.addCDF(0, cut+l.serviceS*tailCut, waiting-tail, func(t float64) float64 {
		if math.Abs(theta-mu) < 1e-9*mu {
			return 1 - math.Exp(-mu*t)*(1+mu*t)
		}
		return 1 - (mu*math.Exp(-theta*t)-theta*math.Exp(-mu*t))/(mu-theta)
	})
	l.latency.addPoint(T, tail)
}
