package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/internal/progress"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/spf13/pflag"
)

// backtestFlags are the flags of 'forecaster backtest' besides the
// capacity flags: the simulation's (backtest.Options) and the output's.
type backtestFlags struct {
	capacity                capacityFlags
	sim                     backtest.Options
	format, out, plotFormat string
	frontier                bool
	writeDemand             string
}

func (b *backtestFlags) register(fs *pflag.FlagSet) {
	b.capacity.register(fs)
	b.capacity.registerPool(fs)
	def, pool, o := control.DefaultSettings(), poolspec.DefaultPool(), &b.sim
	fs.StringSliceVar(&o.Policies, "policies", backtest.Policies(), "policies to compare")
	fs.StringVar(&b.format, "format", "table", "output format: table or json")
	fs.StringVar(&b.out, "out", "", "directory for capacity-<policy>.csv files and plots")
	fs.StringVar(&b.plotFormat, "plot-format", "png", "plot format: png or svg")
	fs.DurationVar(&o.Refit, "refit", 0, fmt.Sprintf("how often the forecasting policies refit, a multiple of the forecast step up to 7d (default %v, as serve's forecast.refit_every)", def.RefitEvery))
	fs.DurationVar(&o.ForecastStep, "forecast-step", 0, fmt.Sprintf("forecast grid, 1m to 24h and a multiple of the demand's step (default %v, as serve's forecast.step, or the demand's step when coarser)", def.Step))
	fs.StringVar(&o.Aggregate, "forecast-aggregate", "mean", "how demand steps fold into a forecast step: mean (as serve reads its history; the variation inside a step is learned from the observations) or max (the busiest)")
	fs.DurationVar(&o.Timeout, "timeout", time.Minute, "requests waiting longer are dropped, 0 to 24h")
	fs.DurationVar(&o.BootSpread, "boot-spread", 0, "standard deviation of each instance's boot time around --boot, 0 to 24h (0: every boot takes --boot)")
	fs.DurationVar(&o.Drain, "drain", 0, "how long a removed instance stays billed finishing its requests, up to 24h (default: the service time per slot, S·(1+1/2+…+1/slots); negative: none)")
	fs.DurationVar(&o.MetricsLag, "metrics-lag", 0, "age of the newest metrics the reactive rules see, 0 to 1h (default one tick: one collection interval)")
	fs.IntVar(&b.capacity.Limits.MaxStep, "max-step", pool.Fleet.MaxStep, "actuator limit: most instances one change adds or removes, 0 to --max (0: no limit, as serve's max_step)")
	fs.DurationVar(&b.capacity.Limits.MinInterval, "min-interval", pool.Fleet.MinInterval, "actuator limit: least time between two changes, 0 to 24h (0: no limit, as serve's min_interval)")
	fs.DurationVar(&o.WarmUp, "warm-up", 24*time.Hour, "time from the start that slo_attainment_after_warmup leaves out, 0 to 366d")
	fs.StringVar(&o.ScoreFrom, "score-from", "", "count figures only from this time (RFC 3339), e.g. to score the second half after tuning on the first")
	fs.StringVar(&o.ScoreUntil, "score-until", "", "count figures only before this time (RFC 3339)")
	fs.BoolVar(&b.frontier, "frontier", false, "sweep each policy's knobs and report the cheapest setting reaching each --slo-targets value")
	fs.Float64SliceVar(&o.SLOTargets, "slo-targets", []float64{0.99, 0.995, 0.999}, fmt.Sprintf("SLO targets of the frontier, each in (0, 1), at most %d", backtest.MaxSLOTargets))
	fs.Float64Var(&o.SpotShare, "spot-share", 0, "share of instances above the reserved baseline run on spot, in [0, 1]")
	fs.Float64Var(&o.SpotRate, "spot-interruptions", 0.05, "interruptions per spot instance-hour, 0 to 60")
	fs.Float64Var(&o.SpotPrice, "spot-price", pool.Prices.SpotPerHour, "spot price per instance-hour, 0 to 1e6")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed for spot interruptions and boot times")
	fs.StringVar(&b.writeDemand, "write-demand", "", "also write the demand replayed (after --step) to this CSV file as timestamp,requests per step")
}

// check refuses the flags outside their ranges, before the demand is read.
func (b *backtestFlags) check() error {
	switch {
	case b.format != "table" && b.format != "json":
		return usageErrorf("--format %q: want table or json", b.format)
	case b.plotFormat != "png" && b.plotFormat != "svg":
		return usageErrorf("--plot-format %q: want png or svg", b.plotFormat)
	}
	return b.sim.Check()
}

// config builds the simulation's configuration for the trace: from the
// flags, or, with --config/--pool, exactly what serve runs for the pool
// (backtest.ForPool), the simulation's own flags (backtest.Options.Apply)
// aside. The work it implies is bounded before anything is run.
func (b *backtestFlags) config(tr backtest.Trace) (backtest.Config, error) {
	cfg, err := b.fleetConfig(tr)
	if err != nil {
		return cfg, err
	}
	if err := b.sim.Apply(&cfg); err != nil {
		return cfg, err
	}
	keys := backtest.FlagGridKeys
	if b.capacity.fromPool() {
		keys = backtest.PoolGridKeys
	}
	if err := gridUsage(cfg.CheckGrid(tr, keys)); err != nil {
		return cfg, err
	}
	return cfg, cfg.CheckWork(tr, b.frontier)
}

