package report

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/open"
)

// Flags are the command line 'forecaster report' and 'forecaster plan'
// share: the demand and fleet (backtest.InputFlags), or a pool of the
// configuration with its demand from the store; the horizon and warm-up;
// and the spot prices. Input builds the report's Input from them.
type Flags struct {
	// Demand are the demand and fleet flags.
	Demand backtest.InputFlags
	// ConfigFile and PoolName are --config and --pool.
	ConfigFile, PoolName string
	// Store is the store a pool's demand is read from, without --input.
	Store           open.Flags
	Horizon, WarmUp time.Duration
	// SpotPrice and SpotRate are --spot-price and --spot-interruptions.
	SpotPrice, SpotRate float64
	// SpotShare and Seed are the backtest's --spot-share and --seed
	// (RegisterBacktest; 'report' only).
	SpotShare float64
	Seed      uint64
	// Currency is --currency (RegisterCurrency; 'report' only).
	Currency string
	// hasCurrency says RegisterCurrency ran: the command has --currency.
	hasCurrency bool

	// OpenStore opens the store a pool's demand is read from; set it, and
	// Demand.LoadConfig (which reads --config here too), before Input runs.
	OpenStore func(ctx context.Context, f open.Flags) (store.Store, error)
}

// Register adds the demand and fleet flags, --config, --pool, the store's,
// --horizon (its default given), --warm-up and the spot prices.
func (f *Flags) Register(fs *pflag.FlagSet, horizon time.Duration) {
	f.Demand.Register(fs)
	fs.StringVar(&f.ConfigFile, "config", "", "the forecaster's configuration (docs/forecaster.yaml): use the settings of --pool from it")
	fs.StringVar(&f.PoolName, "pool", "", "with --config: the pool to report on")
	f.Store.Register(fs, "embedded:prewarm.db", "with --config and no --input: the store the pool's demand is read from (as serve's --store; or --influx-url)")
	fs.Var(poolspec.NewSpanFlag(&f.Horizon, horizon, MinHorizon, MaxHorizon), "horizon", "how far ahead to plan ("+poolspec.HelpSpan(MinHorizon)+" to "+poolspec.HelpSpan(MaxHorizon)+"; 36h, 7d and 2w work)")
	fs.Var(poolspec.NewSpanFlag(&f.WarmUp, DefaultWarmUp, 0, MaxWarmUp), "warm-up",
		"history replayed through the controller before the plan, so its gate and bounds are a running service's (0: a cold start, as serve's first refit; up to "+poolspec.HelpSpan(MaxWarmUp)+")")
	// The spot flags' defaults are the backtest's, so that the same flags
	// mean the same on both commands.
	fs.Float64Var(&f.SpotPrice, "spot-price", poolspec.DefaultPool().Prices.SpotPerHour, "spot price per instance-hour (0: no spot)")
	fs.Float64Var(&f.SpotRate, "spot-interruptions", backtest.DefaultSpotInterruptions, "interruptions per spot instance-hour the spot advice (and the backtest) assume (0 to "+poolspec.HelpNumber(backtest.MaxSpotInterruptions)+")")
}

// RegisterBacktest adds the backtest's own spot flags ('report' only).
func (f *Flags) RegisterBacktest(fs *pflag.FlagSet) {
	fs.Float64Var(&f.SpotShare, "spot-share", 0, "share of the backtest's instances above the reserved baseline on spot (as backtest's; the advice sets its own)")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of the backtest's spot interruptions and boot times")
}

// RegisterCurrency adds --currency ('report' only): the code the prices
// are in, shown beside every cost.
func (f *Flags) RegisterCurrency(fs *pflag.FlagSet) {
	f.hasCurrency = true
	fs.StringVar(&f.Currency, "currency", planner.DefaultCurrency,
		"currency of the prices, three capital letters (USD, EUR, CNY); with --config the pool's prices.currency unless given")
}

func (f *Flags) check() error {
	if err := backtest.CheckSpot(f.SpotPrice, f.SpotRate, f.SpotShare); err != nil {
		return err
	}
	if err := planner.CheckCurrency(f.Currency); f.hasCurrency && err != nil {
		return poolspec.Flagf("--currency: %v", err)
	}
	switch {
	case f.PoolName != "" && f.ConfigFile == "":
		return poolspec.Flagf("--pool goes with --config")
	case f.ConfigFile != "" && f.PoolName == "":
		return poolspec.Flagf("--config needs --pool NAME: the pool to report on")
	}
	return nil
}

