// Package seasonal finds and removes the repeating rhythm in a demand series
// and provides the simple forecasters built on it.
//
// Demand for GPUs follows the clock: a daily cycle (24 hourly steps, 48
// half-hourly, 1440 per minute) and, on top of it, a weekly one (168, 336,
// 10080). Detect finds those periods from the data alone, from the peaks of
// the autocorrelation function (computed through gonum's FFT), and reports
// none for white noise. Classical (R's decompose) and STL (an STL-like
// loop of local linear smoothers) split a series into trend, seasonal and
// remainder; SeasonalityTest is the M4 competition's test. SeasonalNaive (repeat
// the last cycle), Profile (the mean or median of the same position over
// the last few cycles, e.g. the same hour of the week) and Naive2 (the M4
// competition's benchmark) implement model.Forecaster; they are prewarm's
// baselines and the fallbacks when a fitted model cannot be trusted.
//
// Everything here is pure computation on []float64: no files, no clock.
package seasonal
