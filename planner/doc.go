// Package planner turns demand forecasts and live signals into a capacity
// schedule: how many instances a pool should have ready, and when to start
// them so they are warm before the demand arrives.
//
// The planner is pure: it reads no clock, file or network; every input,
// including "now", is an argument. That keeps it testable like Kubernetes'
// HPA replica calculator and lets the backtest replay it exactly.
//
// It is built from small functions that a controller (the backtest, the
// scaling service) composes at every decision:
//
//   - [DefaultConfig] holds the field defaults; [Config.Validate] names the
//     bad field.
//   - Sizing: [Config.InstancesFor] turns a request rate into an instance
//     count, either at a target utilisation or by queueing theory (Erlang C:
//     the smallest fleet whose wait meets the SLO, no busier than the target
//     utilisation); [Config.MissShare] is the share of requests a fleet
//     would serve late; [Config.SizeForPeak] sizes an instance so a peak
//     needs a given fleet.
//   - [ForecastPlan] turns a forecast's upper bounds into a pre-warm
//     schedule: each step is sized at the bound and asked for one boot delay
//     before it is needed. The bound's quantile is not the SLO's: see
//     [Config.ForecastQuantile], [Calibration] and [Bounds].
//   - [Config.ReactiveNext] applies threshold rules (scale out on high
//     utilisation, a long queue or a breached SLO; scale in when idle) with
//     cooldowns; [Config.ReturnToPlan] gives a scale-out back to the plan.
//   - [Window] floors ("weekdays 09:45-12:00 at least 6") from
//     [ParseWindows].
//   - [Config.Combine] takes the largest of these terms (the hybrid policy)
//     and keeps the reason of the term that won.
//   - [Config.Gate] decides whether the forecast term is trusted, replaced
//     by a seasonal profile, or dropped in favour of the reactive rules
//     alone, from the evidence in a [GateInput] (the controller scores its
//     own earlier forecasts for it).
//   - [Prices.UsageOf] prices a schedule: GPU-hours, reserved baseline and
//     on-demand burst.
package planner
