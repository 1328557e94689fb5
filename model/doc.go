// Package model holds what every forecaster in prewarm shares: the Forecast
// result (point forecasts with a prediction interval) and the Forecaster
// interface the planner and the backtest call.
//
// Concrete methods live in the sub-packages: model/holtwinters (exponential
// smoothing, single and multiple seasonal periods) and model/seasonal (period
// detection, decomposition and the seasonal-naive and seasonal-profile
// baselines). Everything under model/ is pure computation: no files, no
// network, no clocks.
package model
