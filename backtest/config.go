package backtest

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/fleetsim"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/tune"
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
// least Planner.Fleet.RPSPerInstance (or Planner.Fleet.ServiceTime).
type Config struct {
	// Planner holds the fleet, prices, SLO and policy settings. Each
	// instance is Planner.Fleet.Slots servers with mean service time
	// Fleet.ServiceTime, or Slots/RPSPerInstance when that is not set.
	// Every policy's changes pass through actuator.Safe with the limits
	// `forecaster serve` applies, Planner.Fleet.Limits (the pool's min,
	// max, max_step and min_interval; a zero max_step or min_interval is
	// no limit, as serve's default).
	Planner planner.Config
	// Tick is the simulation's time step; 0 means one minute, or the
	// trace's step when that is finer. It must divide the trace's step.
	Tick time.Duration
	// QueueTimeout drops requests that have waited this long (default 60s).
	QueueTimeout time.Duration
	// MetricsLag is the age of the newest observation the reactive rules
	// see: the figures of one collection interval are read an interval
	// after it ends. 0 means one Tick; negative means none.
	MetricsLag time.Duration
	// BootSpread is the standard deviation of each instance's boot time
	// around Planner.Fleet.BootDelay (log-normal); 0: every boot takes the
	// boot delay.
	BootSpread time.Duration
	// Drain is how long a removed instance stays billed finishing its
	// in-flight requests. 0 means the expected time for the last of Slots
	// requests in service to finish, S·(1 + 1/2 + … + 1/Slots) for
	// exponential service times of mean S; negative means none.
	Drain time.Duration
	// Spot optionally runs part of the fleet on interruptible instances.
	Spot Spot
	// Forecast sets how the forecasting policies refit.
	Forecast ForecastOptions
	// Tune sets how the hybrid policy chooses among its candidates, as
	// serve's pools do (tune.Options; its simulator settings are this
	// configuration's).
	Tune tune.Options
	// WarmUp is how long from the trace's start SLOAttainmentAfterWarmUp
	// leaves out (default a day).
	WarmUp time.Duration
	// ScoreFrom and ScoreUntil, when set, limit every figure to the
	// demand in [ScoreFrom, ScoreUntil); the policies still run over the
	// whole trace, walk-forward, so tuning on one half and scoring the
	// other is honest.
	ScoreFrom, ScoreUntil time.Time
	// countsOnly leaves out the wait and latency distributions (the
	// Result's P99s stay 0) for a run of which only the cost and the SLO
	// attainment are read: a frontier's trial.
	countsOnly bool
	// Progress, when set, is told how far a run has come: stage "refits"
	// or "replays", and done of total. It is called from the workers, so
	// it must be safe for concurrent use; nil: nothing is told.
	Progress func(stage string, done, total int)
}

// progress is Progress bound to stage, or nil.
func (c Config) progress(stage string) func(done, total int) {
	if c.Progress == nil {
		return nil
	}
	return func(done, total int) { c.Progress(stage, done, total) }
}

// Progress stages.
const (
	StageRefits  = "refits"
	StageReplays = "replays"
)

// Spot configures interruptible instances.
type Spot struct {
	// Share of the instances above the reserved baseline that are spot, in
	// [0, 1]; 0 disables spot.
	Share float64
	// InterruptionsPerHour is each spot instance's interruption rate; an
	// interrupted instance is replaced, booting again.
	InterruptionsPerHour float64
	// StockOutsPerWeek is how often the zone runs out of spot: every spot
	// instance is interrupted at once and replaced on demand, and for
	// StockOutFor the fleet launches on demand (0: never).
	StockOutsPerWeek float64
	StockOutFor      time.Duration
	// Zones is how many zones spot comes from, each running out on its
	// own: a stock-out empties one, and its spot instances are replaced in
	// another zone in stock, else on demand (0 or 1: one zone).
	Zones int
	// Seed makes the interruptions and boot times reproducible.
	Seed uint64
}

// ForecastOptions sets the forecasting policies' walk-forward refits: the
// settings of the live controller the hybrid policy runs (control.Settings,
// documented there, with the same defaults as `forecaster serve`) and how
// the trace is folded onto the forecast grid. One default differs, because
// it must: a forecast step cannot be finer than the trace, so Step
// defaults to control's 30 minutes or the trace's step when that is
// coarser (rounded up to a multiple of it). Step and RefitEvery must be
// multiples of the trace's step and of Step respectively.
type ForecastOptions struct {
	control.Settings
	// Aggregate folds the trace's steps into one forecast step: "mean"
	// (the default, as the service reads its history: store.Mean; the
	// variation inside a step is learned from the observations) or "max"
	// (size for the busiest part of the step).
	Aggregate string
}

// DefaultWarmUp is how long from the trace's start the figures after
// warm-up leave out unless told (--warm-up): a day.
const DefaultWarmUp = 24 * time.Hour

// DefaultAggregate folds demand steps into a forecast step unless told
// otherwise: by their mean, as serve's refits read their history
// (store.Mean).
const DefaultAggregate = string(store.Mean)

