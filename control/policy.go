package control

import (
	"fmt"
	"math"
	"slices"

	"github.com/prewarm/prewarm/planner"
)

// PolicyState is what a controller has learned of its own decisions, as
// opposed to the demand and its forecasts (its memory, which shadows
// share): the strategy it follows, the reactive rules' clocks, the
// calibrated quantile with its memory, the backlog it estimates and what
// it asked for over the last boot delay. A shadow's state is this alone.
type PolicyState struct {
	Strategy             Strategy
	Level                string
	Reactive             planner.ReactiveState
	Quantile, MeanDemand float64
	// QuantileMemory is the calibration's memory ln(1 − q) (see
	// State.QuantileMemory).
	QuantileMemory float64
	Backlog        float64
	Estimated      Estimate
	Asked          []planner.Step
}

// Policy returns a copy of the controller's policy state.
func (c *Controller) Policy() PolicyState {
	return PolicyState{Strategy: c.strategy, Level: c.level, Reactive: c.reactive, Quantile: c.quantile,
		MeanDemand: c.meanDemand, QuantileMemory: c.lnTail, Backlog: float64(c.backlog), Estimated: c.estimated,
		Asked: slices.Clone(c.asked)}
}

// RestorePolicy replaces the controller's policy state with p, taken by
// Policy from a controller of the same pool; a state out of range is
// refused and the controller left as it was.
func (c *Controller) RestorePolicy(p PolicyState) error {
	if err := p.Validate(); err != nil {
		return err
	}
	c.strategy, c.level, c.reactive = p.Strategy, p.Level, p.Reactive
	c.quantile, c.meanDemand, c.lnTail = p.Quantile, p.MeanDemand, p.QuantileMemory
	c.backlog, c.estimated = planner.Backlog(p.Backlog), p.Estimated
	c.asked = slices.Clone(p.Asked)
	return nil
}

// Validate refuses a policy state out of range (RestorePolicy checks it
// too; a caller restoring several checks them all first).
func (p PolicyState) Validate() error {
	if !(p.Quantile >= 0.5 && p.Quantile < 1) || !(p.MeanDemand >= 0) || math.IsInf(p.MeanDemand, 0) ||
		!(p.QuantileMemory <= 0 && p.QuantileMemory > -100) || !(p.Backlog >= 0) || math.IsInf(p.Backlog, 0) ||
		!(p.Estimated.Arrived >= 0) || !(p.Estimated.Late >= 0) || p.Strategy.Flat < 0 {
		return fmt.Errorf("controller policy state out of range: quantile %v (memory %v), mean demand %v, backlog %v, arrived %v, late %v, flat %d",
			p.Quantile, p.QuantileMemory, p.MeanDemand, p.Backlog, p.Estimated.Arrived, p.Estimated.Late, p.Strategy.Flat)
	}
	return nil
}

// Follow makes c decide from now on as from does: from's planner
// settings and strategy, its calibrated quantile and the plans of its
// refit in force (both must have adopted the same refits). c keeps its
// memory, its reactive rules' clocks (they watch c's own pool), what its
// pool was asked for and its own estimates. The tuner calls it on the
// live controller when it adopts a candidate whose shadow is from.
func (c *Controller) Follow(from *Controller) {
	c.plan, c.strategy = from.plan, from.strategy
	c.quantile, c.lnTail, c.meanDemand = from.quantile, from.lnTail, from.meanDemand
	c.last.ModelPlan, c.last.ProfilePlan, c.last.Quantile = from.last.ModelPlan, from.last.ProfilePlan, from.last.Quantile
}

// PlannerConfig returns the planner settings the controller plans and
// decides with.
func (c *Controller) PlannerConfig() planner.Config { return c.plan }

// Replan puts the refit in force in owner into c (a shadow of owner),
// planned at c's own settings and quantile: for a shadow whose owner's
// refit was restored after a restart rather than adopted.
func (c *Controller) Replan(owner *Controller) {
	r := owner.last
	r.Quantile = c.quantile
	r.ModelPlan, r.ProfilePlan = nil, nil
	if r.Forecast.Forecast.Horizon() > 0 {
		r.ModelPlan = c.planFor(r, r.Forecast, 0)
	}
	if r.ProfileForecast.Forecast.Horizon() > 0 {
		r.ProfilePlan = c.planFor(r, r.ProfileForecast, 1)
	}
	c.last = r
}
