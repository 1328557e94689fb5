package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
	"github.com/spf13/pflag"
)

// capacityFlags are the demand and fleet flags shared by 'backtest' and
// 'plan'.
type capacityFlags struct {
	input, valueColumn string
	counts             bool
	step               time.Duration
	syntheticDays      int

	gpuRPS        float64
	peakInstances int
	sizing        string
	serviceTime   time.Duration
	slots         int
	targetUtil    float64
	boot          time.Duration
	minInstances  int
	maxInstances  int
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
}

func (f *capacityFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.input, "input", "", "demand CSV file (timestamp and value columns); none: synthetic demand")
	fs.StringVar(&f.valueColumn, "value-column", "", "column holding the demand (default: the only value column)")
	fs.BoolVar(&f.counts, "counts", false, "values are requests per row, not requests/s")
	fs.DurationVar(&f.step, "step", 0, "resample the demand to this step, for the replay as well as the forecasts (default: the file's own step; 1m for synthetic)")
	fs.IntVar(&f.syntheticDays, "synthetic-days", 28, "days of synthetic demand when --input is not given")
	fs.BoolVar(&f.bursts, "synthetic-bursts", false, "synthetic demand with bursts: 4-5x for 5-12 min about every 2 h, jittered ±30 min")
	fs.Float64Var(&f.gpuRPS, "gpu-rps", 0, "requests/s one instance serves flat out (each of its --slots takes slots/gpu-rps seconds a request)")
	fs.IntVar(&f.peakInstances, "peak-instances", 0, "instead of --gpu-rps: size instances so the demand's peak needs this many (under --sizing, at --slo-target)")
	fs.Float64Var(&f.targetUtil, "target-util", 0.8, "share of an instance's throughput the plan aims to use")
	fs.StringVar(&f.sizing, "sizing", planner.SizingErlangC, "fleet sizing: erlang-c (the queue meets --slo-target within --slo, no busier than --target-util) or utilisation (at --target-util)")
	fs.DurationVar(&f.serviceTime, "service-time", 0, "instead of --gpu-rps: mean time a request occupies a slot (throughput slots/service-time)")
	fs.IntVar(&f.slots, "slots", 1, "requests one instance serves at once: its servers in the queue")
	fs.DurationVar(&f.boot, "boot", 10*time.Minute, "boot plus model-load time of a new instance")
	fs.IntVar(&f.minInstances, "min", 1, "fewest instances")
	fs.IntVar(&f.maxInstances, "max", 1000, "most instances")
	fs.Float64Var(&f.price, "price", 2.5, "on-demand price per instance-hour (billed per second)")
	fs.Float64Var(&f.reservedPrice, "reserved-price", 1.6, "reserved price per instance-hour")
	fs.IntVar(&f.reserved, "reserved", 0, "reserved (committed) baseline instances")
	fs.DurationVar(&f.slo, "slo", 10*time.Second, "longest a request may wait for a server")
	fs.Float64Var(&f.sloTarget, "slo-target", planner.DefaultConfig().SLO.Quantile, "share of requests that must wait at most --slo")
	fs.Float64Var(&f.sloTarget, "slo-quantile", planner.DefaultConfig().SLO.Quantile, "old name of --slo-target")
	_ = fs.MarkDeprecated("slo-quantile", "use --slo-target")
	fs.StringVar(&f.schedule, "schedule", "", "file of schedule floors, one a line: 'weekdays 09:45-12:00 [ZONE] at least 6'")
	fs.StringVar(&f.timeZone, "time-zone", "UTC", "IANA time zone of schedule windows that name none")
	fs.Float64Var(&f.forecastQuantile, "forecast-quantile", planner.DefaultConfig().ForecastQuantile,
		"quantile of a forecast step's demand the plans size for: where the calibration starts, or fixed with --calibrate=false")
	fs.BoolVar(&f.calibrate, "calibrate", true, "calibrate the forecast quantile walk-forward so the plans' estimated misses match --slo-target")
}

