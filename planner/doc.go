// Package planner turns demand forecasts and live signals into a capacity
// schedule: how many instances a pool should have ready, and when to start
// them so they are warm before the demand arrives.
//
// The planner is pure: it reads no clock, file or network; every input,
// including "now", is an argument. That keeps it testable like Kubernetes'
// HPA replica calculator and lets the backtest replay it exactly.
package planner
