package planner

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Observation is what the pool reported for the interval (At−Span, At].
type Observation struct {
	At time.Time
	// Span is the length of the interval the figures cover; a condition
	// first seen in this observation is taken to have held since At−Span.
	Span time.Duration
	// Utilisation is the busy share of the ready instances' throughput, in
	// [0, 1] (1 when requests are waiting).
	Utilisation float64
	// Queue is the number of requests waiting at At.
	Queue float64
	// DemandRPS is the arrival rate over the interval; it sizes
	// proportional scale-outs when Reactive.MaxStep > ScaleOutStep.
	DemandRPS float64
}

// ReactiveState is the memory the reactive rules carry from one decision to
// the next. The zero value is a fresh start.
type ReactiveState struct {
	// Desired is the reactive term's recommendation; 0 before the first
	// decision.
	Desired int
	// HighSince, QueueSince, SLOSince and LowSince say since when each
	// condition has held without a break (zero: not now).
	HighSince, QueueSince, SLOSince, LowSince time.Time
	// LastOut and LastAction are when the last scale-out and the last
	// action of either kind happened: the cooldown clocks.
	LastOut, LastAction time.Time
	// FitsPlanSince is since when the observed load has fitted the plan in
	// force while the term stood above it (zero: not now); see
	// ReturnToPlan.
	FitsPlanSince time.Time
}

// ReactiveNext applies the reactive rules to one observation and returns the
// new state and the reactive term as a Step. current is the pool's desired
// count now (what the controller last asked for, booting instances
// included).
//
//   - Out: when utilisation > ScaleOutUtilisation for ScaleOutFor, or the
//     queue > ScaleOutQueue for ScaleOutQueueFor, and ScaleOutCooldown has
//     passed since the last scale-out: current + ScaleOutStep (or what the
//     observed load needs, up to MaxStep).
//     With Reactive.SLORule, also when the observed demand would keep
//     more than 1 − SLO.Quantile of requests waiting past SLO.Latency on
//     current instances (MissShare) for ScaleOutQueueFor: with long
//     service times a pool misses its SLO well below any utilisation
//     threshold.
//   - In: when utilisation < ScaleInUtilisation with an empty queue (less
//     than one request waiting) for ScaleInFor, and ScaleInCooldown has
//     passed since the last action: the term drops ScaleInStep below
//     current. With Reactive.SLORule, only if the smaller fleet would
//     still meet the SLO at the observed demand.
//   - Otherwise the term keeps its last recommendation: a reactive
//     scale-out holds until the load has really gone.
//
// With a warm tier the scale-out holds are capped and the surge rule is
// on (reactiveRules).
func (c *Config) ReactiveNext(s ReactiveState, obs Observation, current int) (ReactiveState, Step) {
	r := c.reactiveRules()
	began := obs.At.Add(-obs.Span)
	s.HighSince = track(s.HighSince, obs.Utilisation > r.ScaleOutUtilisation, began)
	s.QueueSince = track(s.QueueSince, obs.Queue > r.ScaleOutQueue, began)
	late := 1 - c.SLO.Quantile
	s.SLOSince = track(s.SLOSince, r.SLORule && c.missShareAbove(obs.DemandRPS, current, late), began)
	s.LowSince = track(s.LowSince, obs.Utilisation < r.ScaleInUtilisation && obs.Queue < 1 &&
		(!r.SLORule || !c.missShareAbove(obs.DemandRPS, current-r.ScaleInStep, late)), began)
	if s.Desired == 0 {
		s.Desired, _ = c.clamp(current)
	}
	held := func(since time.Time, d time.Duration) bool { return !since.IsZero() && obs.At.Sub(since) >= d }
	cooled := func(last time.Time, d time.Duration) bool { return last.IsZero() || obs.At.Sub(last) >= d }

	var reason string
	need := 0
	if r.PanicThreshold > 0 {
		need = c.InstancesFor(obs.DemandRPS)
	}
	switch {
	case r.PanicThreshold > 0 && current > 0 && float64(need) >= r.PanicThreshold*float64(current) && need > current:
		s.Desired = c.InstancesFor(obs.DemandRPS * r.SurgeHeadroom())
		reason = fmt.Sprintf("reactive: surge, %.3g req/s needs %d, %.3g× the %d asked for: %d (×%g headroom)",
			obs.DemandRPS, need, float64(need)/float64(current), current, s.Desired, r.SurgeHeadroom())
		s.LastOut, s.LastAction = obs.At, obs.At
	case (held(s.HighSince, r.ScaleOutFor) || held(s.QueueSince, r.ScaleOutQueueFor) || held(s.SLOSince, r.ScaleOutQueueFor)) &&
		cooled(s.LastOut, r.ScaleOutCooldown):
		step := r.ScaleOutStep
		if r.MaxStep > step {
			step = min(max(step, c.InstancesFor(obs.DemandRPS)-current), r.MaxStep)
		}
		switch {
		case held(s.HighSince, r.ScaleOutFor):
			reason = fmt.Sprintf("reactive: util %.0f%% > %.0f%% for %s, +%d", 100*obs.Utilisation,
				100*r.ScaleOutUtilisation, shortDuration(r.ScaleOutFor), step)
		case held(s.QueueSince, r.ScaleOutQueueFor):
			reason = fmt.Sprintf("reactive: queue %.0f > %.0f for %s, +%d", obs.Queue, r.ScaleOutQueue,
				shortDuration(r.ScaleOutQueueFor), step)
		default:
			reason = fmt.Sprintf("reactive: %.2g%% of requests would wait > %s on %d for %s, +%d",
				100*c.MissShare(obs.DemandRPS, current), shortDuration(c.SLO.Latency), current, shortDuration(r.ScaleOutQueueFor), step)
		}
		s.Desired = current + step
		s.LastOut, s.LastAction = obs.At, obs.At
	case held(s.LowSince, r.ScaleInFor) && cooled(s.LastAction, r.ScaleInCooldown) && current > c.Fleet.MinInstances:
		s.Desired = min(s.Desired, current-r.ScaleInStep)
		reason = fmt.Sprintf("reactive: util %.0f%% < %.0f%% for %s, -%d", 100*obs.Utilisation,
			100*r.ScaleInUtilisation, shortDuration(r.ScaleInFor), r.ScaleInStep)
		s.LastAction = obs.At
		s.LowSince = time.Time{} // the next scale-in needs a fresh idle spell
	default:
		reason = holdReason(s.Desired, obs)
	}
	n, bound := c.clamp(s.Desired)
	if bound != "" {
		reason = fmt.Sprintf("%s %d (%s)", bound, n, reason)
	}
	s.Desired = n
	return s, Step{At: obs.At, Desired: n, Reason: reason}
}

