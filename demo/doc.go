// Package demo runs prewarm end to end on one machine with nothing to set
// up: synthetic inference demand goes into the embedded store, the real
// scaling service (package service) forecasts, plans and drives a
// simulated GPU fleet on a simulated clock, and the backtest compares the
// policies on the same demand. It is what `forecaster demo --replay` and
// `make demo-replay` run; the live demo with its page is package demo/live.
package demo
