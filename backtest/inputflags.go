package backtest

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// InputFlags are the demand and fleet flags shared by 'backtest', 'plan',
// 'report' and 'eval policy': Register adds them, Load reads the demand
// and PlannerConfig builds the planner configuration
// (poolspec.FleetFlags). RegisterPool adds --config FILE --pool NAME: with
// them the fleet, SLO, planner, forecast and actuator settings are the
// pool's, exactly what 'serve' runs for it, and the flags that the pool
// spec also sets are refused (poolspec.RefuseOverrides).
type InputFlags struct {
	poolspec.FleetFlags
	// Input is --input: the demand file ("" for synthetic demand).
	Input string
	// CSV are the column and repair flags of the demand file.
	CSV datasets.CSVFlags
	// Counts is --counts: the file's values are requests per row.
	Counts bool
	// Step is --step: the step the demand is resampled to (0: its own).
	Step time.Duration
	// SyntheticDays and Bursts shape the synthetic demand.
	SyntheticDays int
	Bursts        bool

	// ConfigFile and PoolName are --config and --pool (RegisterPool).
	ConfigFile, PoolName string
	// LoadConfig reads the configuration file with the back-ends the
	// binary ships; set it before LoadPool runs.
	LoadConfig func(path string) (*poolspec.File, error)

	// fs is the flag set the flags were added to: which were given.
	fs *pflag.FlagSet
	// file and pool are the loaded configuration (LoadPool), nil before.
	file *poolspec.File
	pool *poolspec.Pool
}

// Register adds the demand flags (--input, the CSV flags, the synthetic
// demand's) and the fleet flags.
func (f *InputFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Input, "input", "", "demand CSV file (timestamp and value columns); none: synthetic demand")
	f.RegisterCSV(fs)
	fs.IntVar(&f.SyntheticDays, "synthetic-days", 28, fmt.Sprintf("days of synthetic demand when --input is not given, 1 to %d", MaxSyntheticDays))
	fs.BoolVar(&f.Bursts, "synthetic-bursts", false, "synthetic demand with bursts: 4-5x for 5-12 min about every 2 h, jittered ±30 min")
	f.RegisterFleet(fs)
}

// RegisterCSV adds the flags that read a demand file: the CSV columns,
// --counts and --step.
func (f *InputFlags) RegisterCSV(fs *pflag.FlagSet) {
	f.fs = fs
	f.CSV.Register(fs)
	fs.BoolVar(&f.Counts, "counts", false, "values are requests per row, not requests/s")
	fs.DurationVar(&f.Step, "step", 0, "resample the demand to this step, for the replay as well as the forecasts, 1s to 7d (default: the file's own step; 1m for synthetic); at most 1,000,000 steps")
}

// RegisterFleet adds the fleet, SLO, sizing and plan flags
// (poolspec.FleetFlags).
func (f *InputFlags) RegisterFleet(fs *pflag.FlagSet) {
	f.fs = fs
	f.FleetFlags.Register(fs)
}

// RegisterPool adds --config and --pool. A command that calls it runs the
// named pool's settings instead of the fleet flags.
func (f *InputFlags) RegisterPool(fs *pflag.FlagSet) {
	fs.StringVar(&f.ConfigFile, "config", "", "the forecaster's configuration file (as 'serve --config'); with --pool, run exactly what serve runs for that pool: its fleet, SLO, sizing, planner, forecast and actuator limits (the flags that set these are then refused)")
	fs.StringVar(&f.PoolName, "pool", "", "the pool of --config to run")
}

// FromPool reports whether --config or --pool was given.
func (f *InputFlags) FromPool() bool { return f.ConfigFile != "" || f.PoolName != "" }

// Names lists the flags Register adds.
func (f *InputFlags) Names() []string {
	fs := pflag.NewFlagSet("names", pflag.ContinueOnError)
	var scratch InputFlags
	scratch.Register(fs)
	var names []string
	fs.VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
	return names
}

// LoadPool reads --config and returns the --pool it names (once; later
// calls return the same). extra maps the command's own flags that the pool
// spec also sets to their YAML keys: giving one of them, or a fleet flag
// the spec sets, is a usage error naming both.
func (f *InputFlags) LoadPool(extra map[string]string) (*poolspec.File, poolspec.Pool, error) {
	if f.pool != nil {
		return f.file, *f.pool, nil
	}
	switch {
	case f.ConfigFile == "":
		return nil, poolspec.Pool{}, poolspec.Flagf("--pool %q needs --config FILE", f.PoolName)
	case f.PoolName == "":
		return nil, poolspec.Pool{}, poolspec.Flagf("--config %s needs --pool NAME: the pool whose settings to run", f.ConfigFile)
	}
	if err := poolspec.RefuseOverrides(f.fs, f.ConfigFile, f.PoolName, extra); err != nil {
		return nil, poolspec.Pool{}, err
	}
	file, err := f.LoadConfig(f.ConfigFile)
	if err != nil {
		return nil, poolspec.Pool{}, err
	}
	p, err := file.Pool(f.PoolName)
	if err != nil {
		return nil, poolspec.Pool{}, poolspec.Flagf("--pool: %v in %s", err, f.ConfigFile)
	}
	f.file, f.pool = file, &p
	return file, p, nil
}

// Load reads the demand as requests/s (or generates it) and returns it as
// a trace, refusing one too long before it is allocated. The file's
// repairs are told on stderr.
func (f *InputFlags) Load(stderr io.Writer) (Trace, error) {
	if err := poolspec.CheckStep("--step", f.Step, time.Second, MaxDemandStep, true); err != nil {
		return Trace{}, err
	}
	if f.Input == "" {
		return Synthetic(f.SyntheticDays, f.Step, f.Bursts)
	}
	return f.LoadFile(f.Input, stderr)
}

// LoadFile reads one demand file with the CSV flags, --counts and --step.
func (f *InputFlags) LoadFile(path string, stderr io.Writer) (Trace, error) {
	opts := f.CSV.Options()
	opts.Counts, opts.Step = f.Counts, f.Step
	s, err := datasets.LoadCSVTelling(stderr, "forecaster "+f.fs.Name(), path, opts)
	if err != nil {
		return Trace{}, err
	}
	return FromSeries(path, s, f.Counts, f.Step)
}

// PlannerConfig builds the planner configuration for a trace: the pool's
// with --config/--pool (LoadPool), else the flags'
// (poolspec.FleetFlags.Planner).
func (f *InputFlags) PlannerConfig(tr Trace) (planner.Config, error) {
	if !f.FromPool() {
		return f.Planner(tr.Peak())
	}
	_, p, err := f.LoadPool(nil)
	if err != nil {
		return planner.Config{}, err
	}
	c, err := p.Planner()
	if err != nil {
		return c, fmt.Errorf("%s: %w", f.ConfigFile, err)
	}
	return c, nil
}
