package backtest

import (
	"context"
	"fmt"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/tune"
)

// Policy names accepted by Run.
const (
	PolicyStatic     = "static"
	PolicyReactive   = "reactive"
	PolicyScheduled  = "scheduled"
	PolicyPredictive = "predictive"
	PolicyHybrid     = "hybrid"
	// PolicyOracle knows the future demand: each tick it asks for what the
	// demand of the next boot delay needs, sized as the plans are. No
	// policy that must forecast can do better at the same queue and
	// sizing target; it is the limit the others are measured against.
	PolicyOracle = "oracle"
	// PolicyFlat is the cheapest single fleet size that, in hindsight,
	// reaches the SLO target over the scored demand.
	PolicyFlat = "flat"
)

// Policies lists every policy, in the order reports show them.
func Policies() []string {
	return []string{PolicyStatic, PolicyFlat, PolicyReactive, PolicyScheduled, PolicyPredictive, PolicyHybrid, PolicyOracle}
}

// policy decides the desired count at each tick. obs is the newest
// observation the pool's metrics show (MetricsLag old); ok is false when
// there is none, as during a gap in the trace: a real service would find
// no sample and hold. current is the pool's desired count now.
type policy interface {
	decide(now time.Time, obs planner.Observation, ok bool, current int) planner.Step
}

// plans gives the forecasting policies the refits, made walk-forward.
type plans struct {
	start  time.Time
	every  time.Duration
	refits *refitStream // nil: the policies replayed need no forecast
	source *forecaster
}

// index returns the number of the latest refit made at or before now.
func (p plans) index(now time.Time) (int, bool) {
	j := int(now.Sub(p.start) / p.every)
	return j, p.refits != nil && j >= 0 && j < len(p.refits.refits)
}

// made waits until every refit is made and returns why the making ended
// early, if it did: the replays that read the refits are only valid when
// it did not.
func (p plans) made() error {
	if p.refits == nil {
		return nil
	}
	return p.refits.wait()
}

type staticPolicy struct {
	n      int
	reason string
}

func (s staticPolicy) decide(now time.Time, _ planner.Observation, _ bool, _ int) planner.Step {
	return planner.Step{At: now, Desired: s.n, Reason: s.reason}
}

type reactivePolicy struct {
	cfg   planner.Config
	state planner.ReactiveState
	// peakRPS is the largest demand seen: with a warm tier, what it
	// needs is kept warm.
	peakRPS float64
}

func (r *reactivePolicy) decide(now time.Time, obs planner.Observation, ok bool, current int) planner.Step {
	var st planner.Step
	if ok {
		r.state, st = r.cfg.ReactiveNext(r.state, obs, current)
		r.peakRPS = max(r.peakRPS, obs.DemandRPS)
	} else {
		st = planner.Step{At: now, Desired: current, Reason: "no metrics: hold"}
	}
	st = r.cfg.Combine(now, st, r.cfg.FloorStep(now))
	st.Warm = r.cfg.WarmFor(st.Desired, r.cfg.InstancesFor(r.peakRPS))
	return st
}

// planPolicy follows one forecast plan alone (predictive: the model's;
// scheduled: the seasonal profile's) plus the schedule floors. It runs a
// controller of its own so the plans are sized the same way as hybrid's
// (calibration, per-slot bounds, peak cap), but never trusts anything
// else: no gate, no reactive term.
type planPolicy struct {
	cfg     planner.Config
	ctl     *control.Controller // with Settings.Follow set
	plans   plans
	adopted int
}

func (p *planPolicy) decide(now time.Time, obs planner.Observation, ok bool, current int) planner.Step {
	adoptDue(p.ctl, p.plans, &p.adopted, now)
	if ok {
		p.ctl.Observe(now, obs, current)
	}
	st, found := p.ctl.PlanStep(now)
	if !found {
		st = planner.Step{At: now, Desired: current, Reason: "no forecast yet: hold"}
	}
	out := p.cfg.Combine(now, st, p.cfg.FloorStep(now))
	out.Warm = p.cfg.WarmFor(out.Desired, st.Desired+st.Warm) // with a warm tier: what the plan runs within its lead
	return out
}

