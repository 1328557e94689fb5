package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/internal/progress"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/report"
	"github.com/prewarm/prewarm/store/influx"
)

// runReport implements 'forecaster report'.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "--input FILE [--counts] --gpu-rps R [FLAGS] | --config FILE --pool NAME [--store SPEC]\n"+
		"       [--horizon 7d] [--format html|md|json] [--out FILE]",
		"Writes a capacity-planning report for one pool: the demand and its forecast with 80% and 95% bands,\n"+
			"the seasons found, the model and its holdout accuracy against seasonal naive; the pre-warm plan hour\n"+
			"by hour (the controller 'serve' runs, after replaying --warm-up of history through it), and the\n"+
			"GPU-hours, cost and SLO attainment of static, reactive, hybrid and oracle over the last\n"+
			"--backtest-weeks (the backtest 'forecaster backtest' runs); the reserved baseline that minimises the\n"+
			"expected cost under the forecast, the on-demand/spot split above it and the saving; the peak the SLO\n"+
			"needs and the headroom under max; and the risks, each a rule with its threshold (docs/report.md).\n"+
			"HTML is one self-contained file that prints on A4; md is for tickets; json carries the same numbers.\n"+
			"With --config the pool's settings are used (its demand from --store, or from --input); --price,\n"+
			"--reserved-price, --reserved, --spot-price and --currency may still override its prices. Costs are\n"+
			"shown in --currency (prices.currency), and marked as placeholders while the prices are the defaults.", stderr)
	var cf capacityFlags
	cf.register(fs)
	var rf reportFlags
	rf.register(fs, 7*24*time.Hour)
	rf.registerBacktest(fs)
	rf.registerCurrency(fs)
	format := fs.String("format", report.FormatHTML, "output format: html, md or json")
	out := fs.String("out", "", "write the report to this file (default: standard output)")
	weeks := fs.Int("backtest-weeks", 4, "weeks at the end of the history the backtest scores (1 to 52)")
	title := fs.String("title", "", "the report's heading (default: the pool's name, or the input file's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	case !slices.Contains(report.Formats, *format):
		return usageErrorf("--format %q: want one of %s", *format, strings.Join(report.Formats, ", "))
	case *weeks < 1 || *weeks > report.MaxBacktestWeeks:
		return usageErrorf("--backtest-weeks %d: must be between 1 and %d", *weeks, report.MaxBacktestWeeks)
	case planner.CheckCurrency(rf.currency) != nil:
		return usageErrorf("--currency: %v", planner.CheckCurrency(rf.currency))
	}
	in, err := rf.input(ctx, fs, &cf, *weeks, stderr)
	if err != nil {
		return err
	}
	if *title != "" {
		in.Title = *title
	}
	in.BacktestWeeks = *weeks
	in.BacktestCommand = backtestCommand(fs, in.Trace, *weeks)
	var clearProgress func()
	in.Backtest.Progress, clearProgress = progress.Stages(stderr)
	rep, err := report.Build(ctx, in)
	clearProgress()
	if err != nil {
		return err
	}
	return report.WriteFile(stdout, *out, *format, rep, in.Title, in.Horizon)
}

// reportFlags are the flags 'report' and 'plan' add to capacityFlags: the
// pool spec, the store, the horizon and warm-up, and the spot prices.
type reportFlags struct {
	config, pool, storeSpec func() string
	influx                  influx.Config
	horizon, warmUp         time.Duration
	spotPrice, spotRate     float64
	spotShare               float64
	seed                    uint64
	// currency is --currency ("" where the command has no such flag).
	currency string
}

