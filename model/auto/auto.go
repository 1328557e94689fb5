package auto

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/seasonal"
)

// Config chooses how the auto forecaster sees the series. The zero value
// detects the periods from each history; set Step (or Periods) so that
// the clock's day and week are always candidates.
type Config struct {
	// Periods are the clock's seasonal periods in steps, shortest first
	// (e.g. []int{24, 168} for hourly data): the day is the second
	// longest (the only one when there is one), the week the longest.
	// The periods seasonal.Detect finds are candidates too. nil means
	// the day and week of Step; an empty, non-nil slice means the series
	// has no seasonality and nothing is detected.
	Periods []int
	// Step is the spacing of the series' observations, from which the
	// clock's periods are computed when Periods is nil (the steps in a
	// day and in a week; seasonal.ClockPeriods). 0 means unknown: the
	// periods then come from detection alone.
	Step time.Duration
	// Origins is how many of the latest horizons validate the candidates
	// (forecasting the last h, 2h, … steps of the history from the steps
	// before them), besides one and two weeks back; 0 means 6.
	Origins int
	// Top is how many of the best-scoring candidates may be averaged
	// (each only while it scores within 30% of the best); 0 means 2.
	Top int
}

// New returns the auto forecaster for cfg. It is safe for concurrent use.
func New(cfg Config) model.Forecaster {
	if cfg.Origins <= 0 {
		cfg.Origins = 6
	}
	if cfg.Top <= 0 {
		cfg.Top = 2
	}
	return &forecaster{cfg: cfg}
}

type forecaster struct{ cfg Config }

// Forecast implements model.Forecaster.
//
// It fills gaps, finds the seasons (the clock's day and week, and the
// detected periods), replaces short bursts, builds the candidate pool
// for the seasons, scores each candidate on the latest horizons and one
// and two weeks back, averages the best with the runner-up when that
// scores close to it, and sets the interval from the empirical quantile
// of that combination's own recent errors, shaped by lead time and time
// of day. A forecast that is not finite, or a history too short to
// validate on, falls back to seasonal naive (or naive) with the reason in
// Forecast.Fallback.
func (f *forecaster) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	fc, _, err := f.Select(history, horizon, level)
	return fc, err
}

// Select implements model.Selector: it forecasts as Forecast does and
// returns, besides, the choice it made (the seasons, and the candidates
// averaged with their estimated parameters) as a forecaster of later
// windows of the same series. That forecaster skips the estimation and
// the search: it re-runs the chosen candidates on the window it is given,
// with initial states from that window, and sets the interval from their
// errors there, at a small fraction of the cost. It is nil when the
// forecast fell back.
func (f *forecaster) Select(history []float64, horizon int, level float64) (model.Forecast, model.Forecaster, error) {
	if err := checkArgs(horizon, level); err != nil {
		return model.Forecast{}, nil, err
	}
	short := 0
	if ps := cleanPeriods(f.cfg.Periods); len(ps) > 0 {
		short = ps[0]
	} else if ps := seasonal.ClockPeriods(f.cfg.Step); f.cfg.Periods == nil && len(ps) > 0 {
		short = ps[0]
	}
	x := seasonal.FillGaps(history, short)
	if len(x) == 0 || math.IsNaN(x[0]) {
		return model.Forecast{}, nil, model.ErrNoData
	}
	seasons := f.seasons(x)
	// The day of the first season (the clock's, when known) sets the
	// time of day of the interval and the despiking; only the clock's
	// week sets the weekly validation origins.
	c := &chosen{full: f, fillPeriod: short}
	if len(seasons) > 0 {
		c.day, c.week = seasons[0].day, seasons[0].week
		if seasons[0].from == "clock" {
			c.clockWeek = c.week
		}
		if c.day != short {
			c.fillPeriod = c.day
			x = seasonal.FillGaps(history, c.day)
		}
	}
	if isConstant(x) {
		fc, err := fallback(x, c.day, horizon, level, "constant history")
		return fc, nil, err
	}
	fit, _ := despike(x, c.day, c.week)
	candidates := pool(seasons, fit, horizon)
	origins, candidates := validationOrigins(len(x), horizon, c.clockWeek, candidates, f.cfg.Origins)
	if len(origins) == 0 {
		fc, err := fallback(x, c.day, horizon, level,
			fmt.Sprintf("%d observations are too few to validate a %d-step forecast", len(x), horizon))
		return fc, nil, err
	}
	v := validate(x, fit, horizon, origins, candidates)
	top := v.choose(f.cfg.Top)
	fc, ok, err := combination(v, top, level, c.day)
	if !ok {
		return fc, nil, err
	}
	for _, i := range top {
		m := candidates[i]
		c.members = append(c.members, candidate{name: m.name, need: m.need, point: m.restartedOf})
	}
	return fc, c, nil
}

