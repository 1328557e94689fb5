package backtest

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// Flags are the command line of 'forecaster backtest': the demand and
// fleet (InputFlags, with --config/--pool), the simulation's options
// (Options), and the output's. Their defaults are a pool's
// (poolspec.DefaultPool, control.DefaultSettings) where a pool has the
// setting.
type Flags struct {
	Input InputFlags
	Sim   Options
	// Format is --format: table or json.
	Format string
	// Out is --out: the folder of capacity files and plots ("" for none).
	Out string
	// PlotFormat is --plot-format: png or svg.
	PlotFormat string
	// Frontier is --frontier: sweep each policy's knobs.
	Frontier bool
	// WriteDemand is --write-demand: a CSV of the demand replayed.
	WriteDemand string
}

// DefaultSpotInterruptions is --spot-interruptions' default: the
// interruptions per spot instance-hour a backtest (and the report's spot
// advice) assume.
const DefaultSpotInterruptions = 0.05

// Register adds every flag of the backtest to fs.
func (b *Flags) Register(fs *pflag.FlagSet) {
	b.Input.Register(fs)
	b.Input.RegisterPool(fs)
	def, pool, o := control.DefaultSettings(), poolspec.DefaultPool(), &b.Sim
	span, limit := poolspec.HelpSpan, func(key string) string { return poolspec.HelpRange(pool.Fleet.Limits.CheckRanges, key) }
	fs.StringSliceVar(&o.Policies, "policies", Policies(), "policies to compare")
	fs.StringVar(&b.Format, "format", "table", "output format: table or json")
	fs.StringVar(&b.Out, "out", "", "directory for capacity-<policy>.csv files and plots")
	fs.StringVar(&b.PlotFormat, "plot-format", "png", "plot format: png or svg")
	fs.DurationVar(&o.Refit, "refit", 0, fmt.Sprintf("how often the forecasting policies refit, a multiple of the forecast step up to %s (default %v, as serve's forecast.refit_every)", span(control.MaxRefitEvery), def.RefitEvery))
	fs.DurationVar(&o.ForecastStep, "forecast-step", 0, fmt.Sprintf("forecast grid, %s to %s and a multiple of the demand's step (default %v, as serve's forecast.step, or the demand's step when coarser)", span(control.MinForecastStep), span(control.MaxForecastStep), def.Step))
	fs.StringVar(&o.Aggregate, "forecast-aggregate", DefaultAggregate, "how demand steps fold into a forecast step: mean (as serve reads its history; the variation inside a step is learned from the observations) or max (the busiest)")
	fs.DurationVar(&o.Timeout, "timeout", DefaultConfig().QueueTimeout, "requests waiting longer are dropped, 0 to "+span(maxTimeout))
	fs.DurationVar(&o.BootSpread, "boot-spread", 0, "standard deviation of each instance's boot time around --boot, 0 to "+span(maxDay)+" (0: every boot takes --boot)")
	fs.DurationVar(&o.Drain, "drain", 0, "how long a removed instance stays billed finishing its requests, up to "+span(maxDay)+" (default: the service time per slot, S·(1+1/2+…+1/slots); negative: none)")
	fs.DurationVar(&o.MetricsLag, "metrics-lag", 0, "age of the newest metrics the reactive rules see, 0 to "+span(maxMetricsLag)+" (default one tick: one collection interval)")
	fs.IntVar(&b.Input.Limits.MaxStep, "max-step", pool.Fleet.MaxStep, "actuator limit: most instances one change adds or removes, "+limit("max_step")+" (0: no limit, as serve's max_step)")
	fs.DurationVar(&b.Input.Limits.MinInterval, "min-interval", pool.Fleet.MinInterval, "actuator limit: least time between two changes, "+limit("min_interval")+" (0: no limit, as serve's min_interval)")
	fs.DurationVar(&o.WarmUp, "warm-up", DefaultWarmUp, "time from the start that slo_attainment_after_warmup leaves out, 0 to "+span(maxWarmUp))
	fs.StringVar(&o.ScoreFrom, "score-from", "", "count figures only from this time (RFC 3339), e.g. to score the second half after tuning on the first")
	fs.StringVar(&o.ScoreUntil, "score-until", "", "count figures only before this time (RFC 3339)")
	fs.BoolVar(&b.Frontier, "frontier", false, "sweep each policy's knobs and report the cheapest setting reaching each --slo-targets value")
	fs.Float64SliceVar(&o.SLOTargets, "slo-targets", []float64{0.99, 0.995, 0.999}, fmt.Sprintf("SLO targets of the frontier, each in (0, 1), at most %d", MaxSLOTargets))
	o.RegisterSpot(fs, pool.Prices.SpotPerHour)
	fs.StringVar(&b.WriteDemand, "write-demand", "", "also write the demand replayed (after --step) to this CSV file as timestamp,requests per step")
}

