// Package poolspec is the forecaster's configuration file and the one
// description of a pool that every part of prewarm reads: `forecaster
// serve`, and `backtest`, `plan` and `release` with --config FILE --pool
// NAME, so that they run exactly what the service runs.
//
// A Pool holds where the pool's demand is read, how it is sized (target
// utilisation, or Erlang C with slots and a service time), the reactive
// rules and their cooldowns, the forecast gate, the forecast grid, the
// schedule floors, the actuator's limits and the back-end's options, and
// its mode (forecast-only by default). From it derive the planner's
// configuration (Pool.Planner), the controller's settings (Pool.Settings)
// and the actuator's limits (Pool.Actuator).
//
// Parse works the way collector/config does, only more thoroughly: it
// walks the YAML node tree itself, so every problem is reported, not just
// the first, each as FILE:LINE: YAML.PATH: message, naming YAML keys and
// never Go fields. Unknown keys are errors, including a back-end's
// `options:` (each back-end declares its keys when it is registered, see
// Backends), every number has a range, and durations accept Prometheus'
// units (1d, 1w) as well as Go's. testdata/ holds good and bad files with
// the errors each must produce.
//
// FleetFlags are a pool's fleet, SLO and plan settings as the offline
// commands' flags give them, with a pool's defaults and its ranges
// (CheckRangeTable names the flag, not the YAML key); a value refused is a
// FlagError, which the forecaster exits 2 for.
package poolspec
