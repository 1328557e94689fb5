package model

import "errors"

// Forecast is the output of a Forecaster: one point forecast per future step
// and a central prediction interval around it. The planner sizes capacity from
// Upper, so the interval's calibration matters as much as Mean.
type Forecast struct {
	// Method names the model that produced the forecast, e.g.
	// "ets(A,Ad,M)" or "dshw(24,168)", so reports can say what ran.
	Method string
	// Mean holds the point forecasts, Mean[0] being one step after the
	// last observation.
	Mean []float64
	// Lower and Upper bound the central prediction interval at Level.
	Lower, Upper []float64
	// Level is the interval's nominal coverage in (0, 1), e.g. 0.95.
	Level float64
	// Fallback is empty when the requested method ran, and otherwise says
	// which simpler method was used instead and why (too short, constant,
	// failed to converge, ...). A fallback is a result, not an error.
	Fallback string
}

// Horizon is the number of forecast steps.
func (f Forecast) Horizon() int { return len(f.Mean) }

// Forecaster fits a model to an evenly spaced history (oldest first; NaN
// marks a missing observation) and forecasts horizon steps ahead with a
// central prediction interval at level (0 < level < 1).
//
// Implementations must not retain or modify history, and must return a
// finite forecast (falling back to a simpler method and recording why in
// Forecast.Fallback) rather than NaN or a panic for awkward input. An error is
// for arguments that no method can serve: horizon < 1, level outside (0,1),
// or a history with no finite value.
type Forecaster interface {
	Forecast(history []float64, horizon int, level float64) (Forecast, error)
}

// Selector is a Forecaster whose costly part, choosing a method and
// estimating its parameters, can be done once and reused. Select forecasts
// as Forecast does and returns, besides, a Forecaster that keeps the
// methods and parameters chosen and re-runs them on a later window of the
// same series (which may start elsewhere in the cycle) without searching
// again; it is nil when the forecast fell back. A refit loop that forecasts
// every few hours can so choose once a day.
type Selector interface {
	Forecaster
	Select(history []float64, horizon int, level float64) (Forecast, Forecaster, error)
}

// ErrNoData reports a history with no finite observation.
var ErrNoData = errors.New("history has no finite observation")