// load reads the demand as requests/s (or generates it) and returns it as
// a backtest trace.
func (f *capacityFlags) load(stderr io.Writer) (backtest.Trace, error) {
	if f.input == "" {
		step := f.step
		if step == 0 {
			step = time.Minute
		}
		if f.syntheticDays < 1 {
			return backtest.Trace{}, usageErrorf("--synthetic-days %d: must be at least 1", f.syntheticDays)
		}
		start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
		gen, name := datasets.DefaultSynthetic(), "synthetic"
		if f.bursts {
			gen, name = datasets.BurstySynthetic(), "synthetic-bursts"
		}
		s := gen.Generate(start, step, int(time.Duration(f.syntheticDays)*24*time.Hour/step))
		return backtest.Trace{Name: name, Start: s.Start, Step: s.Step, RPS: s.Values}, nil
	}
	s, err := datasets.LoadCSV(f.input, datasets.CSVOptions{ValueColumn: f.valueColumn, Counts: f.counts, Step: f.step})
	if err != nil {
		var bad *datasets.BadRowsError
		if errors.As(err, &bad) {
			for i, r := range bad.Rows {
				if i == 20 {
					fmt.Fprintf(stderr, "... and %d more bad rows\n", len(bad.Rows)-i)
					break
				}
				fmt.Fprintln(stderr, r.Error())
			}
		}
		return backtest.Trace{}, err
	}
	if s.Len() > 0 && s.Missing()*2 > s.Len() {
		return backtest.Trace{}, fmt.Errorf("%s: %d of %d steps have no data; is --step %v finer than the file's own step?",
			f.input, s.Missing(), s.Len(), f.step)
	}
	if f.counts {
		s = s.PerSecond()
	}
	return backtest.Trace{Name: filepath.Base(f.input), Start: s.Start, Step: s.Step, RPS: s.Values}, nil
}