// Check refuses the flags outside their ranges and, with --config, loads
// the pool (refusing the flags it also sets), before any demand is read.
func (b *Flags) Check() error {
	switch {
	case b.Format != "table" && b.Format != "json":
		return poolspec.Flagf("--format %q: want table or json", b.Format)
	case b.PlotFormat != "png" && b.PlotFormat != "svg":
		return poolspec.Flagf("--plot-format %q: want png or svg", b.PlotFormat)
	}
	if err := b.Sim.Check(); err != nil {
		return err
	}
	if b.Input.FromPool() {
		_, _, err := b.Input.LoadPool(PoolKeys)
		return err
	}
	return nil
}

// Config builds the simulation's configuration for the trace: from the
// flags, or, with --config/--pool, exactly what serve runs for the pool
// (ForPool), the simulation's own flags (Options.Apply) aside. The work it
// implies is bounded before anything is run.
func (b *Flags) Config(tr Trace) (Config, error) {
	cfg, err := b.fleetConfig(tr)
	if err != nil {
		return cfg, err
	}
	if err := b.Sim.Apply(&cfg); err != nil {
		return cfg, err
	}
	keys := FlagGridKeys
	if b.Input.FromPool() {
		keys = PoolGridKeys
	}
	if err := gridUsage(cfg.CheckGrid(tr, keys)); err != nil {
		return cfg, err
	}
	return cfg, cfg.CheckWork(tr, b.Frontier)
}

// fleetConfig is the configuration of --config's pool, or of the fleet
// flags with the backtest's forecast flags.
func (b *Flags) fleetConfig(tr Trace) (Config, error) {
	if b.Input.FromPool() {
		file, p, err := b.Input.LoadPool(PoolKeys)
		if err != nil {
			return Config{}, err
		}
		cfg, err := ForPool(p, file.Interval, tr)
		if err != nil {
			return cfg, gridUsage(fmt.Errorf("%s: %w", b.Input.ConfigFile, err))
		}
		return cfg, nil
	}
	cfg := DefaultConfig()
	var err error
	if cfg.Planner, err = b.Input.PlannerConfig(tr); err != nil {
		return cfg, err
	}
	l := b.Input.Limits
	cfg.Planner.Fleet.MaxStep, cfg.Planner.Fleet.MinInterval = l.MaxStep, l.MinInterval
	return cfg, b.Sim.ApplyForecast(&cfg)
}

// gridUsage makes a setting off the demand's grid a command-line error.
func gridUsage(err error) error {
	if errors.Is(err, ErrOffGrid) {
		return &poolspec.FlagError{Err: err}
	}
	return err
}

// RegisterSpot adds the spot flags (--spot-share, --spot-interruptions,
// --spot-stockouts, --spot-stockout-for, --spot-zones, --spot-price at
// price, --seed)
// to fs, as backtest and eval policy both take them.
func (o *Options) RegisterSpot(fs *pflag.FlagSet, price float64) {
	fs.Float64Var(&o.SpotShare, "spot-share", 0, "share of instances above the reserved baseline run on spot, in [0, 1]")
	fs.Float64Var(&o.SpotRate, "spot-interruptions", DefaultSpotInterruptions, "interruptions per spot instance-hour, 0 to "+poolspec.HelpNumber(MaxSpotInterruptions))
	fs.Float64Var(&o.SpotStockOuts, "spot-stockouts", 0, "zone-wide spot stock-outs a week, 0 to "+poolspec.HelpNumber(MaxSpotStockOuts)+
		": every spot instance in the zone is interrupted at once and replaced in another zone with spot, else on demand, and new ones launch there for --spot-stockout-for")
	fs.IntVar(&o.SpotZones, "spot-zones", 1, "zones (or instance types) spot comes from, each running out on its own, 1 to "+strconv.Itoa(MaxSpotZones))
	fs.DurationVar(&o.SpotStockOutFor, "spot-stockout-for", DefaultSpotStockOutFor, "how long a spot stock-out lasts, 0 to "+poolspec.HelpSpan(maxDay))
	fs.Float64Var(&o.SpotPrice, "spot-price", price, "spot price per instance-hour, 0 to "+poolspec.HelpNumber(planner.MaxPrice))
	fs.Uint64Var(&o.Seed, "seed", 1, "seed for spot interruptions and boot times")
}
