// Package report builds prewarm's capacity-planning report: what to buy,
// what it will cost and how sure we are, for one pool's demand. It is the
// logic behind `forecaster report` (HTML, Markdown or JSON) and `forecaster
// plan` (its plan section as a table).
//
// Nothing here computes what another package already does. The numbers
// come from:
//
//   - control.Controller, run the way `forecaster serve` runs it: the last
//     Input.WarmUp of history is replayed through it (a refit every
//     RefitEvery, a decision every tick, fed the recorded demand), so its
//     gate has scored its own forecasts and its per-slot bounds and
//     calibrated quantile are those a service on this pool would have.
//     Then one refit at the end of the history makes the forecast and the
//     plan, and the horizon is decided tick by tick with the forecast's
//     mean as the demand: the hour-by-hour pre-warm schedule, floors,
//     warm-up and reactive terms included.
//   - package backtest: static, reactive, hybrid and oracle replayed over
//     the whole trace and scored over its last Input.BacktestWeeks weeks
//     (backtest.Config.ScoreFrom), the same call `forecaster backtest
//     --score-from` makes, so its GPU-hours are the backtest's.
//   - model/accuracy: the model's holdout MASE, sMAPE, MSIS and interval
//     coverage against seasonal naive, forecast by the controller from
//     rolling origins in the last days.
//   - planner: sizing (InstancesFor), costs (Prices.UsageOf) and floors.
//
// # Purchase advice
//
// The forecast's distribution at step t is read off its bands: the
// quantile function Q_t(z) runs through (−1.96, L95), (−1.28, L80),
// (0, mean), (1.28, U80), (1.96, U95), linear in between and extended
// linearly beyond, never below 0; z is standard normal. The need is
// N_t = clamp(InstancesFor(Q_t(z)), min, max), integrated over z on 81
// points of [−4, 4]. Reserving the k-th instance costs r·T over the
// horizon T; without it, the k-th instance is bought on demand at p for
// the hours it is needed, Σ_t P(N_t ≥ k)·Δt. The expected cost of a
// baseline of k reserved instances is
//
//	C(k) = r·k·T + p · Σ_t E[(N_t − k)⁺]·Δt
//
// and the advice is its minimiser k*. C is convex in k: its slope is
// r·T − p·Σ_t P(N_t ≥ k)·Δt, so k* is the largest k whose busy share
// b_k = Σ_t P(N_t ≥ k)·Δt / T is at least r / p (the newsvendor's
// critical ratio), e.g. 1.6/2.5 = 64% of the hours. b_k is the one busy
// share the report states: the share of the horizon's hours in which the
// forecast expects at least k instances to be needed. The baseline is set
// against on-demand, not spot: a reservation replaces capacity that must
// be there, and spot capacity is neither guaranteed nor uninterrupted.
//
// Above the baseline, spot carries part of the burst when its effective
// price p_spot·(1 + λ·b) is below on-demand, where λ is the interruptions
// per spot instance-hour and b the boot delay in hours (each interruption
// bills a replacement's boot). With S instances on spot, λ·b·S of them are
// re-booting on average, so S is capped at ⌊½·(1 − q)·P / (λ·b)⌋ for a
// plan peak of P and an SLO target q: the capacity lost to interruptions
// stays within half the SLO's miss budget (the other half is the
// forecast's). The spot layer is the S instances just above the baseline,
// the ones that run longest.
//
// The need is what the SLO requires of the demand; the plan runs above it
// (its calibrated margin, pre-warming a boot delay ahead). The baseline is
// set on the need so that a commitment is never made to that margin; the
// week's costs with the advice are then priced on the plan's own schedule
// (Prices.UsageOf), all on demand against reserved plus burst.
//
// # Risks
//
// Each risk is a rule with a documented threshold (see the Rule*
// constants in risks.go): history too short for the gate's seasons, a
// model that loses to seasonal naive on the holdout or was demoted by the
// gate, a forecast above max, a trend of the daily peaks that reaches max
// within the horizon (and when), bands too wide to plan from (or too
// narrow: the holdout's 95% or 80% coverage), a hybrid backtest below the
// SLO target, and prices left at their defaults.
//
// # Words
//
// The report is written for the people who pay: every cost carries its
// currency (Input.Currency) and, while the prices are the defaults, a
// placeholder mark; spans and counts are words; each judgement (the model
// against seasonal naive, the bands' coverage) is one sentence from one
// number, used wherever it appears; the formulas are in the last appendix;
// and the parts printed beside a total add up to it as printed.
//
// # Rendering
//
// Render writes the report as one self-contained HTML file (inline SVG
// charts, no script, no network fetch, no external font, print CSS for A4
// with page breaks), as Markdown for tickets, or as JSON with the same
// numbers for scripts.
package report