func (f *reportFlags) register(fs *pflag.FlagSet, horizon time.Duration) {
	f.config = stringFlag(fs, "config", "", "the forecaster's configuration (docs/forecaster.yaml): use the settings of --pool from it")
	f.pool = stringFlag(fs, "pool", "", "with --config: the pool to report on")
	f.storeSpec = stringFlag(fs, "store", "embedded:prewarm.db", "with --config and no --input: the store the pool's demand is read from (as serve's --store; or --influx-url)")
	if fs.Lookup("influx-url") == nil {
		fs.StringVar(&f.influx.URL, "influx-url", "", "InfluxDB URL (2.x, or 1.8+ with Flux enabled); selects the InfluxDB store")
		fs.StringVar(&f.influx.Org, "influx-org", "-", "InfluxDB organisation (1.8: -)")
		fs.StringVar(&f.influx.Bucket, "influx-bucket", "prewarm/autogen", "InfluxDB bucket (1.8: database/retention-policy)")
	}
	fs.Var(report.NewSpanFlag(&f.horizon, horizon, report.MinHorizon, report.MaxHorizon), "horizon", "how far ahead to plan (1h to 28d; 36h, 7d and 2w work)")
	fs.Var(report.NewSpanFlag(&f.warmUp, 14*24*time.Hour, 0, report.MaxWarmUp), "warm-up",
		"history replayed through the controller before the plan, so its gate and bounds are a running service's (0: a cold start, as serve's first refit; up to 90d)")
	def := backtestSpotDefaults()
	fs.Float64Var(&f.spotPrice, "spot-price", def.price, "spot price per instance-hour (0: no spot)")
	fs.Float64Var(&f.spotRate, "spot-interruptions", def.rate, "interruptions per spot instance-hour the spot advice (and the backtest) assume (0 to 100)")
}

// registerBacktest adds the backtest's own spot flags ('report' only).
func (f *reportFlags) registerBacktest(fs *pflag.FlagSet) {
	fs.Float64Var(&f.spotShare, "spot-share", 0, "share of the backtest's instances above the reserved baseline on spot (as backtest's; the advice sets its own)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the backtest's spot interruptions and boot times")
}

// registerCurrency adds --currency ('report' only): the code the prices
// are in, shown beside every cost.
func (f *reportFlags) registerCurrency(fs *pflag.FlagSet) {
	fs.StringVar(&f.currency, "currency", planner.DefaultCurrency,
		"currency of the prices, three capital letters (USD, EUR, CNY); with --config the pool's prices.currency unless given")
}

// backtestSpotDefaults are the backtest's defaults for the spot flags, so
// that the same flags mean the same on both commands.
func backtestSpotDefaults() struct{ price, rate float64 } {
	return struct{ price, rate float64 }{1.0, 0.05}
}

// stringFlag registers a string flag unless the flag set has it already
// (capacityFlags may come to register --config and --pool itself), and
// returns how to read its value once parsed.
func stringFlag(fs *pflag.FlagSet, name, value, usage string) func() string {
	if f := fs.Lookup(name); f != nil {
		return f.Value.String
	}
	p := fs.String(name, value, usage)
	return func() string { return *p }
}

func (f *reportFlags) check() error {
	if err := report.CheckSpot(f.spotPrice, f.spotRate, f.spotShare); err != nil {
		return err
	}
	switch {
	case f.pool() != "" && f.config() == "":
		return usageErrorf("--pool goes with --config")
	case f.config() != "" && f.pool() == "":
		return usageErrorf("--config needs --pool NAME: the pool to report on")
	}
	return nil
}

// input builds the report's input from the flags: the demand and the
// pool's settings from the capacity flags, or from --config.
func (f *reportFlags) input(ctx context.Context, fs *pflag.FlagSet, cf *capacityFlags, weeks int, stderr io.Writer) (report.Input, error) {
	in := report.Input{Horizon: f.horizon, WarmUp: f.warmUp, SpotInterruptionsPerHour: f.spotRate,
		Generated: time.Now()}
	if err := f.check(); err != nil {
		return in, err
	}
	cfg := backtest.DefaultConfig()
	cfg.Spot = backtest.Spot{Share: f.spotShare, InterruptionsPerHour: f.spotRate, Seed: f.seed}
	var err error
	if f.config() != "" {
		err = f.fromConfig(ctx, fs, cf, &in, &cfg, weeks, stderr)
	} else {
		err = f.fromFlags(cf, &in, &cfg, stderr)
	}
	if err != nil {
		return in, err
	}
	in.Backtest = cfg
	return in, nil
}

