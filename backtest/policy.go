package backtest

import (
	"fmt"
	"time"

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

// plans gives the forecasting policies the refit in force at a time.
type plans struct {
	start  time.Time
	every  time.Duration
	refits []refit
}

// at returns the latest refit made at or before now.
func (p plans) at(now time.Time) (refit, bool) {
	j := int(now.Sub(p.start) / p.every)
	if j < 0 || j >= len(p.refits) {
		return refit{}, false
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

// hybridPolicy is max(gated forecast plan, reactive rules, schedule floor).
type hybridPolicy struct {
	cfg   planner.Config
	plans plans
	state planner.ReactiveState
	// levels counts the minutes spent at each gate level.
	levels map[string]float64
	tick   time.Duration
}

func (h *hybridPolicy) decide(now time.Time, obs planner.Observation, current int) planner.Step {
	var reactive planner.Step
	h.state, reactive = h.cfg.ReactiveNext(h.state, obs, current)
	terms := []planner.Step{}
	r, ok := h.plans.at(now)
	level := planner.GateReactive
	if ok {
		level = r.Gate.Level
		var plan planner.Schedule
		switch level {
		case planner.GateModel:
			plan = r.ModelPlan
		case planner.GateProfile:
			plan = r.ProfilePlan
		}
		if st, found := plan.At(now); found {
			if level == planner.GateProfile {
				st.Reason = fmt.Sprintf("%s [%s]", st.Reason, r.Gate.Reason)
			}
			terms = append(terms, st)
		} else if level != planner.GateReactive {
			level = planner.GateReactive
		}
		if level == planner.GateReactive {
			reactive.Reason = fmt.Sprintf("%s [%s]", reactive.Reason, r.Gate.Reason)
		}
	}
	h.levels[level] += h.tick.Minutes()
	terms = append(terms, reactive, h.cfg.FloorStep(now))
	return h.cfg.Combine(now, terms...)
}
