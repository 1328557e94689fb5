package seasonal

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/prewarm/prewarm/model"
)

// checkArgs validates the arguments every Forecaster shares.
func checkArgs(history []float64, horizon int, level float64) error {
	if horizon < 1 {
		return fmt.Errorf("horizon %d: must be at least 1", horizon)
	}
	if !(level > 0 && level < 1) {
		return fmt.Errorf("level %v: must be in (0, 1), e.g. 0.95", level)
	}
	if countFinite(history) == 0 {
		return model.ErrNoData
	}
	return nil
}

// FillGaps returns a copy of x with every missing value (NaN or ±Inf)
// replaced by the value one period earlier when that is known, otherwise by
// the previous known value (the first known value for a leading gap). A
// period below 2 fills from the previous value only. It lets the simple
// forecasters run on histories with holes.
func FillGaps(x []float64, period int) []float64 {
	out := make([]float64, len(x))
	first := math.NaN()
	for _, v := range x {
		if finite(v) {
			first = v
			break
		}
	}
	prev := first
	for t, v := range x {
		switch {
		case finite(v):
			out[t] = v
		case period >= 2 && t >= period:
			out[t] = out[t-period]
		default:
			out[t] = prev
		}
		prev = out[t]
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// zScore returns the standard normal quantile for a central interval at
// level, e.g. 1.96 for 0.95.
func zScore(level float64) float64 {
	return distuv.UnitNormal.Quantile(0.5 + level/2)
}

// normalBounds fills lower and upper as mean ∓ z·se.
func normalBounds(mean, se []float64, level float64) (lower, upper []float64) {
	z := zScore(level)
	lower = make([]float64, len(mean))
	upper = make([]float64, len(mean))
	for i := range mean {
		lower[i] = mean[i] - z*se[i]
		upper[i] = mean[i] + z*se[i]
	}
	return lower, upper
}

// Naive repeats the last observation; its interval widens as √h with the
// standard deviation of one-step changes (a random walk). It is the last
// fallback of every method.
type Naive struct{}

// Forecast implements model.Forecaster.
func (Naive) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	if err := checkArgs(history, horizon, level); err != nil {
		return model.Forecast{}, err
	}
	return naiveForecast(FillGaps(history, 0), horizon, level), nil
}

func naiveForecast(x []float64, horizon int, level float64) model.Forecast {
	sigma := lagRMS(x, 1)
	last := x[len(x)-1]
	mean := make([]float64, horizon)
	se := make([]float64, horizon)
	for h := range mean {
		mean[h] = last
		se[h] = sigma * math.Sqrt(float64(h+1))
	}
	lower, upper := normalBounds(mean, se, level)
	return model.Forecast{Method: "naive", Mean: mean, Lower: lower, Upper: upper, Level: level}
}

// lagRMS returns the root mean square of x_t − x_{t−lag}, or 0 when the
// series is shorter than lag+1. The differences are divided by the largest
// one before squaring, so values near the float64 range do not overflow to
// an infinite interval.
func lagRMS(x []float64, lag int) float64 {
	largest := 0.0
	for t := lag; t < len(x); t++ {
		largest = math.Max(largest, math.Abs(x[t]-x[t-lag]))
	}
	if largest == 0 || math.IsInf(largest, 0) {
		return largest
	}
	var ss float64
	n := 0
	for t := lag; t < len(x); t++ {
		d := (x[t] - x[t-lag]) / largest
		ss += d * d
		n++
	}
	return largest * math.Sqrt(ss/float64(n))
}

// SeasonalNaive repeats the last full cycle: ŷ_{n+h} = y_{n+h−m·k} with k
// the number of whole cycles needed to reach the history. Its interval is
// R's forecast::snaive one: σ·√(⌊(h−1)/m⌋+1) with σ the root mean square of
// the seasonal differences y_t − y_{t−m}. With less than one cycle of
// history it falls back to Naive and says so.
type SeasonalNaive struct {
	// Period is the cycle length in steps, e.g. 24 for hourly data.
	Period int
}

// Forecast implements model.Forecaster.
func (s SeasonalNaive) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	if err := checkArgs(history, horizon, level); err != nil {
		return model.Forecast{}, err
	}
	m := s.Period
	x := FillGaps(history, m)
	if m < 2 || len(x) < m+1 {
		f := naiveForecast(x, horizon, level)
		f.Fallback = fmt.Sprintf("naive: %d observations, seasonal naive needs more than one period of %d", len(x), m)
		return f, nil
	}
	n := len(x)
	sigma := lagRMS(x, m)
	mean := make([]float64, horizon)
	se := make([]float64, horizon)
	for h := range mean {
		mean[h] = x[n-m+h%m]
		se[h] = sigma * math.Sqrt(float64(h/m+1))
	}
	lower, upper := normalBounds(mean, se, level)
	return model.Forecast{Method: fmt.Sprintf("snaive(%d)", m), Mean: mean, Lower: lower, Upper: upper, Level: level}, nil
}