func (f *reportFlags) fromFlags(cf *capacityFlags, in *report.Input, cfg *backtest.Config, stderr io.Writer) error {
	tr, err := cf.load(stderr)
	if err != nil {
		return err
	}
	if cfg.Planner, err = cf.plannerConfig(tr); err != nil {
		return err
	}
	cfg.Planner.Prices.SpotPerHour = f.spotPrice
	if f.currency != "" { // report's --currency; plan has none
		cfg.Planner.Prices.Currency = f.currency
	}
	in.Trace, in.Title, in.Source = tr, tr.Name, demandSource(cf)
	if in.Location, err = time.LoadLocation(cf.TimeZone); err != nil {
		return usageErrorf("--time-zone %q: %v", cf.TimeZone, err)
	}
	return nil
}

// demandSource describes the --input (or synthetic) demand.
func demandSource(cf *capacityFlags) string {
	return report.DemandSource(cf.input, cf.counts, cf.syntheticDays)
}

// fromConfig takes the pool's settings from --config, the demand from
// --input or the store, and the price overrides from the flags.
func (f *reportFlags) fromConfig(ctx context.Context, fs *pflag.FlagSet, cf *capacityFlags, in *report.Input,
	cfg *backtest.Config, weeks int, stderr io.Writer) error {
	if err := report.RefusePoolFlags(fs, capacityFlagNames(), f.config()); err != nil {
		return err
	}
	file, err := loadConfig(f.config())
	if err != nil {
		return err
	}
	pool, err := file.Pool(f.pool())
	if err != nil {
		return usageErrorf("--pool: %v", err)
	}
	prices := report.PriceFlags{OnDemand: cf.Price, Reserved: cf.ReservedPrice, ReservedInstances: cf.Reserved,
		Spot: f.spotPrice, Currency: f.currency}
	if err := report.FromPool(in, cfg, pool, file.Interval, f.config()); err != nil {
		return err
	}
	prices.Apply(&cfg.Planner.Prices, fs.Changed)
	if cf.input != "" {
		if in.Trace, err = cf.load(stderr); err != nil {
			return err
		}
		in.Source = demandSource(cf) + fmt.Sprintf(", with pool %q of %s", pool.Name, f.config())
		return nil
	}
	span := pool.Forecast.History + max(time.Duration(weeks)*7*24*time.Hour, f.warmUp)
	if in.Trace, err = f.readDemand(ctx, pool, span); err != nil {
		return err
	}
	in.Source = fmt.Sprintf("%s from %s, pool %q of %s", pool.Demand, f.storeSpec(), pool.Name, f.config())
	return nil
}

// readDemand reads the pool's demand over the last span from --store
// (report.ReadDemand).
func (f *reportFlags) readDemand(ctx context.Context, pool poolspec.Pool, span time.Duration) (backtest.Trace, error) {
	f.influx.Token = os.Getenv("INFLUX_TOKEN")
	db, err := openStore(ctx, f.storeSpec(), f.influx)
	if err != nil {
		return backtest.Trace{}, err
	}
	defer db.Close()
	return report.ReadDemand(ctx, db, f.storeSpec(), pool, span, time.Now())
}

// capacityFlagNames lists the flags capacityFlags registers.
func capacityFlagNames() []string {
	fs := pflag.NewFlagSet("names", pflag.ContinueOnError)
	var cf capacityFlags
	cf.register(fs)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// backtestCommand is the 'forecaster backtest' line that reproduces the
// report's backtest table (report.BacktestCommand): the same demand, fleet
// and spot flags.
func backtestCommand(fs *pflag.FlagSet, tr backtest.Trace, weeks int) string {
	keep := append(capacityFlagNames(), "config", "pool", "store", "influx-url", "influx-org", "influx-bucket",
		"spot-price", "spot-interruptions", "spot-share", "seed")
	return report.BacktestCommand(fs, keep, tr, weeks)
}

// formatSpan writes a span as the report does (report.FormatSpan).
func formatSpan(d time.Duration) string { return report.FormatSpan(d) }