// fleetConfig is the configuration of --config's pool, or of the fleet
// flags with the backtest's forecast flags.
func (b *backtestFlags) fleetConfig(tr backtest.Trace) (backtest.Config, error) {
	if b.capacity.fromPool() {
		file, p, err := b.capacity.loadPool(backtest.PoolKeys)
		if err != nil {
			return backtest.Config{}, err
		}
		cfg, err := backtest.ForPool(p, file.Interval, tr)
		if err != nil {
			return cfg, gridUsage(fmt.Errorf("%s: %w", b.capacity.config, err))
		}
		return cfg, nil
	}
	cfg := backtest.DefaultConfig()
	var err error
	if cfg.Planner, err = b.capacity.plannerConfig(tr); err != nil {
		return cfg, err
	}
	l := b.capacity.Limits
	cfg.Planner.Fleet.MaxStep, cfg.Planner.Fleet.MinInterval = l.MaxStep, l.MinInterval
	return cfg, b.sim.ApplyForecast(&cfg)
}

// gridUsage makes a setting off the demand's grid a usage error.
func gridUsage(err error) error {
	if errors.Is(err, backtest.ErrOffGrid) {
		return &usageError{Err: err}
	}
	return err
}

// parseBacktestFlags parses and checks the backtest's flags into fs, and
// loads --config's pool (refusing the flags it also sets) before any
// demand is read.
func parseBacktestFlags(fs *pflag.FlagSet, args []string) (*backtestFlags, error) {
	bf := &backtestFlags{}
	bf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageErrorf("unexpected arguments %q", fs.Args())
	}
	if err := bf.check(); err != nil {
		return nil, err
	}
	if bf.capacity.fromPool() {
		if _, _, err := bf.capacity.loadPool(backtest.PoolKeys); err != nil {
			return nil, err
		}
	}
	return bf, nil
}

// runBacktest implements 'forecaster backtest'.
func runBacktest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backtest", "[--input FILE] [--value-column C] [--counts] [--step 1m] --peak-instances N | --gpu-rps R | --service-time S\n"+
		"       [--boot 10m] [--slo 10s] [--slo-target 0.995] [--policies static,flat,...] [--frontier] [--format table|json] [--out DIR]\n"+
		"       forecaster backtest --config FILE --pool NAME [--input FILE ...] [--frontier] ...",
		"Replay recorded demand (or synthetic demand, without --input) through scaling policies and\n"+
			"compare GPU-hours, cost (also relative to static and to the oracle, which knows the future),\n"+
			"SLO attainment (share of requests that waited at most --slo for a server, overall and after\n"+
			"the first day), P99 wait and latency, dropped requests, under-provisioned minutes, actions.\n"+
			"Each instance is --slots servers; a request waits in an M/M/c queue (Erlang C) while the\n"+
			"servers keep up and in a FIFO backlog when they do not. Changes pass through the same\n"+
			"safety layer as 'serve' (--max-step, --min-interval). The forecasting policies refit\n"+
			"walk-forward: only on demand before each decision. --step resamples the demand that is\n"+
			"replayed, not only the one forecast. --frontier sweeps each policy's knobs and reports the\n"+
			"cheapest setting reaching each of --slo-targets. --out DIR writes capacity-<policy>.csv\n"+
			"(timestamp,demand_rps,ready,desired,billed) and plots (a run over two weeks as its busiest and a typical week).\n\n"+
			"With --config FILE --pool NAME the backtest runs exactly what 'serve' runs for that pool:\n"+
			"its sizing, SLO, planner and reactive settings, schedule windows in its time_zone, its\n"+
			"forecast settings, its min/max/max_step/min_interval through the same safety layer, its\n"+
			"interval as the decision tick. The flags those keys set are refused with --config; the\n"+
			"demand (--input, --counts, --step, ...) and the simulation's flags stay.", stderr)
	bf, err := parseBacktestFlags(fs, args)
	if err != nil {
		return err
	}
	tr, err := bf.capacity.load(stderr)
	if err != nil {
		return err
	}
	if bf.writeDemand != "" {
		if err := backtest.WriteReplayedDemand(bf.writeDemand, tr); err != nil {
			return fmt.Errorf("--write-demand: %w", err)
		}
	}
	cfg, err := bf.config(tr)
	if err != nil {
		return err
	}
	var clearProgress func()
	cfg.Progress, clearProgress = progress.Stages(stderr)
	rep, front, err := backtest.Compare(ctx, tr, cfg, bf.frontier, bf.sim.SLOTargets, bf.sim.Policies...)
	clearProgress()
	if err != nil {
		return err
	}
	if bf.out != "" {
		files, err := backtest.WriteFiles(bf.out, bf.plotFormat, rep, front.Trials, bf.sim.SLOTargets, cfg.Planner)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d files to %s: %s\n", len(files), bf.out, strings.Join(files, ", "))
	}
	if bf.format == "json" {
		return printJSON(stdout, backtest.NewDocument(rep, front, cfg, bf.capacity.config, bf.capacity.poolName))
	}
	return backtest.WriteTables(stdout, rep, front, cfg.Planner, bf.frontier)
}
