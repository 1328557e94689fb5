// Package fit forecasts one series with a method named on the command
// line: the methods 'forecaster fit' offers, and the seasonal periods
// each is given (those asked for, or those detected in the series).
package fit

import (
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/holtwinters"
	"github.com/prewarm/prewarm/model/seasonal"
)

// Method is one forecasting method by name.
type Method struct {
	Name string
	// About says what it is, for help texts.
	About string
	// build makes the forecaster for the series' seasonal periods
	// (shortest first; none for a non-seasonal series; nil for auto when
	// the periods are detected: it detects them itself) and the series'
	// step (0 for an indexed series).
	build func(periods []int, step time.Duration) model.Forecaster
}

// Methods lists the methods, the default one first.
func Methods() []Method {
	return []Method{
		{"auto", "prewarm's default: validated robust combination with calibrated intervals", func(p []int, step time.Duration) model.Forecaster {
			// With nil periods auto offers the clock's day and week and
			// adds what it detects itself.
			return auto.New(auto.Config{Periods: p, Step: step})
		}},
		{"hw", "Holt-Winters (single or double seasonal), form chosen by AICc", func(p []int, _ time.Duration) model.Forecaster {
			return holtwinters.Forecaster{Periods: p}
		}},
		{"snaive", "seasonal naive at the shortest period", func(p []int, _ time.Duration) model.Forecaster {
			if len(p) == 0 {
				return seasonal.Naive{}
			}
			return seasonal.SeasonalNaive{Period: p[0]}
		}},
		{"profile", "median of the same step of the longest cycle over the last 4 cycles", func(p []int, _ time.Duration) model.Forecaster {
			if len(p) == 0 {
				return seasonal.Naive{}
			}
			return seasonal.Profile{Period: p[len(p)-1], Cycles: 4, Robust: true}
		}},
		{"naive2", "naive on seasonally adjusted data (the M4 benchmark)", func(p []int, _ time.Duration) model.Forecaster {
			if len(p) == 0 {
				return seasonal.Naive{}
			}
			return seasonal.Naive2{Period: p[0]}
		}},
		{"naive", "the last value", func([]int, time.Duration) model.Forecaster { return seasonal.Naive{} }},
	}
}

// Names are the methods' names, in order.
func Names() []string {
	var names []string
	for _, m := range Methods() {
		names = append(names, m.Name)
	}
	return names
}

// Lookup returns the method called name; ok is false when there is none.
func Lookup(name string) (m Method, ok bool) {
	for _, m := range Methods() {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}

// Series is what is forecast.
type Series struct {
	Values []float64
	// Step is the time between values; 0 for an indexed series (no clock:
	// no day or week to offer).
	Step time.Duration
	// Periods are the seasonal periods in steps, shortest first (empty:
	// none); nil detects them in Values.
	Periods []int
}

// Result is a forecast and the periods it was made with.
type Result struct {
	model.Forecast
	// Periods are the seasonal periods given, or those detected (empty,
	// never nil, when none were).
	Periods []int
}

// Forecast forecasts s horizon steps ahead with m, its prediction
// interval of coverage level (in (0, 1)). When the periods are detected,
// auto is left to offer the clock's day and week itself and add what it
// detects; the other methods are given the detected periods.
func (m Method) Forecast(s Series, horizon int, level float64) (Result, error) {
	periods, given := s.Periods, s.Periods
	if periods == nil {
		periods = seasonal.Detect(s.Values, seasonal.DetectOptions{Snap: seasonal.ClockPeriods(s.Step)})
		if periods == nil {
			periods = []int{}
		}
		given = periods
		if m.Name == "auto" {
			given = nil
		}
	}
	fc, err := m.build(given, s.Step).Forecast(s.Values, horizon, level)
	if err != nil {
		return Result{}, err
	}
	return Result{Forecast: fc, Periods: periods}, nil
}
