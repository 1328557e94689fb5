package poolspec

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/planner"
)

// FlagError is a command-line value the forecaster refuses: out of its
// range, or a combination that cannot hold. The forecaster exits 2 for it
// and points at --help; the message names the flag.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// Flagf builds a FlagError with a formatted message.
func Flagf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// The ranges of the fleet flags a pool has no key for; the flags that set
// a pool's keys have the pool's ranges (planner.Config.CheckRanges).
const (
	// MaxFleet is the most instances a flag may name, actuator.Safe's
	// sanity limit too.
	MaxFleet  = planner.MaxFleet
	minGPURPS = 1e-9
)

// FlagMaxInstances is --max's default, the one fleet flag whose default
// is not a pool's (DefaultPool): a pool has no default max, its file must
// name one, while the flags need a ceiling to size under when none is
// given. The figures of README.md and docs/scaling.md were measured at it.
// --max and a pool's max share one range (planner.Limits.CheckRanges).
const FlagMaxInstances = 1000

// FleetFlags are the fleet, SLO, sizing and plan flags of 'backtest',
// 'plan', 'report' and 'eval policy': what a pool's file sets, given on
// the command line instead. Register adds them with a pool's defaults
// (DefaultPool), Planner builds the planner configuration.
type FleetFlags struct {
	GPURPS        float64
	PeakInstances int
	Sizing        string
	ServiceTime   time.Duration
	Slots         int
	TargetUtil    float64
	Boot          time.Duration
	WarmStart     time.Duration
	Price         float64
	StoppedPrice  float64
	ReservedPrice float64
	Reserved      int
	SLO           time.Duration
	SLOTarget     float64
	Schedule      string
	TimeZone      string

	ForecastQuantile float64
	Calibrate        bool

	// Limits are --min and --max (and the backtest's --max-step and
	// --min-interval, which the backtest registers): a pool's min, max,
	// max_step and min_interval.
	Limits planner.Limits
}

// Register adds the fleet flags to fs. Their defaults are a pool's
// (DefaultPool), but for --max's (FlagMaxInstances).
func (f *FleetFlags) Register(fs *pflag.FlagSet) {
	d := DefaultPool()
	in := func(key string) string { return HelpRange(planner.DefaultConfig().CheckRanges, key) }
	fs.Float64Var(&f.GPURPS, "gpu-rps", 0, "requests/s one instance serves flat out, "+HelpNumber(minGPURPS)+" to "+HelpNumber(planner.MaxRate)+" (each of its --slots takes slots/gpu-rps seconds a request)")
	fs.IntVar(&f.PeakInstances, "peak-instances", 0, fmt.Sprintf("instead of --gpu-rps: size instances so the demand's peak needs this many, 1 to %d (under --sizing, at --slo-target)", MaxFleet))
	fs.Float64Var(&f.TargetUtil, "target-util", d.TargetUtilisation, "share of an instance's throughput the plan aims to use, in "+in("target_utilisation"))
	fs.StringVar(&f.Sizing, "sizing", d.Sizing, "fleet sizing: erlang-c (the queue meets --slo-target within --slo, no busier than --target-util) or utilisation (at --target-util)")
	fs.DurationVar(&f.ServiceTime, "service-time", 0, "instead of --gpu-rps: mean time a request occupies a slot, "+in("service_time")+" (throughput slots/service-time)")
	fs.IntVar(&f.Slots, "slots", d.Fleet.Slots, "requests one instance serves at once: its servers in the queue, "+in("slots"))
	fs.DurationVar(&f.Boot, "boot", d.Fleet.BootDelay, "boot plus model-load time of a new instance, "+in("boot_delay"))
	fs.DurationVar(&f.WarmStart, "warm-start", d.Fleet.WarmStart, "start time of a stopped instance of the warm tier, "+in("warm_start")+", below it (0: no warm tier)")
	fs.Float64Var(&f.StoppedPrice, "stopped-price", d.Prices.StoppedPerHour, "price per stopped instance-hour of the warm tier (its disks), "+in("prices.stopped_per_hour"))
	fs.IntVar(&f.Limits.MinInstances, "min", d.Fleet.MinInstances, "fewest instances, 0 to --max")
	fs.IntVar(&f.Limits.MaxInstances, "max", FlagMaxInstances, fmt.Sprintf("most instances, 1 to %d", MaxFleet))
	fs.Float64Var(&f.Price, "price", d.Prices.OnDemandPerHour, "on-demand price per instance-hour (billed per second), "+in("prices.on_demand_per_hour"))
	fs.Float64Var(&f.ReservedPrice, "reserved-price", d.Prices.ReservedPerHour, "reserved price per instance-hour, "+in("prices.reserved_per_hour"))
	fs.IntVar(&f.Reserved, "reserved", d.Prices.ReservedInstances, "reserved (committed) baseline instances, "+in("prices.reserved_instances"))
	fs.DurationVar(&f.SLO, "slo", d.SLO.Latency, "longest a request may wait for a server, "+in("slo_latency"))
	fs.Float64Var(&f.SLOTarget, "slo-target", d.SLO.Quantile, "share of requests that must wait at most --slo, in "+in("slo_quantile"))
	fs.Float64Var(&f.SLOTarget, "slo-quantile", d.SLO.Quantile, "old name of --slo-target")
	_ = fs.MarkDeprecated("slo-quantile", "use --slo-target")
	fs.StringVar(&f.Schedule, "schedule", "", "file of schedule floors, one a line: 'weekdays 09:45-12:00 [ZONE] at least 6'")
	fs.StringVar(&f.TimeZone, "time-zone", d.TimeZone, "IANA time zone of schedule windows that name none")
	fs.Float64Var(&f.ForecastQuantile, "forecast-quantile", d.ForecastQuantile,
		"quantile of a forecast step's demand the plans size for, in "+in("forecast_quantile")+": where the calibration starts, or fixed with --calibrate=false")
	fs.BoolVar(&f.Calibrate, "calibrate", d.Calibration.On, "calibrate the forecast quantile walk-forward so the plans' estimated misses match --slo-target")
}

