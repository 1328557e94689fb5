// Package control runs prewarm's hybrid policy live, one pool at a time:
// the decision the forecaster service takes every tick.
//
// A Controller is the stateful part around the pure planner: at every refit
// it forecasts demand from the history it is given (the model, and the
// seasonal profile as a stand-in), turns both into capacity plans, and
// scores earlier forecasts against what really happened so planner.Gate can
// decide which plan to trust. Between refits, Decide combines the trusted
// plan with the reactive rules and the schedule floors (planner.Combine);
// when the live signals cannot be read, Hold keeps the pool where it is
// unless the plan or a floor raises it.
//
// Like the planner, this package reads no clock, file or network: time and
// history are arguments, so the service and tests drive it the same way.
package control
