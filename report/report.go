package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// Input is what a report is built from.
type Input struct {
	// Trace is the pool's recorded demand (requests/s at its own step).
	Trace backtest.Trace
	// Backtest is the pool's whole set-up: Planner (fleet and its limits,
	// sizing, SLO, prices, gate, floors), Forecast (the controller's
	// settings, as the pool's forecast: block), Spot and seed. The report's
	// controller runs with the same Planner and Forecast settings.
	Backtest backtest.Config
	// Title names the pool or trace in the report's heading.
	Title string
	// Source says where the demand came from, for the report's header.
	Source string
	// BacktestCommand is the command line that reproduces the report's
	// backtest table (shown in the report, not run).
	BacktestCommand string
	// Horizon is how far ahead the report plans (1h to 28 days).
	Horizon time.Duration
	// BacktestWeeks is how many of the trace's last weeks the backtest
	// scores (1 to 52); 0 means 4.
	BacktestWeeks int
	// WarmUp is how much history is replayed through the controller
	// before the plan (0: none, a cold start as serve's first refit).
	WarmUp time.Duration
	// Tick is the decision interval, serve's `interval` (0: one minute, or
	// the trace's step when that is finer).
	Tick time.Duration
	// SpotInterruptionsPerHour is the spot interruption rate the purchase
	// advice assumes (the backtest's own rate is Backtest.Spot).
	SpotInterruptionsPerHour float64
	// Location is the time zone the report shows times in (nil: UTC).
	Location *time.Location
	// PlanOnly skips the backtest and the holdout (forecaster plan).
	PlanOnly bool
	// Generated stamps the report (zero: left out).
	Generated time.Time
}

// Report is a capacity-planning report. Its JSON form is `forecaster report
// --format json`.
type Report struct {
	Title       string     `json:"title"`
	GeneratedAt *time.Time `json:"generated_at,omitempty"`
	Source      string     `json:"source"`
	History     History    `json:"history"`
	Settings    Settings   `json:"settings"`
	Demand      Demand     `json:"demand"`
	Forecast    Forecast   `json:"forecast"`
	Plan        Plan       `json:"plan"`
	Backtest    *Backtest  `json:"backtest,omitempty"`
	Cost        Cost       `json:"cost"`
	Reserved    Reserved   `json:"reserved"`
	Burst       Burst      `json:"burst"`
	Capacity    Capacity   `json:"capacity"`
	Risks       []Risk     `json:"risks"`

	loc *time.Location
	// recent is the last weeks of history on the forecast grid, for the
	// demand chart.
	recent grid
}

// History describes the demand the report was built from.
type History struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Step  Duration  `json:"step"`
	Steps int       `json:"steps"`
	// Days is the span in days; Missing the steps with no record.
	Days    float64 `json:"days"`
	Missing int     `json:"missing_steps"`
	// PeakRPS is the largest rate recorded.
	PeakRPS float64 `json:"peak_rps"`
}

// Settings are the pool's settings the report used.
type Settings struct {
	GPURPS       float64  `json:"gpu_rps"`
	Slots        int      `json:"slots"`
	ServiceTimeS float64  `json:"service_time_s"`
	Sizing       string   `json:"sizing"`
	TargetUtil   float64  `json:"target_utilisation"`
	BootDelay    Duration `json:"boot_delay"`
	// Limits are the pool's min, max, max_step and min_interval (the one
	// planner.Limits, so the report shows what the pool set).
	planner.Limits
	SLOLatency   Duration `json:"slo_latency"`
	SLOTarget    float64  `json:"slo_target"`
	Prices       Prices   `json:"prices"`
	ForecastStep Duration `json:"forecast_step"`
	RefitEvery   Duration `json:"refit_every"`
	History      Duration `json:"forecast_history"`
	Horizon      Duration `json:"horizon"`
	WarmUp       Duration `json:"warm_up"`
	Tick         Duration `json:"tick"`
	Floors       []string `json:"schedule_floors,omitempty"`
	// GateTolerance is how far the model's recent error may exceed
	// seasonal naive's and the model still be trusted (gate.tolerance).
	GateTolerance float64 `json:"gate_tolerance"`
}

