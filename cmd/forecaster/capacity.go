package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/spf13/pflag"
)

// capacityFlags are the demand and fleet flags shared by 'backtest', 'plan'
// and 'report': register adds them, load reads the demand, plannerConfig
// builds the planner configuration. registerPool adds --config FILE --pool
// NAME: with them the fleet, SLO, planner, forecast and actuator settings
// are the pool's, exactly what 'serve' runs for it, and the flags that the
// pool spec also sets are refused (see poolOverrides).
type capacityFlags struct {
	input         string
	csv           csvFlags
	counts        bool
	step          time.Duration
	syntheticDays int

	gpuRPS        float64
	peakInstances int
	sizing        string
	serviceTime   time.Duration
	slots         int
	targetUtil    float64
	boot          time.Duration
	price         float64
	reservedPrice float64
	reserved      int
	slo           time.Duration
	sloTarget     float64
	schedule      string
	timeZone      string
	bursts        bool

	forecastQuantile float64
	calibrate        bool

	// limits are --min and --max, and the backtest's --max-step and
	// --min-interval: a pool's min, max, max_step and min_interval.
	limits planner.Limits

	// config and poolName are --config and --pool (registerPool).
	config, poolName string
	// fs is the flag set register added the flags to: which were given.
	fs *pflag.FlagSet
	// file and pool are the loaded configuration (loadPool), nil before.
	file *poolspec.File
	pool *poolspec.Pool
}

// The ranges of the capacity flags a pool has no key for (and of the
// backtest's own), checked before anything is allocated; the flags that
// set a pool's keys have the pool's ranges (planner.Config.CheckRanges).
// maxFleet is also actuator.Safe's sanity limit: it refuses to ask a
// back-end for more.
const (
	maxFleet         = planner.MaxFleet
	maxSyntheticDays = 366
	maxBoot          = planner.MaxDelay
	maxDemandStep    = 7 * 24 * time.Hour
	maxPrice         = planner.MaxPrice
	minGPURPS        = 1e-9
	maxGPURPS        = planner.MaxRate
	// maxTraceSteps bounds the steps of the demand after --step (a year
	// per minute fits): every policy keeps a row per step.
	maxTraceSteps = 1_000_000
	// maxServerTicks bounds a backtest's work before it starts: runs ×
	// ticks × the servers of the peak's fleet. The simulator's work per
	// tick, and the queue's per decision, grow with the fleet (Erlang C is
	// a recursion over the servers): about 25 ns a server-tick, so the
	// bound is a few minutes of work.
	maxServerTicks = 5e9
)

func (f *capacityFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.input, "input", "", "demand CSV file (timestamp and value columns); none: synthetic demand")
	f.registerCSV(fs)
	fs.IntVar(&f.syntheticDays, "synthetic-days", 28, fmt.Sprintf("days of synthetic demand when --input is not given, 1 to %d", maxSyntheticDays))
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

// The capacity flags' defaults where they differ from a pool's. A pool
// has no max (its file must set one); the figures of README.md and
// docs/scaling.md were measured at the flags' defaults, an Erlang-C queue
// and 1000 instances at most, where a pool sizes by utilisation.
const (
	flagSizing       = planner.SizingErlangC
	flagMaxInstances = 1000
)