// FleetKeys maps each fleet flag to the pool's YAML key it stands for:
// with --config, giving one is a usage error (RefuseOverrides). It is a
// new map each call.
func FleetKeys() map[string]string {
	return map[string]string{
		"gpu-rps": "rps_per_instance", "peak-instances": "rps_per_instance or service_time",
		"service-time": "service_time", "slots": "slots", "sizing": "sizing", "target-util": "target_utilisation",
		"boot": "boot_delay", "warm-start": "warm_start", "stopped-price": "prices.stopped_per_hour", "min": "min", "max": "max", "price": "prices.on_demand_per_hour",
		"reserved-price": "prices.reserved_per_hour", "reserved": "prices.reserved_instances",
		"slo": "slo_latency", "slo-target": "slo_quantile", "slo-quantile": "slo_quantile",
		"schedule": "windows", "time-zone": "time_zone", "forecast-quantile": "forecast_quantile",
		"calibrate": "calibrate",
	}
}

// RefuseOverrides refuses, with --config FILE --pool NAME, the flags of fs
// that the pool spec also sets (FleetKeys, then extra: flag to YAML key),
// naming each with its key. Refusing rather than overriding keeps the
// promise of --config: what runs is what serve would do for the pool,
// never a blend of the file and the command line. The flags in override
// are the exceptions a command documents (report's prices): they may
// override the pool's setting, and the error names them.
func RefuseOverrides(fs *pflag.FlagSet, config, pool string, extra map[string]string, override ...string) error {
	if fs == nil {
		return nil
	}
	var clash []string
	for _, m := range []map[string]string{FleetKeys(), extra} {
		for flag, key := range m {
			if fl := fs.Lookup(flag); fl != nil && fl.Changed && !slices.Contains(override, flag) {
				clash = append(clash, fmt.Sprintf("--%s (the pool's %s)", flag, key))
			}
		}
	}
	if len(clash) == 0 {
		return nil
	}
	slices.Sort(clash)
	msg := fmt.Sprintf("--config %s --pool %s sets the fleet, SLO, planner and forecast settings; drop %s, or change the pool in the file",
		config, pool, strings.Join(clash, ", "))
	if len(override) > 0 {
		msg += " (only --" + strings.Join(override, ", --") + " may override it)"
	}
	return Flagf("%s", msg)
}

// Planner builds the planner configuration the flags give, for demand
// whose peak is peakRPS. Exactly one of --gpu-rps, --peak-instances and
// --service-time sets an instance's throughput; with --slots, each sets
// the others: a slot serves one request per service time, so gpu-rps =
// slots / service-time. --schedule's windows are read in --time-zone.
func (f *FleetFlags) Planner(peakRPS float64) (planner.Config, error) {
	if err := f.CheckRanges(); err != nil {
		return planner.Config{}, err
	}
	c, err := f.throughput(peakRPS)
	if err != nil {
		return c, err
	}
	loc, err := time.LoadLocation(f.TimeZone)
	if f.Schedule != "" {
		if err != nil {
			return c, Flagf("--time-zone %q: %v", f.TimeZone, err)
		}
		if c.Windows, err = f.windows(loc); err != nil {
			return c, err
		}
	} else if err != nil {
		return c, Flagf("--time-zone %q: %v", f.TimeZone, err)
	}
	if err := c.Validate(); err != nil {
		return c, Flagf("%v", err)
	}
	return c, nil
}

