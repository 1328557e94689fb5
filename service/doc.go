// Package service is prewarm's long-running scaling loop. Every interval,
// for every pool of the configuration (package poolspec), it reads the pool's
// demand from the store, refits the forecast when due, decides the capacity
// with the hybrid policy (package control) and, for a pool in mode active,
// applies it through the pool's back-end wrapped in actuator.Safe. A pool
// in mode forecast-only (the default) reads its real capacity and computes
// everything, and shows what it would do; a paused pool holds. It also
// serves the status page (package service/ui) and the HTTP API (see
// Handler): /metrics, /healthz (alive) apart from /readyz (decisions
// succeed), each pool's status, forecast, schedule, last day of samples
// and decision history, the mode endpoint and the release hook.
//
// Pools decide in parallel, at most Workers at once, each within a
// deadline of one interval: the store reads get half of it, so a store
// that does not answer still leaves time to hold the pool and apply its
// plan and schedule floors; a back-end call that does not return fails its
// pool only, and the pool is skipped until it does. When the service stops
// (SIGTERM), decisions in flight finish and no new one starts.
//
// What each pool must not forget is kept in a state file (package
// service/state): the actuator's last change, written before the change is
// made, the controller's memory (the refit in force, the gate's scores,
// the reactive clocks), a mode set at run time, and the pool's decision
// history (decisions.go). A restart, even after kill -9, restores them:
// it neither repeats nor accelerates a change, and a model the gate
// demoted stays demoted.
//
// The service owns the wiring between the pure parts (model, planner,
// control) and the I/O parts (store, actuator); cmd/forecaster only parses
// flags and calls it.
package service
