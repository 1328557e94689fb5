// Package seasonal finds and removes the repeating rhythm in a demand series
// and provides the simple forecasters built on it.
//
// Demand for GPUs follows the clock: a daily cycle (24 hourly steps, 48
// half-hourly, 1440 per minute) and, on top of it, a weekly one (168, 336,
// 10080); ClockPeriods computes them from the step. Detect finds periods
// from the data alone, from the peaks of the autocorrelation function
// (computed through gonum's FFT), including days that are not the clock's
// (169 five-minute steps of business hours) and weeks that are not seven
// days (WeekOf), and reports none for white noise. Classical (R's
// decompose), STL (R's stl: LOESS, robust mode included) and MSTL (R
// forecast's mstl, several periods) split a series into trend, seasonal
// and remainder, STL and MSTL matching R's output to 1e-9 (fixtures in
// testdata/, produced by testdata/r_stl.R); SeasonalityTest is the M4
// competition's test. SeasonalNaive (repeat the last cycle), Profile (the
// mean or median of the same position over the last few cycles, e.g. the
// same hour of the week) and Naive2 (the M4 competition's benchmark)
// implement model.Forecaster; they are prewarm's baselines and the
// fallbacks when a fitted model cannot be trusted.
//
// Everything here is pure computation on []float64: no files, no clock.
package seasonal
