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
//   - Sizing: [Config.InstancesFor] turns a request rate into an instance
//     count, either at a target utilisation or by queueing theory (Erlang C:
//     the smallest fleet whose P99 wait meets the SLO).
//   - [ForecastPlan] turns a forecast with intervals into a pre-warm
//     schedule: each step is sized at the forecast quantile the SLO calls
//     for and asked for one boot delay before it is needed.
//   - [Reactive.Next] applies threshold rules (scale out on high utilisation
//     or a long queue, scale in when idle) with cooldowns.
//   - [Window] floors ("weekdays 09:45-12:00 at least 6") from
//     [ParseWindows].
//   - [Combine] takes the largest of these terms (the hybrid policy) and
//     keeps the reason of the term that won.
//   - [Gate] decides whether the forecast term is trusted, replaced by a
//     seasonal profile, or dropped in favour of the reactive rules alone.
package planner
