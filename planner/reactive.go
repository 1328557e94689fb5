package planner

import (
	"fmt"
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
	// HighSince, QueueSince and LowSince say since when each condition has
	// held without a break (zero: not now).
	HighSince, QueueSince, LowSince time.Time
	// LastOut and LastAction are when the last scale-out and the last
	// action of either kind happened: the cooldown clocks.
	LastOut, LastAction time.Time
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
//   - In: when utilisation < ScaleInUtilisation with an empty queue (less
//     than one request waiting) for ScaleInFor, and ScaleInCooldown has
//     passed since the last action: the term drops ScaleInStep below
//     current.
//   - Otherwise the term keeps its last recommendation: a reactive
//     scale-out holds until the load has really gone.
func (c Config) ReactiveNext(s ReactiveState, obs Observation, current int) (ReactiveState, Step) {
	r := c.Reactive
	began := obs.At.Add(-obs.Span)
	s.HighSince = track(s.HighSince, obs.Utilisation > r.ScaleOutUtilisation, began)
	s.QueueSince = track(s.QueueSince, obs.Queue > r.ScaleOutQueue, began)
	s.LowSince = track(s.LowSince, obs.Utilisation < r.ScaleInUtilisation && obs.Queue < 1, began)
	if s.Desired == 0 {
		s.Desired, _ = c.clamp(current)
	}
	held := func(since time.Time, d time.Duration) bool { return !since.IsZero() && obs.At.Sub(since) >= d }
	cooled := func(last time.Time, d time.Duration) bool { return last.IsZero() || obs.At.Sub(last) >= d }

	var reason string
	switch {
	case (held(s.HighSince, r.ScaleOutFor) || held(s.QueueSince, r.ScaleOutQueueFor)) && cooled(s.LastOut, r.ScaleOutCooldown):
		step := r.ScaleOutStep
		if r.MaxStep > step {
			step = min(max(step, c.InstancesFor(obs.DemandRPS)-current), r.MaxStep)
		}
		if held(s.HighSince, r.ScaleOutFor) {
			reason = fmt.Sprintf("reactive: util %.0f%% > %.0f%% for %s, +%d", 100*obs.Utilisation,
				100*r.ScaleOutUtilisation, shortDuration(r.ScaleOutFor), step)
		} else {
			reason = fmt.Sprintf("reactive: queue %.0f > %.0f for %s, +%d", obs.Queue, r.ScaleOutQueue,
				shortDuration(r.ScaleOutQueueFor), step)
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
		reason = fmt.Sprintf("reactive: hold %d (util %.0f%%, queue %.0f)", s.Desired, 100*obs.Utilisation, obs.Queue)
	}
	n, bound := c.clamp(s.Desired)
	if bound != "" {
		reason = fmt.Sprintf("%s %d (%s)", bound, n, reason)
	}
	s.Desired = n
	return s, Step{At: obs.At, Desired: n, Reason: reason}
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
