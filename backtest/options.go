package backtest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// The ranges of the simulation's own settings as the command line gives
// them, checked before any demand is read.
const (
	maxDay        = 24 * time.Hour
	maxTimeout    = 24 * time.Hour
	maxMetricsLag = time.Hour
	maxWarmUp     = 366 * 24 * time.Hour
	// MaxSpotInterruptions is the most interruptions per spot
	// instance-hour --spot-interruptions takes, in the backtest and in the
	// report's spot advice alike.
	MaxSpotInterruptions = 60.0
	// MaxSpotStockOuts is the most zone-wide spot stock-outs a week
	// --spot-stockouts takes: one an hour.
	MaxSpotStockOuts = 168.0
	// MaxSpotZones bounds --spot-zones.
	MaxSpotZones = 16
	// DefaultSpotStockOutFor is --spot-stockout-for's default: how long a
	// stock-out keeps spot launches off.
	DefaultSpotStockOutFor = time.Hour
	// MaxSLOTargets is the most SLO targets a frontier sweeps.
	MaxSLOTargets = 10
	// maxServerTicks bounds a backtest's work before it starts: runs ×
	// ticks × the servers of the peak's fleet. The simulator's work per
	// tick, and the queue's per decision, grow with the fleet (Erlang C is
	// a recursion over the servers): about 25 ns a server-tick, so the
	// bound is a few minutes of work.
	maxServerTicks = 5e9
)

// PoolKeys maps the backtest's flags that a pool spec also sets to the
// pool's YAML keys: with --config they are refused
// (poolspec.RefuseOverrides), and their range errors name the flag.
var PoolKeys = map[string]string{
	"refit": "forecast.refit_every", "forecast-step": "forecast.step", "forecast-aggregate": "demand.aggregate",
	"max-step": "max_step", "min-interval": "min_interval", "spot-price": "prices.spot_per_hour",
}

// FlagGridKeys name the grid settings in CheckGrid's errors when the
// flags, not a pool, give them.
var FlagGridKeys = GridKeys{Step: "--forecast-step", Refit: "--refit", History: "forecast.history"}

// Options are the settings of 'forecaster backtest' besides the fleet:
// the forecast grid, the simulated queue, boots, drains and metrics, the
// scoring window, spot, and the policies and frontier targets. Check
// refuses those out of range; Apply and ApplyForecast set them on a
// Config. Errors are poolspec.FlagError naming the flag.
type Options struct {
	Policies              []string
	Refit, ForecastStep   time.Duration
	Aggregate             string
	Timeout, BootSpread   time.Duration
	Drain, MetricsLag     time.Duration
	WarmUp                time.Duration
	ScoreFrom, ScoreUntil string
	SLOTargets            []float64
	SpotShare, SpotRate   float64
	SpotPrice             float64
	SpotStockOuts         float64
	SpotStockOutFor       time.Duration
	SpotZones             int
	Seed                  uint64
}

