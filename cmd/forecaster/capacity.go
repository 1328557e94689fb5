package main

import (
	"fmt"
	"io"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/spf13/pflag"
)

// capacityFlags are the demand and fleet flags shared by 'backtest', 'plan'
// and 'report': register adds them, load reads the demand, plannerConfig
// builds the planner configuration (poolspec.FleetFlags). registerPool adds
// --config FILE --pool NAME: with them the fleet, SLO, planner, forecast
// and actuator settings are the pool's, exactly what 'serve' runs for it,
// and the flags that the pool spec also sets are refused
// (poolspec.RefuseOverrides).
type capacityFlags struct {
	poolspec.FleetFlags
	input         string
	csv           csvFlags
	counts        bool
	step          time.Duration
	syntheticDays int
	bursts        bool

	// config and poolName are --config and --pool (registerPool).
	config, poolName string
	// fs is the flag set register added the flags to: which were given.
	fs *pflag.FlagSet
	// file and pool are the loaded configuration (loadPool), nil before.
	file *poolspec.File
	pool *poolspec.Pool
}

func (f *capacityFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.input, "input", "", "demand CSV file (timestamp and value columns); none: synthetic demand")
	f.registerCSV(fs)
	fs.IntVar(&f.syntheticDays, "synthetic-days", 28, fmt.Sprintf("days of synthetic demand when --input is not given, 1 to %d", backtest.MaxSyntheticDays))
	fs.BoolVar(&f.bursts, "synthetic-bursts", false, "synthetic demand with bursts: 4-5x for 5-12 min about every 2 h, jittered ±30 min")
	f.registerFleet(fs)
}

// registerCSV adds the flags that read a demand file: the CSV columns,
// --counts and --step.
func (f *capacityFlags) registerCSV(fs *pflag.FlagSet) {
	f.fs = fs
	f.csv.register(fs)
	fs.BoolVar(&f.counts, "counts", false, "values are requests per row, not requests/s")
	fs.DurationVar(&f.step, "step", 0, "resample the demand to this step, for the replay as well as the forecasts, 1s to 7d (default: the file's own step; 1m for synthetic); at most 1,000,000 steps")
}

// registerFleet adds the fleet, SLO, sizing and plan flags
// (poolspec.FleetFlags).
func (f *capacityFlags) registerFleet(fs *pflag.FlagSet) {
	f.fs = fs
	f.FleetFlags.Register(fs)
}

// registerPool adds --config and --pool. A command that calls it runs the
// named pool's settings instead of the fleet flags.
func (f *capacityFlags) registerPool(fs *pflag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "the forecaster's configuration file (as 'serve --config'); with --pool, run exactly what serve runs for that pool: its fleet, SLO, sizing, planner, forecast and actuator limits (the flags that set these are then refused)")
	fs.StringVar(&f.poolName, "pool", "", "the pool of --config to run")
}

// fromPool reports whether --config or --pool was given.
func (f *capacityFlags) fromPool() bool { return f.config != "" || f.poolName != "" }

// loadPool reads --config and returns the --pool it names (once; later
// calls return the same). extra maps the command's own flags that the pool
// spec also sets to their YAML keys: giving one of them, or a fleet flag
// the spec sets, is a usage error naming both.
func (f *capacityFlags) loadPool(extra map[string]string) (*poolspec.File, poolspec.Pool, error) {
	if f.pool != nil {
		return f.file, *f.pool, nil
	}
	switch {
	case f.config == "":
		return nil, poolspec.Pool{}, usageErrorf("--pool %q needs --config FILE", f.poolName)
	case f.poolName == "":
		return nil, poolspec.Pool{}, usageErrorf("--config %s needs --pool NAME: the pool whose settings to run", f.config)
	}
	if err := poolspec.RefuseOverrides(f.fs, f.config, f.poolName, extra); err != nil {
		return nil, poolspec.Pool{}, err
	}
	file, err := loadConfig(f.config)
	if err != nil {
		return nil, poolspec.Pool{}, err
	}
	p, err := file.Pool(f.poolName)
	if err != nil {
		return nil, poolspec.Pool{}, usageErrorf("--pool: %v in %s", err, f.config)
	}
	f.file, f.pool = file, &p
	return file, p, nil
}

// load reads the demand as requests/s (or generates it) and returns it as
// a backtest trace, refusing one too long before it is allocated.
func (f *capacityFlags) load(stderr io.Writer) (backtest.Trace, error) {
	if err := poolspec.CheckStep("--step", f.step, time.Second, backtest.MaxDemandStep, true); err != nil {
		return backtest.Trace{}, err
	}
	if f.input == "" {
		return backtest.Synthetic(f.syntheticDays, f.step, f.bursts)
	}
	return f.loadFile(f.input, stderr)
}

// loadFile reads one demand file with the CSV flags, --counts and --step.
func (f *capacityFlags) loadFile(path string, stderr io.Writer) (backtest.Trace, error) {
	opts := f.csv.options()
	opts.Counts, opts.Step = f.counts, f.step
	s, err := loadDemandCSV("forecaster "+f.fs.Name(), path, opts, stderr)
	if err != nil {
		return backtest.Trace{}, err
	}
	return backtest.FromSeries(path, s, f.counts, f.step)
}

// plannerConfig builds the planner configuration for a trace: the pool's
// with --config/--pool (loadPool), else the flags'
// (poolspec.FleetFlags.Planner).
func (f *capacityFlags) plannerConfig(tr backtest.Trace) (planner.Config, error) {
	if !f.fromPool() {
		return f.Planner(tr.Peak())
	}
	_, p, err := f.loadPool(nil)
	if err != nil {
		return planner.Config{}, err
	}
	c, err := p.Planner()
	if err != nil {
		return c, fmt.Errorf("%s: %w", f.config, err)
	}
	return c, nil
}