// Input builds the report's input from the flags of fs: the demand and
// the pool's settings from the demand and fleet flags, or from --config.
// weeks is the span the backtest scores (0: none); the file's repairs are
// told on stderr.
func (f *Flags) Input(ctx context.Context, fs *pflag.FlagSet, weeks int, stderr io.Writer) (Input, error) {
	in := Input{Horizon: f.Horizon, WarmUp: f.WarmUp, SpotInterruptionsPerHour: f.SpotRate, Generated: time.Now()}
	if err := f.check(); err != nil {
		return in, err
	}
	cfg := backtest.DefaultConfig()
	cfg.Spot = backtest.Spot{Share: f.SpotShare, InterruptionsPerHour: f.SpotRate, Seed: f.Seed}
	var err error
	if f.ConfigFile != "" {
		err = f.fromConfig(ctx, fs, &in, &cfg, weeks, stderr)
	} else {
		err = f.fromFlags(&in, &cfg, stderr)
	}
	if err != nil {
		return in, err
	}
	in.Backtest = cfg
	return in, nil
}

func (f *Flags) fromFlags(in *Input, cfg *backtest.Config, stderr io.Writer) error {
	d := &f.Demand
	tr, err := d.Load(stderr)
	if err != nil {
		return err
	}
	if cfg.Planner, err = d.PlannerConfig(tr); err != nil {
		return err
	}
	cfg.Planner.Prices.SpotPerHour = f.SpotPrice
	if f.hasCurrency {
		cfg.Planner.Prices.Currency = f.Currency
	}
	in.Trace, in.Title, in.Source = tr, tr.Name, f.demandSource()
	if in.Location, err = time.LoadLocation(d.TimeZone); err != nil {
		return poolspec.Flagf("--time-zone %q: %v", d.TimeZone, err)
	}
	return nil
}

// demandSource describes the --input (or synthetic) demand.
func (f *Flags) demandSource() string {
	return DemandSource(f.Demand.Input, f.Demand.Counts, f.Demand.SyntheticDays)
}

// fromConfig takes the pool's settings from --config, the demand from
// --input or the store, and the price overrides from the flags.
func (f *Flags) fromConfig(ctx context.Context, fs *pflag.FlagSet, in *Input, cfg *backtest.Config, weeks int, stderr io.Writer) error {
	if err := poolspec.RefuseOverrides(fs, f.ConfigFile, f.PoolName, demandKeys, priceOverrides...); err != nil {
		return err
	}
	file, err := f.Demand.LoadConfig(f.ConfigFile)
	if err != nil {
		return err
	}
	pool, err := file.Pool(f.PoolName)
	if err != nil {
		return poolspec.Flagf("--pool: %v", err)
	}
	d := &f.Demand
	prices := PriceFlags{OnDemand: d.Price, Reserved: d.ReservedPrice, ReservedInstances: d.Reserved,
		Spot: f.SpotPrice, Currency: f.Currency}
	if err := FromPool(in, cfg, pool, file.Interval, f.ConfigFile); err != nil {
		return err
	}
	prices.Apply(&cfg.Planner.Prices, fs.Changed)
	if d.Input != "" {
		if in.Trace, err = d.Load(stderr); err != nil {
			return err
		}
		in.Source = f.demandSource() + fmt.Sprintf(", with pool %q of %s", pool.Name, f.ConfigFile)
		return nil
	}
	span := pool.Forecast.History + max(time.Duration(weeks)*7*24*time.Hour, f.WarmUp)
	if in.Trace, err = f.readDemand(ctx, pool, span); err != nil {
		return err
	}
	in.Source = fmt.Sprintf("%s from %s, pool %q of %s", pool.Demand, f.Store.Spec, pool.Name, f.ConfigFile)
	return nil
}

// readDemand reads the pool's demand over the last span from --store
// (ReadDemand).
func (f *Flags) readDemand(ctx context.Context, pool poolspec.Pool, span time.Duration) (backtest.Trace, error) {
	db, err := f.OpenStore(ctx, f.Store)
	if err != nil {
		return backtest.Trace{}, err
	}
	defer db.Close()
	return ReadDemand(ctx, db, f.Store.Spec, pool, span, time.Now())
}

// BacktestCommand is the 'forecaster backtest' line that reproduces the
// report's backtest table: the same demand, fleet and spot flags of fs.
func (f *Flags) BacktestCommand(fs *pflag.FlagSet, tr backtest.Trace, weeks int) string {
	keep := append(f.Demand.Names(), "config", "pool")
	keep = append(keep, open.FlagNames()...)
	keep = append(keep, "spot-price", "spot-interruptions", "spot-share", "seed")
	return BacktestCommand(fs, keep, tr, weeks)
}