// CheckSpot refuses the spot flags out of their ranges, the backtest's
// and the report's spot advice alike: --spot-price 0 to planner.MaxPrice,
// --spot-interruptions 0 to MaxSpotInterruptions, --spot-share 0 to 1.
func CheckSpot(price, interruptionsPerHour, share float64) error {
	for _, err := range []error{
		poolspec.CheckFloat("--spot-price", price, 0, planner.MaxPrice, false),
		poolspec.CheckFloat("--spot-interruptions", interruptionsPerHour, 0, MaxSpotInterruptions, false),
		poolspec.CheckFloat("--spot-share", share, 0, 1, false),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// Check refuses the options outside their ranges.
func (o Options) Check() error {
	switch {
	case !foldable(o.Aggregate):
		return poolspec.Flagf("--forecast-aggregate %q: want max or mean", o.Aggregate)
	case len(o.SLOTargets) > MaxSLOTargets:
		return poolspec.Flagf("--slo-targets: %d targets, at most %d", len(o.SLOTargets), MaxSLOTargets)
	}
	checks := []error{
		poolspec.CheckStep("--refit", o.Refit, control.MinForecastStep, control.MaxRefitEvery, true),
		poolspec.CheckStep("--forecast-step", o.ForecastStep, control.MinForecastStep, control.MaxForecastStep, true),
		poolspec.CheckStep("--timeout", o.Timeout, 0, maxTimeout, false),
		poolspec.CheckStep("--boot-spread", o.BootSpread, 0, maxDay, false),
		poolspec.CheckStep("--drain", o.Drain, -maxDay, maxDay, false),
		poolspec.CheckStep("--metrics-lag", o.MetricsLag, 0, maxMetricsLag, false),
		poolspec.CheckStep("--warm-up", o.WarmUp, 0, maxWarmUp, false),
		o.CheckSpotFlags(),
	}
	for _, q := range o.SLOTargets {
		checks = append(checks, poolspec.CheckUnit("--slo-targets", q, false, false))
	}
	for _, p := range o.Policies {
		if !slices.Contains(Policies(), p) {
			checks = append(checks, poolspec.Flagf("--policies: unknown policy %q: want some of %s", p, strings.Join(Policies(), ",")))
		}
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// ApplyForecast sets the forecast grid, the demand fold and the spot
// price of cfg from the options: what a pool would set, when the flags
// give the fleet instead. The actuator limits are checked against the
// pool's ranges, naming the flags.
func (o Options) ApplyForecast(cfg *Config) error {
	if err := poolspec.CheckRangeTable(cfg.Planner.Fleet.Limits.CheckRanges, PoolKeys); err != nil {
		return err
	}
	cfg.Forecast.RefitEvery = o.Refit
	cfg.Forecast.Step = o.ForecastStep
	cfg.Forecast.Aggregate = o.Aggregate
	cfg.Planner.Prices.SpotPerHour = o.SpotPrice
	return nil
}

// Apply sets the simulation's own settings of cfg from the options: the
// queue timeout, boot spread, drains, metrics lag, scoring window and
// spot, which stay the command line's with --config too.
func (o Options) Apply(cfg *Config) error {
	cfg.QueueTimeout = o.Timeout
	cfg.BootSpread = o.BootSpread
	cfg.Drain = o.Drain
	cfg.MetricsLag = o.MetricsLag
	cfg.WarmUp = o.WarmUp
	var err error
	if cfg.ScoreFrom, err = parseScoreTime("--score-from", o.ScoreFrom); err != nil {
		return err
	}
	if cfg.ScoreUntil, err = parseScoreTime("--score-until", o.ScoreUntil); err != nil {
		return err
	}
	cfg.Spot = o.Spot()
	return nil
}

// Spot is the spot market the spot flags describe.
func (o Options) Spot() Spot {
	return Spot{Share: o.SpotShare, InterruptionsPerHour: o.SpotRate, StockOutsPerWeek: o.SpotStockOuts,
		StockOutFor: o.SpotStockOutFor, Zones: o.SpotZones, Seed: o.Seed}
}

// CheckSpotFlags refuses the spot flags (RegisterSpot) out of range.
func (o Options) CheckSpotFlags() error {
	if err := CheckSpot(o.SpotPrice, o.SpotRate, o.SpotShare); err != nil {
		return err
	}
	if err := poolspec.CheckFloat("--spot-stockouts", o.SpotStockOuts, 0, MaxSpotStockOuts, false); err != nil {
		return err
	}
	if err := poolspec.CheckStep("--spot-stockout-for", o.SpotStockOutFor, 0, maxDay, false); err != nil {
		return err
	}
	return poolspec.CheckInt("--spot-zones", o.SpotZones, 1, MaxSpotZones)
}

func parseScoreTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, poolspec.Flagf("%s %q: want an RFC 3339 time such as 2014-10-15T00:00:00Z", flag, v)
	}
	return t, nil
}

// CheckWork bounds the simulation's work before it is attempted: the runs
// (Run's policies and the flat fleet's bisection, or, with frontier, the
// frontier's trials) × ticks × the servers of the peak's fleet (each
// tick's queue and each decision's Erlang C grow with them).
func (c Config) CheckWork(tr Trace, frontier bool) error {
	p := c.Planner
	tick := c.Tick
	if tick == 0 {
		tick = min(time.Minute, tr.Step)
	}
	ticks := float64(len(tr.RPS)) * float64(tr.Step/tick)
	rps := p.Fleet.RPS() * p.TargetUtilisation
	instances := float64(p.Fleet.MaxInstances)
	if rps > 0 {
		instances = math.Min(instances, math.Ceil(tr.Peak()/rps)+1)
	}
	runs := RunRuns()
	if frontier {
		runs = FrontierTrials()
	}
	work := float64(runs) * ticks * instances * float64(max(p.Fleet.Slots, 1))
	if work <= maxServerTicks {
		return nil
	}
	what := fmt.Sprintf("the %d runs of the backtest", runs)
	if frontier {
		what = fmt.Sprintf("the frontier's %d runs", runs)
	}
	return poolspec.Flagf("%.0f ticks of a fleet of up to %.0f instances of %d slots is too much work for %s (%.3g server-ticks, at most %.3g): "+
		"give a larger --gpu-rps (or fewer --peak-instances), a smaller --max, fewer --slots or less demand",
		ticks, instances, max(p.Fleet.Slots, 1), what, work, maxServerTicks)
}