// Prices are per instance-hour, in Currency.
type Prices struct {
	// Currency is the prices' code (USD, EUR, CNY), shown with every cost.
	Currency string `json:"currency"`
	// Placeholder is true while the on-demand, reserved and spot prices
	// are all the defaults: every cost is then an example, not a bill.
	Placeholder              bool    `json:"placeholder"`
	OnDemandPerHour          float64 `json:"on_demand_per_hour"`
	ReservedPerHour          float64 `json:"reserved_per_hour"`
	SpotPerHour              float64 `json:"spot_per_hour"`
	SpotInterruptionsPerHour float64 `json:"spot_interruptions_per_hour"`
	// ReservedInstances is the baseline committed today (--reserved or
	// prices.reserved_instances).
	ReservedInstances int `json:"reserved_instances"`
}

// Duration is a time.Duration that reads as "30m0s" in JSON.
type Duration time.Duration

// MarshalText writes the duration as Go prints it.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration as Go writes it.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// String is the duration as Go prints it.
func (d Duration) String() string { return time.Duration(d).String() }

// errHorizon and friends reject inputs the report cannot be built from.
var (
	// ErrNoDemand is returned for a trace without a single recorded value.
	ErrNoDemand = errors.New("the demand has no recorded value")
)

// Input bounds and defaults: the horizon, the warm-up replayed before
// the plan (DefaultWarmUp unless told), the weeks the backtest scores and
// the history each refit reads (plan --history).
const (
	MinHorizon       = time.Hour
	MaxHorizon       = 28 * 24 * time.Hour
	DefaultWarmUp    = 14 * 24 * time.Hour
	MaxWarmUp        = 90 * 24 * time.Hour
	MaxBacktestWeeks = 52
	MinHistory       = time.Hour
	MaxHistory       = 366 * 24 * time.Hour
)

