// Package service is prewarm's long-running scaling loop: every tick, for
// every configured pool, it reads the pool's demand from the store, refits
// the forecast when due, decides the capacity with the hybrid policy
// (package control) and applies it through the pool's actuator, wrapped in
// actuator.Safe. It also serves the HTTP API: /metrics, /healthz, the
// pools' state and plans, and the release hook for training jobs and idle
// GPUs.
//
// The service owns the wiring between the pure parts (model, planner,
// control) and the I/O parts (store, actuator); cmd/forecaster only parses
// flags and calls it.
package service