// plannerConfig builds the planner configuration for a trace. Exactly one
// of --gpu-rps, --peak-instances and --service-time sets an instance's
// throughput; with --slots, each sets the others: a slot serves one
// request per service time, so gpu-rps = slots / service-time.
func (f *capacityFlags) plannerConfig(tr backtest.Trace) (planner.Config, error) {
	c := planner.DefaultConfig()
	c.TargetUtilisation = f.targetUtil
	c.Sizing = f.sizing
	c.Fleet.Slots = f.slots
	c.Fleet.BootDelay = f.boot
	c.Fleet.MinInstances = f.minInstances
	c.Fleet.MaxInstances = f.maxInstances
	c.Prices.OnDemandPerHour = f.price
	c.Prices.ReservedPerHour = f.reservedPrice
	c.Prices.ReservedInstances = f.reserved
	c.SLO = planner.SLO{Latency: f.slo, Quantile: f.sloTarget}
	c.ForecastQuantile = f.forecastQuantile
	c.Calibration.Off = !f.calibrate
	given := 0
	for _, set := range []bool{f.gpuRPS > 0, f.peakInstances > 0, f.serviceTime > 0} {
		if set {
			given++
		}
	}
	switch {
	case f.slots < 1:
		return c, usageErrorf("--slots %d: must be at least 1", f.slots)
	case given > 1:
		return c, usageErrorf("give one of --gpu-rps, --peak-instances and --service-time: each sets the others")
	case f.gpuRPS > 0:
		c.Fleet.RPSPerInstance = f.gpuRPS
	case f.peakInstances > 0:
		if !(f.targetUtil > 0 && f.targetUtil <= 1) {
			return c, usageErrorf("--target-util %v: must be in (0, 1]", f.targetUtil)
		}
		if tr.Peak() <= 0 {
			return c, fmt.Errorf("--peak-instances: the demand has no positive peak to size from")
		}
		if !(f.sloTarget > 0 && f.sloTarget < 1) {
			return c, usageErrorf("--slo-target %v: must be in (0, 1)", f.sloTarget)
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

// runBacktest implements 'forecaster backtest'.
func runBacktest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backtest", "[--input FILE] [--value-column C] [--counts] [--step 1m] --peak-instances N | --gpu-rps R | --service-time S\n"+
		"       [--boot 10m] [--slo 10s] [--slo-target 0.995] [--policies static,flat,...] [--frontier] [--format table|json] [--out DIR]",
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
			"(timestamp,demand_rps,ready,desired,billed) and plots.", stderr)
	var cf capacityFlags
	cf.register(fs)
	policies := fs.StringSlice("policies", backtest.Policies(), "policies to compare")
	format := fs.String("format", "table", "output format: table or json")
	out := fs.String("out", "", "directory for capacity-<policy>.csv files and plots")
	plotFormat := fs.String("plot-format", "png", "plot format: png or svg")
	def := control.Settings{}.WithDefaults()
	refit := fs.Duration("refit", 0, fmt.Sprintf("how often the forecasting policies refit (default %v, as serve's forecast.refit_every)", def.RefitEvery))
	forecastStep := fs.Duration("forecast-step", 0, fmt.Sprintf("forecast grid (default %v, as serve's forecast.step, or the demand's step when coarser)", def.Step))
	aggregate := fs.String("forecast-aggregate", "max", "how demand steps fold into a forecast step: max (size for the busiest) or mean")
	timeout := fs.Duration("timeout", time.Minute, "requests waiting longer are dropped")
	bootSpread := fs.Duration("boot-spread", 0, "standard deviation of each instance's boot time around --boot (0: every boot takes --boot)")
	drain := fs.Duration("drain", 0, "how long a removed instance stays billed finishing its requests (default: the service time per slot, S·(1+1/2+…+1/slots); negative: none)")
	metricsLag := fs.Duration("metrics-lag", 0, "age of the newest metrics the reactive rules see (default one tick: one collection interval)")
	maxStep := fs.Int("max-step", 0, "actuator limit: most instances one change adds or removes (0: no limit, as serve's max_step)")
	minInterval := fs.Duration("min-interval", 0, "actuator limit: least time between two changes (0: no limit, as serve's min_interval)")
	warmUp := fs.Duration("warm-up", 24*time.Hour, "time from the start that slo_attainment_after_warmup leaves out")
	scoreFrom := fs.String("score-from", "", "count figures only from this time (RFC 3339), e.g. to score the second half after tuning on the first")
	scoreUntil := fs.String("score-until", "", "count figures only before this time (RFC 3339)")
	frontier := fs.Bool("frontier", false, "sweep each policy's knobs and report the cheapest setting reaching each --slo-targets value")
	sloTargets := fs.Float64Slice("slo-targets", []float64{0.99, 0.995, 0.999}, "SLO targets of the frontier")
	spotShare := fs.Float64("spot-share", 0, "share of instances above the reserved baseline run on spot")
	spotRate := fs.Float64("spot-interruptions", 0.05, "interruptions per spot instance-hour")
	spotPrice := fs.Float64("spot-price", 1.0, "spot price per instance-hour")
	seed := fs.Uint64("seed", 1, "seed for spot interruptions and boot times")
	writeDemand := fs.String("write-demand", "", "also write the demand replayed (after --step) to this CSV file as timestamp,requests per step")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	case *format != "table" && *format != "json":
		return usageErrorf("--format %q: want table or json", *format)
	case *plotFormat != "png" && *plotFormat != "svg":
		return usageErrorf("--plot-format %q: want png or svg", *plotFormat)
	case *aggregate != "max" && *aggregate != "mean":
		return usageErrorf("--forecast-aggregate %q: want max or mean", *aggregate)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--refit", *refit}, {"--forecast-step", *forecastStep}, {"--timeout", *timeout}, {"--boot-spread", *bootSpread},
		{"--metrics-lag", *metricsLag}, {"--min-interval", *minInterval}, {"--warm-up", *warmUp}} {
		if d.v < 0 {
			return usageErrorf("%s %v: must not be negative", d.flag, d.v)
		}
	}
	switch {
	case *maxStep < 0:
		return usageErrorf("--max-step %d: must not be negative", *maxStep)
	case !(*spotShare >= 0 && *spotShare <= 1):
		return usageErrorf("--spot-share %v: must be in [0, 1]", *spotShare)
	case !(*spotRate >= 0) || math.IsInf(*spotRate, 0):
		return usageErrorf("--spot-interruptions %v: must be finite and >= 0", *spotRate)
	case !(*spotPrice >= 0) || math.IsInf(*spotPrice, 0):
		return usageErrorf("--spot-price %v: must be a finite price >= 0", *spotPrice)
	}
	for _, q := range *sloTargets {
		if !(q > 0 && q < 1) {
			return usageErrorf("--slo-targets %v: each must be in (0, 1)", q)
		}
	}
	for _, p := range *policies {
		if !slices.Contains(backtest.Policies(), p) {
			return usageErrorf("--policies: unknown policy %q: want some of %s", p, strings.Join(backtest.Policies(), ","))
		}
	}
	tr, err := cf.load(stderr)
	if err != nil {
		return err
	}
	if *writeDemand != "" {
		if err := writeReplayedDemand(*writeDemand, tr); err != nil {
			return fmt.Errorf("--write-demand: %w", err)
		}
	}
	cfg := backtest.DefaultConfig()
	if cfg.Planner, err = cf.plannerConfig(tr); err != nil {
		return err
	}
	cfg.Forecast.RefitEvery = *refit
	cfg.Forecast.Step = *forecastStep
	cfg.Forecast.Aggregate = *aggregate
	cfg.QueueTimeout = *timeout
	cfg.BootSpread = *bootSpread
	cfg.Drain = *drain
	cfg.MetricsLag = *metricsLag
	cfg.Limits = backtest.Limits{MaxStep: *maxStep, MinInterval: *minInterval}
	cfg.WarmUp = *warmUp
	if cfg.ScoreFrom, err = parseScoreTime("--score-from", *scoreFrom); err != nil {
		return err
	}
	if cfg.ScoreUntil, err = parseScoreTime("--score-until", *scoreUntil); err != nil {
		return err
	}
	cfg.Spot = backtest.Spot{Share: *spotShare, InterruptionsPerHour: *spotRate, Seed: *seed}
	cfg.Planner.Prices.SpotPerHour = *spotPrice
	var rep backtest.Report
	var front backtest.Frontier
	if *frontier {
		rep, front, err = backtest.RunFrontier(ctx, tr, cfg, *sloTargets, *policies...)
	} else {
		rep, err = backtest.Run(ctx, tr, cfg, *policies...)
	}
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeBacktestFiles(*out, *plotFormat, rep, front.Trials, *sloTargets, cfg.Planner.Fleet.RPS()); err != nil {
			return err
		}
	}
	if *format == "json" {
		return printJSON(stdout, backtestJSON{Trace: rep.Trace, Static: rep.Static, Flat: rep.Flat, GPURPS: cfg.Planner.Fleet.RPS(),
			ServiceTimeS: cfg.Planner.Fleet.ServiceTime.Seconds(), Slots: cfg.Planner.Fleet.Slots, SLOTarget: cfg.Planner.SLO.Quantile,
			TraceRequests: rep.TraceRequests, Tick: rep.Tick.String(), ForecastStep: rep.ForecastStep.String(),
			Refit: rep.RefitEvery.String(), Policies: rep.Policies, Frontier: front.Points})
	}
	if err := writeBacktestTable(stdout, rep, cfg.Planner); err != nil {
		return err
	}
	if *frontier {
		fmt.Fprintln(stdout)
		return writeFrontierTable(stdout, front.Points)
	}
	return nil
}