func (in Input) validate() error {
	var errs []error
	if in.Horizon < MinHorizon || in.Horizon > MaxHorizon {
		errs = append(errs, fmt.Errorf("horizon %v must be between %v and %v", in.Horizon, MinHorizon, MaxHorizon))
	}
	if in.BacktestWeeks < 0 || in.BacktestWeeks > MaxBacktestWeeks {
		errs = append(errs, fmt.Errorf("backtest weeks %d must be between 1 and %d", in.BacktestWeeks, MaxBacktestWeeks))
	}
	if in.WarmUp < 0 || in.WarmUp > MaxWarmUp {
		errs = append(errs, fmt.Errorf("warm-up %v must be between 0 and %v", in.WarmUp, MaxWarmUp))
	}
	if in.Tick < 0 {
		errs = append(errs, fmt.Errorf("tick %v must not be negative", in.Tick))
	}
	if r := in.SpotInterruptionsPerHour; !(r >= 0 && r <= backtest.MaxSpotInterruptions) {
		errs = append(errs, fmt.Errorf("spot interruptions per hour %v must be between 0 and %v", r, backtest.MaxSpotInterruptions))
	}
	if len(in.Trace.RPS) == 0 || in.Trace.Step <= 0 {
		errs = append(errs, fmt.Errorf("trace %q has no steps", in.Trace.Name))
	}
	if err := in.Backtest.Planner.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Build computes the report: the controller's plan, its forecast and
// holdout accuracy, the backtest, the purchase advice and the risks.
func Build(ctx context.Context, in Input) (*Report, error) {
	if err := in.validate(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	loc := in.Location
	if loc == nil {
		loc = time.UTC
	}
	cfg := in.Backtest.Planner
	rep := &Report{Title: in.Title, Source: in.Source, loc: loc}
	if !in.Generated.IsZero() {
		g := in.Generated.UTC()
		rep.GeneratedAt = &g
	}
	rep.History = describeHistory(in.Trace)
	if rep.History.Steps == rep.History.Missing {
		return nil, fmt.Errorf("report: %s: %w", in.Trace.Name, ErrNoDemand)
	}
	run, err := newRun(in)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	rep.Settings = describeSettings(in, run)
	if err := run.plan(ctx, rep); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if !in.PlanOnly {
		if rep.Demand.Accuracy, err = run.holdout(ctx); err != nil {
			return nil, fmt.Errorf("report: holdout: %w", err)
		}
		if rep.Backtest, err = runBacktest(ctx, in); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	rep.Reserved, rep.Burst, rep.Cost = advise(cfg, rep, in.SpotInterruptionsPerHour)
	if rep.Backtest != nil {
		rep.Reserved.Hindsight = hindsight(cfg, rep.Backtest)
	}
	rep.Capacity = capacityOf(cfg, rep)
	rep.Risks = assess(cfg, rep, run.trend())
	if rep.Risks == nil {
		rep.Risks = []Risk{}
	}
	return rep, nil
}

func describeHistory(t backtest.Trace) History {
	h := History{Start: t.Start, End: t.End(), Step: Duration(t.Step), Steps: len(t.RPS), PeakRPS: t.Peak(),
		Days: t.End().Sub(t.Start).Hours() / 24}
	for _, v := range t.RPS {
		if math.IsNaN(v) {
			h.Missing++
		}
	}
	return h
}

func describeSettings(in Input, r *run) Settings {
	c := in.Backtest.Planner
	s := Settings{GPURPS: c.Fleet.RPS(), Slots: max(c.Fleet.Slots, 1), Sizing: c.Sizing, TargetUtil: c.TargetUtilisation,
		BootDelay: Duration(c.Fleet.BootDelay), Limits: c.Fleet.Limits,
		SLOLatency: Duration(c.SLO.Latency), SLOTarget: c.SLO.Quantile,
		Prices: Prices{Currency: cmp.Or(c.Prices.Currency, planner.DefaultCurrency), Placeholder: placeholderPrices(c.Prices),
			OnDemandPerHour: c.Prices.OnDemandPerHour, ReservedPerHour: c.Prices.ReservedPerHour,
			SpotPerHour: c.Prices.SpotPerHour, SpotInterruptionsPerHour: in.SpotInterruptionsPerHour,
			ReservedInstances: c.Prices.ReservedInstances},
		ForecastStep: Duration(r.settings.Step), RefitEvery: Duration(r.settings.RefitEvery),
		History: Duration(r.settings.History), Horizon: Duration(in.Horizon), WarmUp: Duration(in.WarmUp), Tick: Duration(r.tick),
		GateTolerance: c.Gating.Tolerance}
	if c.Fleet.ServiceTime > 0 {
		s.ServiceTimeS = c.Fleet.ServiceTime.Seconds()
	} else if rps := c.Fleet.RPS(); rps > 0 {
		s.ServiceTimeS = float64(s.Slots) / rps
	}
	for _, w := range c.Windows {
		s.Floors = append(s.Floors, w.Text)
	}
	return s
}

// rateFor returns the smallest request rate whose need (InstancesFor) is
// at least n instances, to a part in a million (0 for n ≤ 0, +Inf when no
// finite rate below 1e15 req/s needs that many).
func rateFor(c planner.Config, n int) float64 {
	if n <= 0 {
		return 0
	}
	hi := math.Max(c.Fleet.RPS(), 1e-9)
	for c.InstancesFor(hi) < n {
		if hi *= 2; hi > 1e15 {
			return math.Inf(1)
		}
	}
	lo := 0.0
	for hi-lo > 1e-6*hi {
		mid := (lo + hi) / 2
		if c.InstancesFor(mid) >= n {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// CheckHistory refuses a forecast history shorter than two forecast
// steps (the demand's step when coarser), the least a refit can fit,
// naming it by flag (plan's --history).
func (in Input) CheckHistory(flag string) error {
	if h := in.Backtest.Forecast.History; h > 0 && h < 2*max(in.Backtest.Forecast.Step, in.Trace.Step) {
		return poolspec.Flagf("%s %v: must cover at least two forecast steps", flag, poolspec.FormatSpan(h))
	}
	return nil
}
