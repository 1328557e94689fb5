// Package accuracy scores forecasts the way the M4 competition did (its
// "Benchmarks and Evaluation.R"), so prewarm's numbers can stand beside the
// published ones: sMAPE, MASE, OWA relative to the Naive2 benchmark, and for
// prediction intervals MSIS and coverage.
//
// Per-series scores are computed here; a data set's score is the plain mean
// of its series' scores, and OWA is formed from those means.
package accuracy
