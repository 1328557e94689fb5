package planner

import (
	"fmt"
	"math"
	"time"
)

// InstancesFor returns how many instances serve rate requests/s under the
// configured sizing, before the min/max bounds:
//
//   - utilisation: ⌈rate / (RPS · TargetUtilisation)⌉;
//   - erlang-c: the fewest instances whose Slots·n servers, each serving one
//     request per ServiceTime, keep P(wait > SLO.Latency) ≤ 1 − SLO.Quantile
//     (see ErlangCServers), and at least the utilisation count: a
//     TargetUtilisation below 1 keeps headroom the queue alone would not.
//
// A rate that is zero, negative or NaN needs zero instances.
func (c *Config) InstancesFor(rate float64) int {
	if !(rate > 0) {
		return 0
	}
	if math.IsInf(rate, 1) {
		return c.Fleet.MaxInstances
	}
	if c.Sizing == SizingErlangC {
		slots := max(c.Fleet.Slots, 1)
		// A stable queue needs more than a = λ·S servers. When even that
		// is beyond MaxInstances (a runaway forecast, say), say so without
		// searching upwards one server at a time from a.
		if a := rate * c.Fleet.ServiceTime.Seconds(); c.Fleet.MaxInstances > 0 && a >= float64(c.Fleet.MaxInstances*slots) {
			return c.Fleet.MaxInstances + 1
		}
		servers := ErlangCServers(rate, c.Fleet.ServiceTime.Seconds(), c.SLO.Latency.Seconds(), c.SLO.Quantile)
		return max((servers+slots-1)/slots, c.utilisationCount(rate))
	}
	return c.utilisationCount(rate)
}

// utilisationCount is ⌈rate / (RPS · TargetUtilisation)⌉.
func (c *Config) utilisationCount(rate float64) int {
	perInstance := c.Fleet.rps() * c.TargetUtilisation
	if perInstance <= 0 {
		return 0
	}
	// The small tolerance keeps 20.0000000001 from becoming 21.
	return int(math.Ceil(rate/perInstance - 1e-9))
}

// MissShare estimates the share of requests arriving at rate requests/s
// that wait longer than SLO.Latency on instances ready instances, each
// Fleet.Slots servers of mean service time ServiceTime: Erlang C's
// P(wait > t) = C(c, a)·exp(−(c − a)·t/S), 1 when the queue is unstable.
// Without a service time it is the share beyond the instances' throughput,
// max(0, 1 − n·RPS/rate).
func (c *Config) MissShare(rate float64, instances int) float64 {
	if !(rate > 0) {
		return 0
	}
	if instances <= 0 {
		return 1
	}
	if math.IsInf(rate, 1) {
		return 1
	}
	if s := c.Fleet.ServiceTime.Seconds(); s > 0 {
		servers := instances * max(c.Fleet.Slots, 1)
		a := rate * s
		if a >= float64(servers) {
			return 1
		}
		return ErlangC(servers, a) * math.Exp(-(float64(servers)-a)*c.SLO.Latency.Seconds()/s)
	}
	return math.Max(0, 1-float64(instances)*c.Fleet.rps()/rate)
}

// missShareAbove reports whether MissShare(rate, instances) > share. The
// rules ask it at every decision, and the Erlang C sum is their costliest
// part; the wait's tail alone, exp(−(c − a)·latency/service), bounds the
// share from above (Erlang C is at most 1), so when the tail is below the
// share the answer is no without the sum. The answer is MissShare's in
// every case.
func (c *Config) missShareAbove(rate float64, instances int, share float64) bool {
	if s := c.Fleet.ServiceTime.Seconds(); s > 0 && rate > 0 && instances > 0 && !math.IsInf(rate, 1) {
		servers := instances * max(c.Fleet.Slots, 1)
		if a := rate * s; a < float64(servers) {
			// The same expression as MissShare's, so the same value; the
			// margin covers Erlang C's rounding above 1.
			if tail := math.Exp(-(float64(servers) - a) * c.SLO.Latency.Seconds() / s); tail < share*(1-1e-9) {
				return false
			}
		}
	}
	return c.MissShare(rate, instances) > share
}