// foldable reports whether the backtest can fold demand by agg: by its
// mean or its max.
func foldable(agg string) bool { return agg == string(store.Mean) || agg == string(store.Max) }

// DefaultConfig returns the defaults of planner.DefaultConfig and
// control.Settings, a 60-second queue timeout, metrics one tick old,
// drains of one service time per slot, no max_step or min_interval and no spot
// instances.
func DefaultConfig() Config {
	return Config{
		Planner:      planner.DefaultConfig(),
		QueueTimeout: time.Minute,
		Tune:         tune.Options{Enabled: true},
	}
}

// serviceTime is the mean time one request occupies a slot.
func (c Config) serviceTime() time.Duration { return c.Planner.Fleet.MeanServiceTime() }

// withDefaults fills the zero fields that depend on the trace.
func (c Config) withDefaults(t Trace) Config {
	if c.Tick == 0 {
		c.Tick = min(time.Minute, t.Step)
	}
	d := fleetsim.Options{Planner: c.Planner, Tick: c.Tick, QueueTimeout: c.QueueTimeout, MetricsLag: c.MetricsLag,
		Drain: c.Drain}.WithDefaults()
	c.QueueTimeout, c.MetricsLag, c.Drain = d.QueueTimeout, d.MetricsLag, d.Drain
	if c.WarmUp == 0 {
		c.WarmUp = DefaultWarmUp
	}
	f := &c.Forecast
	if f.Step == 0 {
		f.Step = defaultForecastStep(t.Step)
	}
	if f.Aggregate == "" {
		f.Aggregate = DefaultAggregate
	}
	if f.RefitEvery == 0 {
		f.RefitEvery = control.Settings{}.WithDefaults().RefitEvery
		if f.RefitEvery < f.Step || f.RefitEvery%f.Step != 0 {
			f.RefitEvery = (f.RefitEvery + f.Step - 1) / f.Step * f.Step
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
	if c.serviceTime() <= 0 {
		bad("--gpu-rps (rps_per_instance) or --service-time (service_time) must be > 0: the queue needs a service time")
	}
	if c.Tick <= 0 || t.Step%c.Tick != 0 {
		bad("the tick %v must be positive and divide the trace's step %v (--step, or the pool's interval)", c.Tick, t.Step)
	}
	if c.QueueTimeout < 0 {
		bad("--timeout %v must not be negative", c.QueueTimeout)
	}
	if c.BootSpread < 0 {
		bad("--boot-spread %v must not be negative", c.BootSpread)
	}
	if c.WarmUp < 0 {
		bad("--warm-up %v must not be negative", c.WarmUp)
	}
	if !c.ScoreFrom.IsZero() && !c.ScoreUntil.IsZero() && !c.ScoreFrom.Before(c.ScoreUntil) {
		bad("--score-from %s must be before --score-until %s", c.ScoreFrom.Format(time.RFC3339), c.ScoreUntil.Format(time.RFC3339))
	}
	if !(c.Spot.Share >= 0 && c.Spot.Share <= 1) {
		bad("--spot-share %v must be in [0, 1]", c.Spot.Share)
	}
	if !(c.Spot.InterruptionsPerHour >= 0) || math.IsInf(c.Spot.InterruptionsPerHour, 0) {
		bad("--spot-interruptions %v must be finite and >= 0", c.Spot.InterruptionsPerHour)
	}
	if !(c.Spot.StockOutsPerWeek >= 0 && c.Spot.StockOutsPerWeek <= MaxSpotStockOuts) || c.Spot.StockOutFor < 0 {
		bad("--spot-stockouts %v must be in [0, %v] and --spot-stockout-for %v not negative", c.Spot.StockOutsPerWeek, MaxSpotStockOuts, c.Spot.StockOutFor)
	}
	if c.Spot.Zones < 0 || c.Spot.Zones > MaxSpotZones {
		bad("--spot-zones %d must be in [1, %d]", c.Spot.Zones, MaxSpotZones)
	}
	f := c.Forecast
	if f.Step <= 0 || f.Step%t.Step != 0 {
		bad("--forecast-step (forecast.step) %v must be a positive multiple of the trace's step %v", f.Step, t.Step)
	}
	if f.Step > 0 && (f.RefitEvery <= 0 || f.RefitEvery%f.Step != 0) {
		bad("--refit (forecast.refit_every) %v must be a positive multiple of --forecast-step %v", f.RefitEvery, f.Step)
	}
	if !foldable(f.Aggregate) {
		bad("--forecast-aggregate %q: want max or mean", f.Aggregate)
	}
	if f.Horizon < 0 {
		bad("forecast.horizon %v must not be negative", f.Horizon)
	}
	if f.History < 0 {
		bad("forecast.history %v must not be negative", f.History)
	}
	for i, p := range f.Periods {
		if f.Step > 0 && (p <= f.Step || p%f.Step != 0) {
			bad("forecast.periods[%d] %v must be a multiple of --forecast-step (forecast.step) %v and longer than it", i, p, f.Step)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("backtest: %w", errors.Join(errs...))
}