// checkArgs rejects a horizon or level no method can serve.
func checkArgs(horizon int, level float64) error {
	if horizon < 1 {
		return fmt.Errorf("auto: horizon %d must be at least 1", horizon)
	}
	if !(level > 0 && level < 1) {
		return fmt.Errorf("auto: level %v must be in (0, 1), e.g. 0.95", level)
	}
	return nil
}

// combination averages the candidates top of v's pool into the forecast,
// with the interval from their combined errors (validation.bounds). ok is
// false when the result was not finite and the forecast fell back.
func combination(v *validation, top []int, level float64, day int) (fc model.Forecast, ok bool, err error) {
	x, horizon := v.x, v.h
	mean := make([]float64, horizon)
	var names []string
	for _, i := range top {
		c := v.pool[i]
		p := c.point(v.fit, horizon)
		for j := range mean {
			mean[j] += p[j] / float64(len(top))
		}
		names = append(names, c.name)
	}
	lower, upper := v.bounds(top, mean, level, day)
	if allNonNegative(x) {
		clipBelow(mean, 0)
		clipBelow(lower, 0)
		clipBelow(upper, 0)
	}
	if !allFinite(mean) || !allFinite(lower) || !allFinite(upper) {
		fc, err := fallback(x, day, horizon, level, "combined forecast not finite")
		return fc, false, err
	}
	return model.Forecast{Method: "auto[" + strings.Join(names, " + ") + "]",
		Mean: mean, Lower: lower, Upper: upper, Level: level}, true, nil
}

// chosen is the choice one Select made, kept to forecast later windows of
// the same series: the period gaps are filled at, the day and week, and
// the candidates averaged, whose point forecasters take any window.
type chosen struct {
	full                             *forecaster
	fillPeriod, day, week, clockWeek int
	members                          []candidate
}

// Forecast implements model.Forecaster for a later window of the series
// the choice was made on: the chosen candidates are validated on this
// window's latest horizons (and one and two weeks back) for the interval
// and averaged. A window the choice does not fit (too short for one of its
// candidates) is forecast by the full search instead.
func (c *chosen) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	if err := checkArgs(horizon, level); err != nil {
		return model.Forecast{}, err
	}
	x := seasonal.FillGaps(history, c.fillPeriod)
	if len(x) == 0 || math.IsNaN(x[0]) {
		return model.Forecast{}, model.ErrNoData
	}
	if isConstant(x) {
		return fallback(x, c.day, horizon, level, "constant history")
	}
	fit, _ := despike(x, c.day, c.week)
	origins, kept := validationOrigins(len(x), horizon, c.clockWeek, c.members, c.full.cfg.Origins)
	if len(origins) == 0 || len(kept) != len(c.members) {
		return c.full.Forecast(history, horizon, level)
	}
	v := validate(x, fit, horizon, origins, kept)
	top := make([]int, len(kept))
	for i := range top {
		top[i] = i
	}
	fc, _, err := combination(v, top, level, c.day)
	return fc, err
}

// fallback forecasts with seasonal naive at the shortest period (naive
// without one) and records why.
func fallback(x []float64, day, horizon int, level float64, why string) (model.Forecast, error) {
	var fc model.Forecast
	var err error
	if day >= 2 && len(x) > day {
		fc, err = seasonal.SeasonalNaive{Period: day}.Forecast(x, horizon, level)
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