// Backlog is a fluid estimate of the requests left waiting at the end of
// an interval, carried into the next by MissShareOver.
type Backlog float64

// MissShareOver estimates, like MissShare, the share of the requests
// arriving at rate requests/s over span that wait longer than
// SLO.Latency on instances ready instances, but with the queue's memory:
// a backlog b (requests) left by earlier intervals is served first. As a
// fluid the backlog runs at b + (rate − C)·t, C the instances'
// throughput, and a request arriving at t waits about backlog/C, so the
// share late is the share of the span the backlog stays above
// SLO.Latency·C; the rest wait as MissShare says. The backlog it returns
// is capped at backlogCapLatencies × the larger of SLO.Latency and one
// second of throughput, as requests do not wait for ever: clients time
// out. With no instances the backlog is returned as it was: nothing
// serves it, and the share late is the steady one. A short overload is
// absorbed by the latency the SLO allows instead of counting as wholly
// late, and the minutes a burst's backlog takes to drain count too.
// span ≤ 0 is MissShare with the backlog unchanged.
func (c *Config) MissShareOver(rate float64, instances int, span time.Duration, b Backlog) (float64, Backlog) {
	steady := c.MissShare(rate, instances)
	throughput := float64(max(instances, 0)) * c.Fleet.rps()
	if span <= 0 || math.IsInf(rate, 1) || !(rate >= 0) {
		return steady, b
	}
	if throughput <= 0 {
		return math.Min(steady, 1), b
	}
	limit := c.SLO.Latency.Seconds() * throughput
	T := span.Seconds()
	b0 := math.Max(float64(b), 0)
	slope := rate - throughput
	end := math.Min(math.Max(b0+slope*T, 0), backlogCapLatencies*math.Max(limit, throughput))
	// The share of the span the backlog stays above limit.
	var above float64
	switch {
	case slope == 0:
		if b0 > limit {
			above = 1
		}
	default:
		cross := (limit - b0) / slope // when b(t) = limit
		switch {
		case slope > 0 && cross <= 0, slope < 0 && cross >= T:
			above = 1
		case slope > 0 && cross < T:
			above = 1 - cross/T
		case slope < 0 && cross > 0:
			above = cross / T
		}
	}
	if rate >= throughput {
		steady = 0 // no steady state: the backlog says it all
	}
	return above + (1-above)*steady, Backlog(end)
}

// backlogCapLatencies bounds MissShareOver's backlog, in SLO latencies
// of throughput: the requests still waiting after six times the latency
// the SLO allows are taken to have given up.
const backlogCapLatencies = 6

// ErlangCServers returns the smallest number of servers c for an M/M/c queue
// with arrival rate lambda (requests/s) and mean service time serviceS
// (seconds) such that the waiting time W meets P(W > waitS) ≤ 1 − quantile.
// With offered load a = λ·S (Erlangs) and ErlangC(c, a) the probability of
// waiting at all,
//
//	P(W > t) = ErlangC(c, a) · exp(−(c − a)·t / S).
//
// It returns 0 for lambda ≤ 0 (or an infinite load) and otherwise at least
// ⌊a⌋+1 (a stable queue). The search is linear in a, so callers bound a
// first (Config.InstancesFor stops at MaxInstances).
func ErlangCServers(lambda, serviceS, waitS, quantile float64) int {
	if !(lambda > 0) || !(serviceS > 0) || math.IsInf(lambda*serviceS, 1) {
		return 0
	}
	// A quantile of 1 (or more, or NaN) has no finite answer: treat it as
	// the strictest the float arithmetic can tell apart from 1.
	if !(quantile < 1) {
		quantile = math.Nextafter(1, 0)
	}
	// A negative or NaN wait bound means "no wait allowed".
	if !(waitS >= 0) {
		waitS = 0
	}
	a := lambda * serviceS
	tail := 1 - quantile
	// Erlang B by the stable recursion B(k) = a·B(k−1) / (k + a·B(k−1)),
	// carried up to the first stable c and then one server at a time.
	b := 1.0
	c := 0
	first := int(math.Floor(a)) + 1
	for c < first {
		c++
		b = a * b / (float64(c) + a*b)
	}
	for {
		pWait := erlangCFromB(c, a, b)
		if pWait*math.Exp(-(float64(c)-a)*waitS/serviceS) <= tail {
			return c
		}
		c++
		b = a * b / (float64(c) + a*b)
	}
}