// writeReplayedDemand writes the trace as requests per step, exactly (a file
// --input … --counts reads back to the same rates), a gap as an empty
// value.
func writeReplayedDemand(path string, tr backtest.Trace) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "timestamp,requests")
	for i, v := range tr.RPS {
		count := ""
		if !math.IsNaN(v) {
			count = strconv.FormatFloat(v*tr.Step.Seconds(), 'g', -1, 64)
		}
		fmt.Fprintf(w, "%s,%s\n", tr.Start.Add(time.Duration(i)*tr.Step).Format(time.RFC3339), count)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func parseScoreTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, usageErrorf("%s %q: want an RFC 3339 time such as 2014-10-15T00:00:00Z", flag, v)
	}
	return t, nil
}

// backtestJSON is the --format json document: "policies" and "frontier"
// as the issue specifies, plus the settings that produced them.
type backtestJSON struct {
	Trace         string                   `json:"trace"`
	Static        int                      `json:"static_instances"`
	Flat          int                      `json:"flat_instances,omitempty"`
	GPURPS        float64                  `json:"gpu_rps"`
	ServiceTimeS  float64                  `json:"service_time_s"`
	Slots         int                      `json:"slots"`
	SLOTarget     float64                  `json:"slo_target"`
	TraceRequests float64                  `json:"trace_requests"`
	Tick          string                   `json:"tick"`
	ForecastStep  string                   `json:"forecast_step"`
	Refit         string                   `json:"refit_every"`
	Policies      []backtest.Result        `json:"policies"`
	Frontier      []backtest.FrontierPoint `json:"frontier,omitempty"`
}