// registerFleet adds the fleet, SLO, sizing and plan flags. Their
// defaults are a pool's (poolspec.DefaultPool), but for flagSizing and
// flagMaxInstances.
func (f *capacityFlags) registerFleet(fs *pflag.FlagSet) {
	f.fs = fs
	d := poolspec.DefaultPool()
	fs.Float64Var(&f.gpuRPS, "gpu-rps", 0, "requests/s one instance serves flat out, 1e-9 to 1e9 (each of its --slots takes slots/gpu-rps seconds a request)")
	fs.IntVar(&f.peakInstances, "peak-instances", 0, fmt.Sprintf("instead of --gpu-rps: size instances so the demand's peak needs this many, 1 to %d (under --sizing, at --slo-target)", maxFleet))
	fs.Float64Var(&f.targetUtil, "target-util", d.TargetUtilisation, "share of an instance's throughput the plan aims to use, in (0, 1]")
	fs.StringVar(&f.sizing, "sizing", flagSizing, "fleet sizing: erlang-c (the queue meets --slo-target within --slo, no busier than --target-util) or utilisation (at --target-util)")
	fs.DurationVar(&f.serviceTime, "service-time", 0, "instead of --gpu-rps: mean time a request occupies a slot, up to 1h (throughput slots/service-time)")
	fs.IntVar(&f.slots, "slots", d.Fleet.Slots, fmt.Sprintf("requests one instance serves at once: its servers in the queue, 1 to %d", maxFleet))
	fs.DurationVar(&f.boot, "boot", d.Fleet.BootDelay, "boot plus model-load time of a new instance, 0 to 24h")
	fs.IntVar(&f.limits.MinInstances, "min", d.Fleet.MinInstances, "fewest instances, 0 to --max")
	fs.IntVar(&f.limits.MaxInstances, "max", flagMaxInstances, fmt.Sprintf("most instances, 1 to %d", maxFleet))
	fs.Float64Var(&f.price, "price", d.Prices.OnDemandPerHour, "on-demand price per instance-hour (billed per second), 0 to 1e6")
	fs.Float64Var(&f.reservedPrice, "reserved-price", d.Prices.ReservedPerHour, "reserved price per instance-hour, 0 to 1e6")
	fs.IntVar(&f.reserved, "reserved", d.Prices.ReservedInstances, "reserved (committed) baseline instances, 0 to --max")
	fs.DurationVar(&f.slo, "slo", d.SLO.Latency, "longest a request may wait for a server, 0 to 1h")
	fs.Float64Var(&f.sloTarget, "slo-target", d.SLO.Quantile, "share of requests that must wait at most --slo, in [0.5, 1)")
	fs.Float64Var(&f.sloTarget, "slo-quantile", d.SLO.Quantile, "old name of --slo-target")
	_ = fs.MarkDeprecated("slo-quantile", "use --slo-target")
	fs.StringVar(&f.schedule, "schedule", "", "file of schedule floors, one a line: 'weekdays 09:45-12:00 [ZONE] at least 6'")
	fs.StringVar(&f.timeZone, "time-zone", d.TimeZone, "IANA time zone of schedule windows that name none")
	fs.Float64Var(&f.forecastQuantile, "forecast-quantile", d.ForecastQuantile,
		"quantile of a forecast step's demand the plans size for, in [0.5, 0.9999]: where the calibration starts, or fixed with --calibrate=false")
	fs.BoolVar(&f.calibrate, "calibrate", d.Calibration.On, "calibrate the forecast quantile walk-forward so the plans' estimated misses match --slo-target")
}

// registerPool adds --config and --pool. A command that calls it runs the
// named pool's settings (plannerConfig, forecastSettings, limits) instead
// of the fleet flags.
func (f *capacityFlags) registerPool(fs *pflag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "the forecaster's configuration file (as 'serve --config'); with --pool, run exactly what serve runs for that pool: its fleet, SLO, sizing, planner, forecast and actuator limits (the flags that set these are then refused)")
	fs.StringVar(&f.poolName, "pool", "", "the pool of --config to run")
}

// capacityOverrides maps each capacity flag that a pool spec also sets to
// the pool's YAML key: with --config, giving one is a usage error.
var capacityOverrides = map[string]string{
	"gpu-rps": "rps_per_instance", "peak-instances": "rps_per_instance or service_time",
	"service-time": "service_time", "slots": "slots", "sizing": "sizing", "target-util": "target_utilisation",
	"boot": "boot_delay", "min": "min", "max": "max", "price": "prices.on_demand_per_hour",
	"reserved-price": "prices.reserved_per_hour", "reserved": "prices.reserved_instances",
	"slo": "slo_latency", "slo-target": "slo_quantile", "slo-quantile": "slo_quantile",
	"schedule": "windows", "time-zone": "time_zone", "forecast-quantile": "forecast_quantile",
	"calibrate": "calibrate",
}

