// Package control runs prewarm's hybrid policy live, one pool at a time:
// the decision the forecaster service takes every tick, and the one the
// backtest's hybrid, predictive and scheduled policies take.
//
// A Controller is the stateful part around the pure planner:
//
//   - At every refit it forecasts demand from the history it is given (the
//     model, and the seasonal profile as a stand-in), scores its earlier
//     forecasts against what happened (planner.Gate's evidence, and the
//     per-slot errors), and plans both forecasts: each step's upper bound is
//     the point forecast plus the calibrated quantile of its own recent
//     errors at that time of day, capped at the need of the recent peak.
//     Each refit chooses the model afresh (methods searched, parameters
//     estimated); with Settings.ChooseModelDaily only the first of each
//     UTC day does, and the day's later refits re-run that choice on their
//     own history (Selection), which costs a small part of the search.
//   - Every decision it feeds the observation to the calibration, which
//     moves the forecast quantile until the estimated share of requests
//     served late matches the SLO target (planner.Calibration: its memory
//     runs past the top quantile, so a missed burst is paid back rather
//     than forgotten at the clamp), and
//     combines the trusted plan with the reactive rules (given back to the
//     plan once a scale-out is no longer needed) and the schedule floors.
//     During a cold start (the history shorter than the model needs, or
//     none of the model's forecasts scored against live demand yet, as
//     after 'forecaster import') the peak seen so far stands beside them
//     (the warm-up term) and the forecasts' bands are at least as wide as
//     the history's spread (coldstart.go).
//   - When the live signals cannot be read, Hold keeps the pool where it
//     is unless the plan or a floor raises it.
//
// State and Restore carry all of this memory across restarts. Like the
// planner, this package reads no clock, file or network: time and history
// are arguments, so the service, the backtest and tests drive it the same
// way.
package control