// reactiveRules are the reactive rules in force. With a warm tier a
// scale-out starts stopped instances, ready in Fleet.WarmStart, so the
// rules act on that time scale: a scale-out condition need hold no longer
// than the warm start (by the time a longer hold ends, warm instances
// asked for at its start would be serving), and the surge rule (Knative's
// panic mode) is on at WarmSurgeThreshold unless a threshold is set,
// because a surge that a cold boot would meet too late is met in time.
func (c *Config) reactiveRules() Reactive {
	r := c.Reactive
	if !c.Fleet.WarmTier() {
		return r
	}
	lead := c.Fleet.Lead()
	r.ScaleOutFor, r.ScaleOutQueueFor = min(r.ScaleOutFor, lead), min(r.ScaleOutQueueFor, lead)
	if r.PanicThreshold == 0 {
		r.PanicThreshold = WarmSurgeThreshold
	}
	return r
}

// WarmSurgeThreshold is the surge rule's threshold with a warm tier: the
// observed load needs this many times the instances asked for. Chosen on
// the burst generator's 28 days (seed 1) between 1.2 and 3: from 1.2 to
// 1.5 the running instance-hours differ by 0.1%, at 2 they are 5% more.
const WarmSurgeThreshold = 1.5

// holdReason is the reason of a decision that keeps desired: "reactive:
// hold 4 (util 62%, queue 0)". It runs at every decision, so it is built
// into one buffer, without fmt, and allocates once.
func holdReason(desired int, obs Observation) string {
	var buf [64]byte
	b := append(buf[:0], "reactive: hold "...)
	b = strconv.AppendInt(b, int64(desired), 10)
	b = append(b, " (util "...)
	b = strconv.AppendInt(b, int64(int(math.Round(100*obs.Utilisation))), 10)
	b = append(b, "%, queue "...)
	b = strconv.AppendInt(b, int64(int(math.Round(obs.Queue))), 10)
	b = append(b, ')')
	return string(b)
}

// track returns when a condition began: kept while it holds, began when it
// starts now, zero when it does not hold.
func track(since time.Time, holds bool, began time.Time) time.Time {
	switch {
	case !holds:
		return time.Time{}
	case since.IsZero():
		return began
	}
	return since
}

// ReturnToPlan gives a reactive scale-out back to the forecast plan: when
// the term stands above planned, and the observed load has fitted planned
// instances for Reactive.ReturnToPlanAfter, the term drops to planned.
// Fitting means that on planned instances the load would trigger no
// scale-out rule: its need is no more than planned, the utilisation it
// would bring stays under ScaleOutUtilisation, the queue is short and (with
// the SLO rule) the SLO would hold; so a return never starts a flap. Call it
// after ReactiveNext with the plan's desired count for now; ok reports a
// return. Without it a scale-out holds until the scale-in rule lets go, one
// instance per cooldown, for hours after the burst that caused it.
func (c *Config) ReturnToPlan(s ReactiveState, obs Observation, planned int) (ReactiveState, bool) {
	r := c.Reactive
	after := r.ReturnToPlanAfter
	fits := s.Desired > planned && planned > 0 && c.InstancesFor(obs.DemandRPS) <= planned &&
		obs.DemandRPS <= float64(planned)*c.Fleet.rps()*r.ScaleOutUtilisation && obs.Queue <= r.ScaleOutQueue &&
		(!r.SLORule || !c.missShareAbove(obs.DemandRPS, planned, 1-c.SLO.Quantile))
	s.FitsPlanSince = track(s.FitsPlanSince, fits, obs.At.Add(-obs.Span))
	if after <= 0 || !fits || obs.At.Sub(s.FitsPlanSince) < after {
		return s, false
	}
	s.Desired, s.FitsPlanSince = planned, time.Time{}
	return s, true
}
