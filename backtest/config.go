package backtest

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// Trace is the demand to replay: RPS[i] is the request rate (requests/s)
// over [Start+i·Step, Start+(i+1)·Step). NaN marks a step with no record:
// no requests arrive in the simulation and the forecasters see a gap.
type Trace struct {
	Name  string
	Start time.Time
	Step  time.Duration
	RPS   []float64
}

// End returns the end of the trace's last step.
func (t Trace) End() time.Time { return t.Start.Add(time.Duration(len(t.RPS)) * t.Step) }

// Peak returns the largest finite rate of the trace.
func (t Trace) Peak() float64 {
	peak := 0.0
	for _, v := range t.RPS {
		if v > peak && !math.IsInf(v, 1) {
			peak = v
		}
	}
	return peak
}

func (t Trace) validate() error {
	if len(t.RPS) == 0 {
		return fmt.Errorf("trace %q has no steps", t.Name)
	}
	if t.Step <= 0 {
		return fmt.Errorf("trace %q: step %v must be positive", t.Name, t.Step)
	}
	for i, v := range t.RPS {
		if v < 0 || math.IsInf(v, 0) {
			return fmt.Errorf("trace %q: step %d (%s): rate %v must be finite and >= 0", t.Name, i,
				t.Start.Add(time.Duration(i)*t.Step).Format(time.RFC3339), v)
		}
	}
	return nil
}

// Config is the simulation's set-up. Start from DefaultConfig and set at
// least Planner.Fleet.RPSPerInstance.
type Config struct {
	// Planner holds the fleet, prices, SLO and policy settings.
	Planner planner.Config
	// Tick is the simulation's time step; 0 means one minute, or the
	// trace's step when that is finer. It must divide the trace's step.
	Tick time.Duration
	// QueueTimeout drops requests that have waited this long (default 60s).
	QueueTimeout time.Duration
	// Spot optionally runs part of the fleet on interruptible instances.
	Spot Spot
	// Forecast sets how the forecasting policies refit.
	Forecast ForecastOptions
}

// Spot configures interruptible instances.
type Spot struct {
	// Share of the instances above the reserved baseline that are spot, in
	// [0, 1]; 0 disables spot.
	Share float64
	// InterruptionsPerHour is each spot instance's interruption rate; an
	// interrupted instance is replaced, booting again.
	InterruptionsPerHour float64
	// Seed makes the interruptions reproducible.
	Seed uint64
}

// ForecastOptions sets the forecasting policies' walk-forward refits: the
// settings of the live controller the hybrid policy runs (control.Settings,
// documented there) and how the trace is folded onto the forecast grid.
// The backtest's defaults differ from the service's in two places: Step
// defaults to the trace's step, but at least 30 minutes, and RefitEvery to
// three hours (at least Step). Each refit fits model/auto afresh, tens of
// milliseconds on four weeks of history, so RefitEvery sets the backtest's
// cost; between refits the plan made at the last one holds and the reactive
// rules cover surprises. Step and RefitEvery must be multiples of the
// trace's step and of Step respectively.
type ForecastOptions struct {
	control.Settings
	// Aggregate folds the trace's steps into one forecast step: "max"
	// (the default: size for the busiest part of the step) or "mean".
	Aggregate string
}

// DefaultConfig returns the defaults of planner.DefaultConfig, a 60-second
// queue timeout, no spot instances and walk-forward refits of model/auto
// every three hours over the last 28 days with daily and weekly periods.
func DefaultConfig() Config {
	return Config{
		Planner:      planner.DefaultConfig(),
		QueueTimeout: time.Minute,
	}
}

// withDefaults fills the zero fields that depend on the trace.
func (c Config) withDefaults(t Trace) Config {
	if c.Tick == 0 {
		c.Tick = min(time.Minute, t.Step)
	}
	if c.QueueTimeout == 0 {
		c.QueueTimeout = time.Minute
	}
	f := &c.Forecast
	if f.Step == 0 {
		f.Step = t.Step
		for f.Step < 30*time.Minute {
			f.Step += t.Step
		}
	}
	if f.Aggregate == "" {
		f.Aggregate = "max"
	}
	if f.RefitEvery == 0 {
		f.RefitEvery = f.Step
		for f.RefitEvery < 3*time.Hour {
			f.RefitEvery += f.Step
		}
	}
	f.Settings = f.Settings.WithDefaults()
	return c
}

func (c Config) validate(t Trace) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := c.Planner.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Tick <= 0 || t.Step%c.Tick != 0 {
		bad("Tick %v must be positive and divide the trace's step %v", c.Tick, t.Step)
	}
	if c.QueueTimeout < 0 {
		bad("QueueTimeout %v must not be negative", c.QueueTimeout)
	}
	if !(c.Spot.Share >= 0 && c.Spot.Share <= 1) {
		bad("Spot.Share %v must be in [0, 1]", c.Spot.Share)
	}
	if !(c.Spot.InterruptionsPerHour >= 0) || math.IsInf(c.Spot.InterruptionsPerHour, 0) {
		bad("Spot.InterruptionsPerHour %v must be finite and >= 0", c.Spot.InterruptionsPerHour)
	}
	f := c.Forecast
	if f.Step <= 0 || f.Step%t.Step != 0 {
		bad("Forecast.Step %v must be a positive multiple of the trace's step %v", f.Step, t.Step)
	}
	if f.Step > 0 && (f.RefitEvery <= 0 || f.RefitEvery%f.Step != 0) {
		bad("Forecast.RefitEvery %v must be a positive multiple of Forecast.Step %v", f.RefitEvery, f.Step)
	}
	if f.Aggregate != "max" && f.Aggregate != "mean" {
		bad("Forecast.Aggregate %q: want max or mean", f.Aggregate)
	}
	if f.Horizon < 0 {
		bad("Forecast.Horizon %v must not be negative", f.Horizon)
	}
	if f.History < 0 {
		bad("Forecast.History %v must not be negative", f.History)
	}
	for i, p := range f.Periods {
		if f.Step > 0 && (p <= f.Step || p%f.Step != 0) {
			bad("Forecast.Periods[%d] %v must be a multiple of Forecast.Step %v and longer than it", i, p, f.Step)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("backtest: %w", errors.Join(errs...))
}