// fromPool reports whether --config or --pool was given.
func (f *capacityFlags) fromPool() bool { return f.config != "" || f.poolName != "" }

// loadPool reads --config and returns the --pool it names (once; later
// calls return the same). extra maps the command's own flags that the pool
// spec also sets to their YAML keys: giving one of them, or a capacity
// flag the spec sets, is a usage error naming both.
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
	if err := f.poolOverrides(extra); err != nil {
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

// poolOverrides refuses, with --config, the flags that the pool spec also
// sets. Refusing rather than overriding keeps the promise of --config: the
// table is what serve would do for the pool, never a blend of the file and
// the command line; a what-if study edits a copy of the file instead.
func (f *capacityFlags) poolOverrides(extra map[string]string) error {
	if f.fs == nil {
		return nil
	}
	var clash []string
	for _, m := range []map[string]string{capacityOverrides, extra} {
		for flag, key := range m {
			if fl := f.fs.Lookup(flag); fl != nil && fl.Changed {
				clash = append(clash, fmt.Sprintf("--%s (the pool's %s)", flag, key))
			}
		}
	}
	if len(clash) == 0 {
		return nil
	}
	slices.Sort(clash)
	return usageErrorf("--config %s --pool %s sets the fleet, SLO, planner and forecast settings; drop %s, or change the pool in the file",
		f.config, f.poolName, strings.Join(clash, ", "))
}

// load reads the demand as requests/s (or generates it) and returns it as
// a backtest trace, refusing a trace longer than maxTraceSteps before it is
// allocated.
func (f *capacityFlags) load(stderr io.Writer) (backtest.Trace, error) {
	if err := checkStep("--step", f.step, time.Second, maxDemandStep, true); err != nil {
		return backtest.Trace{}, err
	}
	if f.input == "" {
		step := f.step
		if step == 0 {
			step = time.Minute
		}
		if err := checkInt("--synthetic-days", f.syntheticDays, 1, maxSyntheticDays); err != nil {
			return backtest.Trace{}, err
		}
		n := int(time.Duration(f.syntheticDays) * 24 * time.Hour / step)
		if n > maxTraceSteps {
			return backtest.Trace{}, usageErrorf("--synthetic-days %d at --step %v is %d steps, more than %d: give fewer days or a coarser --step",
				f.syntheticDays, step, n, maxTraceSteps)
		}
		start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
		gen, name := datasets.DefaultSynthetic(), "synthetic"
		if f.bursts {
			gen, name = datasets.BurstySynthetic(), "synthetic-bursts"
		}
		s := gen.Generate(start, step, n)
		return backtest.Trace{Name: name, Start: s.Start, Step: s.Step, RPS: s.Values}, nil
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
	if s.Len() > maxTraceSteps {
		return backtest.Trace{}, usageErrorf("%s: %d steps at %v, more than %d: give a coarser --step", path, s.Len(), s.Step, maxTraceSteps)
	}
	if s.Len() > 0 && s.Missing()*2 > s.Len() {
		return backtest.Trace{}, fmt.Errorf("%s: %d of %d steps have no data; is --step %v finer than the file's own step?",
			path, s.Missing(), s.Len(), f.step)
	}
	if f.counts {
		s = s.PerSecond()
	}
	return backtest.Trace{Name: filepath.Base(path), Start: s.Start, Step: s.Step, RPS: s.Values}, nil
}

// plannerConfig builds the planner configuration for a trace: the pool's
// with --config/--pool (loadPool), else from the flags. Exactly one of
// --gpu-rps, --peak-instances and --service-time sets an instance's
// throughput; with --slots, each sets the others: a slot serves one
// request per service time, so gpu-rps = slots / service-time.
func (f *capacityFlags) plannerConfig(tr backtest.Trace) (planner.Config, error) {
	if f.fromPool() {
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
	if err := f.checkRanges(); err != nil {
		return planner.Config{}, err
	}
	c := f.flagConfig()
	c.Fleet.RPSPerInstance, c.Fleet.ServiceTime = 0, 0
	given := 0
	for _, set := range []bool{f.gpuRPS > 0, f.peakInstances > 0, f.serviceTime > 0} {
		if set {
			given++
		}
	}
	switch {
	case given > 1:
		return c, usageErrorf("give one of --gpu-rps, --peak-instances and --service-time: each sets the others")
	case f.gpuRPS > 0:
		c.Fleet.RPSPerInstance = f.gpuRPS
	case f.peakInstances > 0:
		if tr.Peak() <= 0 {
			return c, fmt.Errorf("--peak-instances: the demand has no positive peak to size from")
		}
		sized, err := c.SizeForPeak(tr.Peak(), f.peakInstances)
		if err != nil {
			return c, usageErrorf("--peak-instances: %v", err)
		}
		c = sized
	case f.serviceTime > 0:
		c.Fleet.RPSPerInstance = float64(f.slots) / f.serviceTime.Seconds()
	default:
		return c, usageErrorf("--gpu-rps (or --peak-instances, or --service-time) is required")
	}
	c.Fleet.ServiceTime = time.Duration(float64(f.slots) / c.Fleet.RPSPerInstance * float64(time.Second))
	if f.schedule != "" {
		loc, err := time.LoadLocation(f.timeZone)
		if err != nil {
			return c, usageErrorf("--time-zone %q: %v", f.timeZone, err)
		}
		text, err := os.ReadFile(f.schedule)
		if err != nil {
			return c, fmt.Errorf("--schedule: %w", err)
		}
		ws, err := planner.ParseWindows(string(text), loc)
		if err != nil {
			return c, fmt.Errorf("%s: %w", f.schedule, err)
		}
		c.Windows = ws
	} else if _, err := time.LoadLocation(f.timeZone); err != nil {
		return c, usageErrorf("--time-zone %q: %v", f.timeZone, err)
	}
	if err := c.Validate(); err != nil {
		return c, usageErrorf("%v", err)
	}
	return c, nil
}

// flagConfig is the planner configuration as the flags give it, before
// an instance's throughput is derived: a pool's defaults
// (poolspec.DefaultPool) with each flag's value.
func (f *capacityFlags) flagConfig() planner.Config {
	c := poolspec.DefaultPool().Config
	c.TargetUtilisation = f.targetUtil
	c.Sizing = f.sizing
	c.Fleet.RPSPerInstance = f.gpuRPS
	c.Fleet.ServiceTime = f.serviceTime
	c.Fleet.Slots = f.slots
	c.Fleet.BootDelay = f.boot
	c.Fleet.MinInstances, c.Fleet.MaxInstances = f.limits.MinInstances, f.limits.MaxInstances
	c.Prices.OnDemandPerHour = f.price
	c.Prices.ReservedPerHour = f.reservedPrice
	c.Prices.ReservedInstances = f.reserved
	c.SLO = planner.SLO{Latency: f.slo, Quantile: f.sloTarget}
	c.ForecastQuantile = f.forecastQuantile
	c.Calibration.On = f.calibrate
	return c
}

// checkRanges refuses a capacity flag outside its range (each flag's help
// states it), before anything is sized or allocated: the ranges of the
// pool's keys the flags set are the planner's table
// (planner.Config.CheckRanges), those of the flags a pool has no key for
// are their own.
func (f *capacityFlags) checkRanges() error {
	checks := []error{
		checkFloat("--gpu-rps", f.gpuRPS, minGPURPS, maxGPURPS, true),
		checkInt("--peak-instances", f.peakInstances, 0, maxFleet),
		checkRangeTable(f.flagConfig().CheckRanges, nil),
	}
	if f.sizing != planner.SizingErlangC && f.sizing != planner.SizingUtilisation {
		checks = append(checks, usageErrorf("--sizing %q: want %s or %s", f.sizing, planner.SizingErlangC, planner.SizingUtilisation))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkRangeTable refuses the first setting of a range table that is out
// of its range and set by a flag (capacityOverrides, then extra: flag to
// YAML key), naming the flag.
func checkRangeTable(table func(planner.RangeChecker), extra map[string]string) error {
	r := &flagRanges{flags: map[string]string{}}
	for _, m := range []map[string]string{capacityOverrides, extra} {
		for flag, key := range m {
			if _, dup := r.flags[key]; !dup && !deprecatedFlags[flag] {
				r.flags[key] = flag
			}
		}
	}
	table(r)
	return r.err
}

// deprecatedFlags are the old names of flags, never named in messages.
var deprecatedFlags = map[string]bool{"slo-quantile": true}

// flagRanges is a planner.RangeChecker that keeps the first setting out
// of its range as a usage error naming its flag; settings no flag sets
// are the planner's to check.
type flagRanges struct {
	flags map[string]string // YAML key → flag
	err   error
}

func (r *flagRanges) Int(x planner.Range[int]) {
	r.check(x.Key, x.Contains(), fmt.Sprint(x.Value), fmt.Sprintf("[%d, %s]", x.Lo, r.bound(x.HiKey, fmt.Sprint(x.Hi))))
}

func (r *flagRanges) Duration(x planner.Range[time.Duration]) {
	r.check(x.Key, x.Contains(), x.Value.String(), fmt.Sprintf("[%v, %s]", x.Lo, r.bound(x.HiKey, x.Hi.String())))
}

func (r *flagRanges) Float(x planner.Range[float64]) {
	r.check(x.Key, x.Contains(), fmt.Sprint(x.Value), x.Want())
}

// bound renders a range's end: the flag it comes from with its value.
func (r *flagRanges) bound(key, value string) string {
	if flag, ok := r.flags[key]; ok && key != "" {
		return "--" + flag + " " + value
	}
	return value
}

func (r *flagRanges) check(key string, in bool, value, want string) {
	flag, ok := r.flags[key]
	if r.err == nil && ok && !in {
		r.err = usageErrorf("--%s %s: must be in %s", flag, value, want)
	}
}

// checkInt refuses v outside [lo, hi].
func checkInt(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return usageErrorf("%s %d: must be in [%d, %d]", flag, v, lo, hi)
	}
	return nil
}

// checkFloat refuses v outside [lo, hi] (or NaN); zeroUnset lets 0 stand
// for "not given".
func checkFloat(flag string, v, lo, hi float64, zeroUnset bool) error {
	if zeroUnset && v == 0 {
		return nil
	}
	if !(v >= lo && v <= hi) {
		return usageErrorf("%s %v: must be in [%g, %g]", flag, v, lo, hi)
	}
	return nil
}

// checkUnit refuses v outside (0, 1) or, with closedAbove, (0, 1];
// zeroOK admits 0.
func checkUnit(flag string, v float64, zeroOK, closedAbove bool) error {
	ok := v > 0 && (v < 1 || closedAbove && v == 1)
	if ok || zeroOK && v == 0 {
		return nil
	}
	if closedAbove {
		return usageErrorf("%s %v: must be in (0, 1]", flag, v)
	}
	return usageErrorf("%s %v: must be in (0, 1)", flag, v)
}

// checkStep refuses a duration outside [lo, hi]; zeroUnset lets 0 stand
// for "not given" (the default).
func checkStep(flag string, v, lo, hi time.Duration, zeroUnset bool) error {
	if zeroUnset && v == 0 {
		return nil
	}
	if v < lo || v > hi {
		return usageErrorf("%s %v: must be in [%v, %v]", flag, v, lo, hi)
	}
	return nil
}