// throughput is Config with an instance's throughput and service time
// set from the one flag that gives them.
func (f *FleetFlags) throughput(peakRPS float64) (planner.Config, error) {
	c := f.Config()
	c.Fleet.RPSPerInstance, c.Fleet.ServiceTime = 0, 0
	given := 0
	for _, set := range []bool{f.GPURPS > 0, f.PeakInstances > 0, f.ServiceTime > 0} {
		if set {
			given++
		}
	}
	switch {
	case given > 1:
		return c, Flagf("give one of --gpu-rps, --peak-instances and --service-time: each sets the others")
	case f.GPURPS > 0:
		c.Fleet.RPSPerInstance = f.GPURPS
	case f.PeakInstances > 0:
		if peakRPS <= 0 {
			return c, fmt.Errorf("--peak-instances: the demand has no positive peak to size from")
		}
		sized, err := c.SizeForPeak(peakRPS, f.PeakInstances)
		if err != nil {
			return c, Flagf("--peak-instances: %v", err)
		}
		c = sized
	case f.ServiceTime > 0:
		c.Fleet.RPSPerInstance = float64(f.Slots) / f.ServiceTime.Seconds()
	default:
		return c, Flagf("--gpu-rps (or --peak-instances, or --service-time) is required")
	}
	c.Fleet.ServiceTime = c.Fleet.MeanServiceTime() // slots/throughput, as Pool.Planner derives it
	return c, nil
}

// windows reads --schedule's floors, in loc where a line names no zone.
func (f *FleetFlags) windows(loc *time.Location) ([]planner.Window, error) {
	text, err := os.ReadFile(f.Schedule)
	if err != nil {
		return nil, fmt.Errorf("--schedule: %w", err)
	}
	ws, err := planner.ParseWindows(string(text), loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Schedule, err)
	}
	return ws, nil
}

// Config is the planner configuration as the flags give it, before an
// instance's throughput is derived: a pool's defaults (DefaultPool) with
// each flag's value.
func (f *FleetFlags) Config() planner.Config {
	c := DefaultPool().Config
	c.TargetUtilisation = f.TargetUtil
	c.Sizing = f.Sizing
	c.Fleet.RPSPerInstance = f.GPURPS
	c.Fleet.ServiceTime = f.ServiceTime
	c.Fleet.Slots = f.Slots
	c.Fleet.BootDelay = f.Boot
	c.Fleet.WarmStart = f.WarmStart
	c.Prices.StoppedPerHour = f.StoppedPrice
	c.Fleet.MinInstances, c.Fleet.MaxInstances = f.Limits.MinInstances, f.Limits.MaxInstances
	c.Prices.OnDemandPerHour = f.Price
	c.Prices.ReservedPerHour = f.ReservedPrice
	c.Prices.ReservedInstances = f.Reserved
	c.SLO = planner.SLO{Latency: f.SLO, Quantile: f.SLOTarget}
	c.ForecastQuantile = f.ForecastQuantile
	c.Calibration.On = f.Calibrate
	return c
}

// CheckRanges refuses a fleet flag outside its range (each flag's help
// states it), before anything is sized or allocated: the ranges of the
// pool's keys the flags set are the planner's table
// (planner.Config.CheckRanges), those of the flags a pool has no key for
// are their own.
func (f *FleetFlags) CheckRanges() error {
	checks := []error{
		CheckFloat("--gpu-rps", f.GPURPS, minGPURPS, planner.MaxRate, true),
		CheckInt("--peak-instances", f.PeakInstances, 0, MaxFleet),
		CheckRangeTable(f.Config().CheckRanges, nil),
	}
	if f.Sizing != planner.SizingErlangC && f.Sizing != planner.SizingUtilisation {
		checks = append(checks, Flagf("--sizing %q: want %s or %s", f.Sizing, planner.SizingErlangC, planner.SizingUtilisation))
	}
	return firstError(checks)
}

// firstError is the first non-nil of errs.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