// ErlangC returns the probability that an arriving request waits in an
// M/M/c queue with offered load a Erlangs (1 when c ≤ a: the queue is
// unstable).
func ErlangC(c int, a float64) float64 {
	if float64(c) <= a {
		return 1
	}
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return erlangCFromB(c, a, b)
}

// erlangCFromB converts Erlang B to Erlang C: C = c·B / (c − a·(1 − B)).
func erlangCFromB(c int, a, b float64) float64 {
	return float64(c) * b / (float64(c) - a*(1-b))
}

// Bounded is n bounded to [MinInstances, MaxInstances].
func (c *Config) Bounded(n int) int {
	n, _ = c.clamp(n)
	return n
}

// clamp bounds n to [MinInstances, MaxInstances] and says which bound, if
// any, applied.
func (c *Config) clamp(n int) (int, string) {
	switch {
	case n < c.Fleet.MinInstances:
		return c.Fleet.MinInstances, "min instances"
	case n > c.Fleet.MaxInstances:
		return c.Fleet.MaxInstances, "max instances"
	}
	return n, ""
}

// SizeForPeak returns c with the instance's throughput set so that a peak
// of peakRPS needs exactly instances instances (InstancesFor, before
// min/max): the weakest instance (fewest requests/s) that serves the peak
// on that many. Fleet.Slots is kept and Fleet.ServiceTime follows, each
// slot serving one request per ServiceTime (RPSPerInstance = Slots /
// ServiceTime). With utilisation sizing that is peakRPS / (instances ·
// TargetUtilisation); with Erlang-C sizing it also meets the SLO at the
// peak, found by bisection to a part in 10⁹.
func (c Config) SizeForPeak(peakRPS float64, instances int) (Config, error) {
	if !(peakRPS > 0) || math.IsInf(peakRPS, 0) || instances < 1 {
		return c, fmt.Errorf("planner: sizing for a peak of %v req/s on %d instances: want a finite peak > 0 and at least 1 instance", peakRPS, instances)
	}
	if !(c.TargetUtilisation > 0 && c.TargetUtilisation <= 1) {
		return c, fmt.Errorf("planner: target utilisation %v (--target-util, target_utilisation) must be in (0, 1]", c.TargetUtilisation)
	}
	slots := float64(max(c.Fleet.Slots, 1))
	set := func(rps float64) Config {
		d := c
		d.Fleet.RPSPerInstance = rps
		d.Fleet.ServiceTime = time.Duration(slots / rps * float64(time.Second))
		return d
	}
	lo := peakRPS / (float64(instances) * c.TargetUtilisation)
	if c.Sizing != SizingErlangC {
		return set(lo), nil
	}
	needs := func(rps float64) int {
		d := set(rps)
		d.Fleet.MaxInstances = max(d.Fleet.MaxInstances, instances)
		return d.InstancesFor(peakRPS)
	}
	if needs(lo) <= instances {
		return set(lo), nil
	}
	hi := 2 * lo
	for needs(hi) > instances {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		if needs(mid) <= instances {
			hi = mid
		} else {
			lo = mid
		}
	}
	return set(hi), nil
}