func writeBacktestTable(w io.Writer, rep backtest.Report, c planner.Config) error {
	fmt.Fprintf(w, "%s: static peak needs %d instances of %.4g req/s (%d slots, %.3g s a request); boot %s; SLO: %.1f%% wait <= %s;\n"+
		"tick %s, forecast step %s, refit every %s\n\n",
		rep.Trace, rep.Static, c.Fleet.RPS(), c.Fleet.Slots, c.Fleet.ServiceTime.Seconds(), c.Fleet.BootDelay,
		100*c.SLO.Quantile, c.SLO.Latency, rep.Tick, rep.ForecastStep, rep.RefitEvery)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tGPU-hours\tcost\tvs static\tvs oracle\tper 1k req\tSLO attainment\tafter day 1\tP99 wait (s)\tP99 latency (s)\tdropped\tunder-prov. min\tactions\t")
	for _, r := range rep.Policies {
		name := r.Name
		if r.Name == backtest.PolicyFlat || r.Name == backtest.PolicyStatic {
			name = fmt.Sprintf("%s (%d)", r.Name, r.Instances)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.1f%%\t%.2fx\t%.4g\t%.3f%%\t%.3f%%\t%.1f\t%.1f\t%.0f\t%.0f\t%d\t\n", name, r.GPUHours, r.Cost,
			100*r.CostVsStatic, r.CostVsOracle, r.CostPer1kRequests, 100*r.SLOAttainment, 100*r.SLOAttainmentAfterWarmUp,
			r.P99WaitS, r.P99LatencyS, r.Dropped, r.UnderprovisionedMinutes, r.Actions)
	}
	return tw.Flush()
}

// writeFrontierTable prints the cheapest setting of each policy per SLO
// target.
func writeFrontierTable(w io.Writer, front []backtest.FrontierPoint) error {
	fmt.Fprintln(w, "frontier: the cheapest setting of each policy that reaches each SLO target")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policy\tSLO target\treached\tvs static\tSLO attainment\tsettings")
	for _, p := range front {
		fmt.Fprintf(tw, "%s\t%.2f%%\t%v\t%.1f%%\t%.3f%%\t%s\n", p.Policy, 100*p.SLOTarget, p.Reached, 100*p.CostVsStatic,
			100*p.SLOAttainment, formatSettings(p.Settings))
	}
	return tw.Flush()
}

func formatSettings(s map[string]string) string {
	keys := slices.Sorted(maps.Keys(s))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + s[k]
	}
	return strings.Join(parts, " ")
}

func writeBacktestFiles(dir, plotFormat string, rep backtest.Report, trials []backtest.FrontierTrial, targets []float64, rps float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	write := func(name string, fill func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := fill(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		return f.Close()
	}
	for _, r := range rep.Policies {
		if err := write("capacity-"+r.Name+".csv", func(w io.Writer) error { return backtest.WriteCapacityCSV(w, r) }); err != nil {
			return err
		}
		p, err := backtest.PlotCapacity(r, rep.Trace, rps)
		if err != nil {
			return err
		}
		if err := write("capacity-"+r.Name+"."+plotFormat, func(w io.Writer) error {
			return backtest.WritePlot(w, p, plotFormat, backtest.PlotWidth, backtest.PlotHeight)
		}); err != nil {
			return err
		}
	}
	p, err := backtest.PlotTradeoff(rep)
	if err != nil {
		return err
	}
	if err := write("tradeoff."+plotFormat, func(w io.Writer) error {
		return backtest.WritePlot(w, p, plotFormat, backtest.PlotHeight*1.3, backtest.PlotHeight)
	}); err != nil {
		return err
	}
	if len(trials) == 0 {
		return nil
	}
	fp, err := backtest.PlotFrontier(rep.Trace, trials, targets, rep.Policies)
	if err != nil {
		return err
	}
	return write("frontier."+plotFormat, func(w io.Writer) error {
		return backtest.WritePlot(w, fp, plotFormat, backtest.PlotHeight*1.3, backtest.PlotHeight)
	})
}
