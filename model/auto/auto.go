package auto

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/seasonal"
)

// Config chooses how the auto forecaster sees the series. The zero value
// detects the periods from each history.
type Config struct {
	// Periods are the seasonal periods in steps, shortest first (e.g.
	// []int{24, 168} for hourly data). nil means detect them from each
	// history with seasonal.Detect.
	Periods []int
	// Origins is the most validation origins used to score the
	// candidates (forecasting the last h, 2h, … steps of the history from
	// the steps before them); 0 means 4.
	Origins int
	// Top is how many of the best-scoring candidates are averaged; 0
	// means 2.
	Top int
	// Step is the spacing of the series' observations, so that the
	// clock's periods (a day and a week, in steps) can always be
	// candidates; 0 means unknown (periods then come from Periods or
	// detection alone).
	Step time.Duration
}

// New returns the auto forecaster for cfg. It is safe for concurrent use.
func New(cfg Config) model.Forecaster {
	if cfg.Origins <= 0 {
		cfg.Origins = 4
	}
	if cfg.Top <= 0 {
		cfg.Top = 2
	}
	return &forecaster{cfg: cfg}
}

type forecaster struct{ cfg Config }

// Forecast implements model.Forecaster.
//
// It fills gaps, finds the periods, builds the candidate pool for them,
// scores each candidate on the last few horizons of the history, averages
// the Top best, and sets the interval from the empirical quantile of that
// average's own validation errors. A forecast that is not finite, or a
// history too short to validate on, falls back to seasonal naive (or naive)
// with the reason in Forecast.Fallback.
func (f *forecaster) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	if horizon < 1 {
		return model.Forecast{}, fmt.Errorf("auto: horizon %d must be at least 1", horizon)
	}
	if !(level > 0 && level < 1) {
		return model.Forecast{}, fmt.Errorf("auto: level %v must be in (0, 1), e.g. 0.95", level)
	}
	periods := cleanPeriods(f.cfg.Periods)
	short := 0
	if len(periods) > 0 {
		short = periods[0]
	}
	x := seasonal.FillGaps(history, short)
	if len(x) == 0 || math.IsNaN(x[0]) {
		return model.Forecast{}, model.ErrNoData
	}
	if periods == nil {
		periods = seasonal.Detect(x, seasonal.DetectOptions{})
		if len(periods) > 0 {
			x = seasonal.FillGaps(history, periods[0])
		}
	}
	if isConstant(x) {
		return fallback(x, periods, horizon, level, "constant history")
	}
	pool := candidates(periods, x)
	origins, pool := validationOrigins(len(x), horizon, pool, f.cfg.Origins)
	if len(origins) == 0 {
		return fallback(x, periods, horizon, level,
			fmt.Sprintf("%d observations are too few to validate a %d-step forecast", len(x), horizon))
	}
	v := validate(x, horizon, origins, pool)
	top := v.best(f.cfg.Top)
	mean := make([]float64, horizon)
	var names []string
	for _, i := range top {
		c := pool[i]
		p := c.point(x, horizon)
		for j := range mean {
			mean[j] += p[j] / float64(len(top))
		}
		names = append(names, c.name)
	}
	nonNegative := allNonNegative(x)
	lower, upper := v.bounds(top, mean, level, periods)
	if nonNegative {
		clipBelow(mean, 0)
		clipBelow(lower, 0)
		clipBelow(upper, 0)
	}
	if !allFinite(mean) || !allFinite(lower) || !allFinite(upper) {
		return fallback(x, periods, horizon, level, "combined forecast not finite")
	}
	return model.Forecast{Method: "auto[" + strings.Join(names, " + ") + "]",
		Mean: mean, Lower: lower, Upper: upper, Level: level}, nil
}

// fallback forecasts with seasonal naive at the shortest period (naive
// without one) and records why.
func fallback(x []float64, periods []int, horizon int, level float64, why string) (model.Forecast, error) {
	var fc model.Forecast
	var err error
	if len(periods) > 0 {
		fc, err = seasonal.SeasonalNaive{Period: periods[0]}.Forecast(x, horizon, level)
	} else {
		fc, err = seasonal.Naive{}.Forecast(x, horizon, level)
	}
	if err != nil {
		return fc, err
	}
	reason := fc.Method + ": " + why
	if fc.Fallback != "" {
		reason = fc.Fallback + "; " + why
	}
	fc.Fallback = reason
	return fc, nil
}

// cleanPeriods drops periods below 2 and sorts the rest, shortest first;
// nil stays nil (detect).
func cleanPeriods(periods []int) []int {
	if periods == nil {
		return nil
	}
	out := []int{}
	for _, p := range periods {
		if p >= 2 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func isConstant(x []float64) bool {
	for _, v := range x {
		if v != x[0] {
			return false
		}
	}
	return true
}

func allNonNegative(x []float64) bool {
	for _, v := range x {
		if v < 0 {
			return false
		}
	}
	return true
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func clipBelow(x []float64, lo float64) {
	for i, v := range x {
		if v < lo {
			x[i] = lo
		}
	}
}