// adoptDue puts in force, in time order, the refits made by now.
func adoptDue(ctl *control.Controller, pl plans, adopted *int, now time.Time) {
	if j, ok := pl.index(now); ok {
		for ; *adopted <= j; *adopted++ {
			r, ok := pl.refits.get(*adopted)
			if !ok {
				return // the making ended early: plans.made says why
			}
			ctl.Adopt(r, pl.source.history(*adopted))
		}
	}
}

// hybridPolicy is the live service's policy: a tune.Tuner around the
// hybrid control.Controller (the gated forecast plan, the reactive rules
// and schedule floors), replaying its candidates on twins of the pool and
// following the one chosen, fed the precomputed refits in time order as
// the service would make them.
type hybridPolicy struct {
	tuner   *tune.Tuner
	plans   plans
	adopted int // refits put in force so far
	// levels counts the minutes spent at each gate level, chosen those
	// under each candidate.
	levels, chosen map[string]float64
	tick           time.Duration
}

func (h *hybridPolicy) decide(now time.Time, obs planner.Observation, ok bool, current int) planner.Step {
	if j, ok := h.plans.index(now); ok {
		for ; h.adopted <= j; h.adopted++ {
			r, ok := h.plans.refits.get(h.adopted)
			if !ok {
				break // the making ended early: plans.made says why
			}
			h.tuner.Adopt(r, h.plans.source.history(h.adopted))
		}
	}
	var st planner.Step
	if ok {
		st = h.tuner.Decide(context.Background(), now, obs, current)
	} else {
		st = h.tuner.Hold(now, current, "no metrics")
	}
	h.levels[h.tuner.Live().Level()] += h.tick.Minutes()
	h.chosen[h.tuner.Candidate()] += h.tick.Minutes()
	return st
}

// oraclePolicy asks at each tick for the largest need of the demand over
// the next boot delay (an instance asked for now is ready then), each
// tick's need sized by planner.Config.InstancesFor; needs[i] is tick i's.
type oraclePolicy struct {
	cfg   planner.Config
	start time.Time
	tick  time.Duration
	// ahead[i] is the largest need over ticks [i, i+lead ticks] (the
	// boot delay, or the warm start with a warm tier); aheadCold[i] over
	// the warm tier's lead (Fleet.WarmLead), which it keeps warm.
	ahead, aheadCold []int
}

func newOracle(cfg planner.Config, start time.Time, tick time.Duration, needs []int) *oraclePolicy {
	ticks := func(d time.Duration) int { return int((d + tick - 1) / tick) }
	o := &oraclePolicy{cfg: cfg, start: start, tick: tick, ahead: windowMax(needs, ticks(cfg.Fleet.Lead()))}
	if cfg.Fleet.WarmTier() {
		o.aheadCold = windowMax(needs, ticks(cfg.Fleet.WarmLead()))
	}
	return o
}

func (o *oraclePolicy) decide(now time.Time, _ planner.Observation, _ bool, current int) planner.Step {
	i := int(now.Sub(o.start) / o.tick)
	n, cold := 0, 0
	if i >= 0 && i < len(o.ahead) {
		n = o.ahead[i]
		if o.aheadCold != nil {
			cold = o.aheadCold[i]
		}
	}
	st := planner.Step{At: now, Desired: n}
	if n != current { // the reason is only read for a change
		st.Reason = fmt.Sprintf("oracle: the next %s need %d", o.cfg.Fleet.Lead(), n)
	}
	st = o.cfg.Combine(now, st, o.cfg.FloorStep(now))
	st.Warm = o.cfg.WarmFor(st.Desired, cold)
	return st
}

// windowMax returns out[i] = max(x[i : i+w+1]) (the window cut at the
// end), with a monotone deque: O(len(x)).
func windowMax(x []int, w int) []int {
	out := make([]int, len(x))
	var dq []int // indices, their values decreasing
	j := 0       // next index to push
	for i := range x {
		for ; j < len(x) && j <= i+w; j++ {
			for len(dq) > 0 && x[dq[len(dq)-1]] <= x[j] {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, j)
		}
		for dq[0] < i {
			dq = dq[1:]
		}
		out[i] = x[dq[0]]
	}
	return out
}
