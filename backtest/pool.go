package backtest

import (
	"errors"
	"fmt"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store"
)

// MaxHistorySteps bounds the forecast history over the forecast step, as
// the pool spec does (forecast.history / forecast.step, control.MaxSteps):
// a longer history is refused before anything is fitted.
const MaxHistorySteps = control.MaxSteps

// ErrOffGrid matches (errors.Is) the errors of a setting the trace's grid
// cannot honour: a forecast step, refit interval or decision interval
// that does not fit the demand's step, or a history of too many forecast
// steps. Resampling the demand, or changing the setting, fixes it.
var ErrOffGrid = errors.New("setting off the demand's grid")

// gridError is an error that matches ErrOffGrid, its message unchanged.
type gridError struct{ error }

func (gridError) Is(target error) bool { return target == ErrOffGrid }

func offGrid(format string, args ...any) error { return gridError{fmt.Errorf(format, args...)} }

// ForPool returns the configuration that replays tr through what
// `forecaster serve` runs for pool: its planner configuration (windows in
// its time zone, its actuator limits), its controller settings, its
// demand fold, and interval (the service's decision interval, the file's
// `interval`; 0 for the default) as the tick. The simulation's own
// settings (queue timeout, boot spread, drains, metrics lag, spot,
// scoring) are DefaultConfig's.
//
// A demand fold other than max or mean, or an interval that does not
// divide the demand's step, is an error naming the YAML key; the latter
// matches ErrOffGrid.
func ForPool(pool poolspec.Pool, interval time.Duration, tr Trace) (Config, error) {
	cfg := DefaultConfig()
	var err error
	if cfg.Planner, err = pool.Planner(); err != nil {
		return cfg, err
	}
	cfg.Forecast.Settings = pool.Settings()
	switch agg := pool.Demand.Aggregate; agg {
	case "":
		cfg.Forecast.Aggregate = DefaultAggregate
	case store.Max, store.Mean:
		cfg.Forecast.Aggregate = string(agg)
	default:
		return cfg, fmt.Errorf("pool %q: demand.aggregate %q: the backtest folds demand by max or mean only", pool.Name, agg)
	}
	// serve decides every interval; the tick must divide the demand's step.
	if interval > 0 && interval <= tr.Step && tr.Step%interval == 0 {
		cfg.Tick = interval
	} else if interval > 0 {
		return cfg, offGrid("interval %v does not divide the demand's step %v: the backtest decides on the demand's grid; resample with --step to a multiple of it",
			interval, tr.Step)
	}
	return cfg, nil
}

// GridKeys name, in CheckGrid's errors, the settings as the user gave
// them: command-line flags, or the pool's YAML keys (PoolGridKeys).
type GridKeys struct {
	Step, Refit, History string
}

// PoolGridKeys name the grid settings of a configuration from ForPool.
var PoolGridKeys = GridKeys{Step: "forecast.step of the pool", Refit: "forecast.refit_every of the pool",
	History: "forecast.history of the pool"}

// CheckGrid refuses a forecast grid tr cannot be folded onto (a forecast
// step that is not a multiple of the demand's step, a refit interval that
// is not a multiple of the forecast step) and a history of more than
// MaxHistorySteps forecast steps, naming the settings by keys. Its errors
// match ErrOffGrid.
func (c Config) CheckGrid(tr Trace, keys GridKeys) error {
	f := c.Forecast
	step := f.Step
	if step == 0 {
		step = defaultForecastStep(tr.Step)
	} else if step%tr.Step != 0 {
		return offGrid("%s %v: must be a multiple of the demand's step %v (--step)", keys.Step, step, tr.Step)
	}
	if f.RefitEvery > 0 && f.RefitEvery%step != 0 {
		return offGrid("%s %v: must be a multiple of the forecast step %v", keys.Refit, f.RefitEvery, step)
	}
	history := f.Settings.WithDefaults().History
	if n := history / step; n > MaxHistorySteps {
		return offGrid("%s %v at a forecast step of %v is %d steps, more than %d: give a coarser %s",
			keys.History, history, step, n, MaxHistorySteps, keys.Step)
	}
	return nil
}

// defaultForecastStep is the forecast step of a trace of step traceStep
// when none is set: control's default, rounded up to a multiple of the
// trace's step (a forecast step cannot be finer than the trace).
func defaultForecastStep(traceStep time.Duration) time.Duration {
	step := control.Settings{}.WithDefaults().Step
	if step < traceStep || step%traceStep != 0 {
		step = (step + traceStep - 1) / traceStep * traceStep
	}
	return step
}
