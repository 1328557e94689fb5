package backtest

import (
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// Policy names accepted by Run.
const (
	PolicyStatic     = "static"
	PolicyReactive   = "reactive"
	PolicyScheduled  = "scheduled"
	PolicyPredictive = "predictive"
	PolicyHybrid     = "hybrid"
)

// Policies lists every policy, in the order reports show them.
func Policies() []string {
	return []string{PolicyStatic, PolicyReactive, PolicyScheduled, PolicyPredictive, PolicyHybrid}
}

// policy decides the desired count at each tick from what the fleet
// reported for the tick before (obs) and the forecasts made so far.
type policy interface {
	decide(now time.Time, obs planner.Observation, current int) planner.Step
}

// plans gives the forecasting policies the refits, made walk-forward.
type plans struct {
	start  time.Time
	every  time.Duration
	refits []control.Refit
	source *forecaster
	// hybrid is the controller the hybrid policy runs (one per Run).
	hybrid *control.Controller
}

// index returns the number of the latest refit made at or before now.
func (p plans) index(now time.Time) (int, bool) {
	j := int(now.Sub(p.start) / p.every)
	return j, j >= 0 && j < len(p.refits)
}

// at returns the latest refit made at or before now.
func (p plans) at(now time.Time) (control.Refit, bool) {
	j, ok := p.index(now)
	if !ok {
		return control.Refit{}, false
	}
	return p.refits[j], true
}

type staticPolicy struct {
	n      int
	reason string
}

func (s staticPolicy) decide(now time.Time, _ planner.Observation, _ int) planner.Step {
	return planner.Step{At: now, Desired: s.n, Reason: s.reason}
}

type reactivePolicy struct {
	cfg   planner.Config
	state planner.ReactiveState
}

func (r *reactivePolicy) decide(now time.Time, obs planner.Observation, current int) planner.Step {
	var st planner.Step
	r.state, st = r.cfg.ReactiveNext(r.state, obs, current)
	return r.cfg.Combine(now, st, r.cfg.FloorStep(now))
}

// planPolicy follows one forecast plan alone (predictive: the model's;
// scheduled: the seasonal profile's) plus the schedule floors.
type planPolicy struct {
	cfg     planner.Config
	plans   plans
	profile bool
}

func (p *planPolicy) decide(now time.Time, _ planner.Observation, current int) planner.Step {
	r, ok := p.plans.at(now)
	plan := r.ModelPlan
	if p.profile {
		plan = r.ProfilePlan
	}
	st, found := plan.At(now)
	if !ok || !found {
		st = planner.Step{At: now, Desired: current, Reason: "no forecast yet: hold"}
	}
	return p.cfg.Combine(now, st, p.cfg.FloorStep(now))
}

// hybridPolicy is max(gated forecast plan, reactive rules, schedule
// floor): the live service's control.Controller, fed the precomputed
// refits in time order as the service would make them.
type hybridPolicy struct {
	ctl     *control.Controller
	plans   plans
	adopted int // refits put in force so far
	// levels counts the minutes spent at each gate level.
	levels map[string]float64
	tick   time.Duration
}

func (h *hybridPolicy) decide(now time.Time, obs planner.Observation, current int) planner.Step {
	if j, ok := h.plans.index(now); ok {
		for ; h.adopted <= j; h.adopted++ {
			h.ctl.Adopt(h.plans.refits[h.adopted], h.plans.source.history(h.adopted))
		}
	}
	st := h.ctl.Decide(now, obs, current)
	h.levels[h.ctl.Level()] += h.tick.Minutes()
	return st
}
