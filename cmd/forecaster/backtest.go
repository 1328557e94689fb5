package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
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
	sloQuantile   float64
	schedule      string
}

func (f *capacityFlags) register(fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	IntVar(*int, string, int, string)
	Float64Var(*float64, string, float64, string)
}) {
	fs.StringVar(&f.input, "input", "", "demand CSV file (timestamp and value columns); none: synthetic demand")
	fs.StringVar(&f.valueColumn, "value-column", "", "column holding the demand (default: the only value column)")
	fs.BoolVar(&f.counts, "counts", false, "values are requests per row, not requests/s")
	fs.DurationVar(&f.step, "step", 0, "resample the demand to this step (default: the file's own step; 1m for synthetic)")
	fs.IntVar(&f.syntheticDays, "synthetic-days", 28, "days of synthetic demand when --input is not given")
	fs.Float64Var(&f.gpuRPS, "gpu-rps", 0, "requests/s one instance serves within the latency SLO")
	fs.IntVar(&f.peakInstances, "peak-instances", 0, "instead of --gpu-rps: size instances so the demand's peak needs this many")
	fs.Float64Var(&f.targetUtil, "target-util", 0.8, "share of an instance's throughput the plan aims to use")
	fs.StringVar(&f.sizing, "sizing", planner.SizingUtilisation, "fleet sizing: utilisation (at --target-util) or erlang-c (P99 wait within --slo)")
	fs.DurationVar(&f.serviceTime, "service-time", 0, "mean time a request occupies a slot (erlang-c sizing; without --gpu-rps it also sets the throughput)")
	fs.IntVar(&f.slots, "slots", 1, "requests one instance serves at once (erlang-c servers per instance)")
	fs.DurationVar(&f.boot, "boot", 10*time.Minute, "boot plus model-load time of a new instance")
	fs.IntVar(&f.minInstances, "min", 1, "fewest instances")
	fs.IntVar(&f.maxInstances, "max", 1000, "most instances")
	fs.Float64Var(&f.price, "price", 2.5, "on-demand price per instance-hour (billed per second)")
	fs.Float64Var(&f.reservedPrice, "reserved-price", 1.6, "reserved price per instance-hour")
	fs.IntVar(&f.reserved, "reserved", 0, "reserved (committed) baseline instances")
	fs.DurationVar(&f.slo, "slo", 10*time.Second, "longest a request may wait for capacity")
	fs.Float64Var(&f.sloQuantile, "slo-quantile", 0.99, "share of requests that must meet --slo; the plan sizes at this forecast quantile")
	fs.StringVar(&f.schedule, "schedule", "", "file of schedule floors, one a line: 'weekdays 09:45-12:00 [ZONE] at least 6'")
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
		s := datasets.DefaultSynthetic().Generate(start, step, int(time.Duration(f.syntheticDays)*24*time.Hour/step))
		return backtest.Trace{Name: "synthetic", Start: s.Start, Step: s.Step, RPS: s.Values}, nil
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

// plannerConfig builds the planner configuration for a trace.
func (f *capacityFlags) plannerConfig(tr backtest.Trace) (planner.Config, error) {
	c := planner.DefaultConfig()
	c.TargetUtilisation = f.targetUtil
	switch {
	case f.gpuRPS > 0 && f.peakInstances > 0:
		return c, usageErrorf("give --gpu-rps or --peak-instances, not both")
	case f.gpuRPS > 0:
		c.Fleet.RPSPerInstance = f.gpuRPS
	case f.peakInstances > 0:
		// Before --service-time: with both, the peak sets the throughput
		// (as --gpu-rps would) and the service time the Erlang-C servers.
		if !(f.targetUtil > 0 && f.targetUtil <= 1) {
			return c, usageErrorf("--target-util %v: must be in (0, 1]", f.targetUtil)
		}
		if tr.Peak() <= 0 {
			return c, fmt.Errorf("--peak-instances: the demand has no positive peak to size from")
		}
		c.Fleet.RPSPerInstance = tr.Peak() / (float64(f.peakInstances) * f.targetUtil)
	case f.serviceTime > 0:
		// Throughput from the service time: Slots / ServiceTime.
	default:
		return c, usageErrorf("--gpu-rps (or --peak-instances, or --service-time) is required")
	}
	c.Sizing = f.sizing
	c.Fleet.ServiceTime = f.serviceTime
	c.Fleet.Slots = f.slots
	c.Fleet.BootDelay = f.boot
	c.Fleet.MinInstances = f.minInstances
	c.Fleet.MaxInstances = f.maxInstances
	c.Prices.OnDemandPerHour = f.price
	c.Prices.ReservedPerHour = f.reservedPrice
	c.Prices.ReservedInstances = f.reserved
	c.SLO = planner.SLO{Latency: f.slo, Quantile: f.sloQuantile}
	c.ForecastQuantile = f.sloQuantile
	if f.schedule != "" {
		text, err := os.ReadFile(f.schedule)
		if err != nil {
			return c, fmt.Errorf("--schedule: %w", err)
		}
		ws, err := planner.ParseWindows(string(text), time.UTC)
		if err != nil {
			return c, fmt.Errorf("%s: %w", f.schedule, err)
		}
		c.Windows = ws
	}
	if err := c.Validate(); err != nil {
		return c, usageErrorf("%v", err)
	}
	return c, nil
}

// runBacktest implements 'forecaster backtest'.
func runBacktest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backtest", "[--input FILE] [--value-column C] [--counts] [--step 1m] --gpu-rps R --boot 5m --price 2.5 --slo 10s\n"+
		"       [--policies static,reactive,scheduled,predictive,hybrid] [--format table|json] [--out DIR]",
		"Replay recorded demand (or synthetic demand, without --input) through scaling policies and\n"+
			"compare GPU-hours, cost, SLO attainment (share of requests that waited at most --slo for\n"+
			"capacity), P99 wait, dropped requests, under-provisioned minutes and scaling actions.\n"+
			"The forecasting policies refit walk-forward: only on demand before each decision.\n"+
			"--out DIR writes capacity-<policy>.csv (timestamp,demand_rps,ready,desired) and plots.", stderr)
	var cf capacityFlags
	cf.register(fs)
	policies := fs.StringSlice("policies", backtest.Policies(), "policies to compare")
	format := fs.String("format", "table", "output format: table or json")
	out := fs.String("out", "", "directory for capacity-<policy>.csv files and plots")
	plotFormat := fs.String("plot-format", "png", "plot format: png or svg")
	refit := fs.Duration("refit", 3*time.Hour, "how often the forecasting policies refit the model and redo the plan")
	timeout := fs.Duration("timeout", time.Minute, "requests waiting longer are dropped")
	spotShare := fs.Float64("spot-share", 0, "share of instances above the reserved baseline run on spot")
	spotRate := fs.Float64("spot-interruptions", 0.05, "interruptions per spot instance-hour")
	spotPrice := fs.Float64("spot-price", 1.0, "spot price per instance-hour")
	seed := fs.Uint64("seed", 1, "seed for spot interruptions")
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
	}
	switch {
	case *refit < 0:
		return usageErrorf("--refit %v: must not be negative", *refit)
	case *timeout < 0:
		return usageErrorf("--timeout %v: must not be negative", *timeout)
	case !(*spotShare >= 0 && *spotShare <= 1):
		return usageErrorf("--spot-share %v: must be in [0, 1]", *spotShare)
	case !(*spotRate >= 0) || math.IsInf(*spotRate, 0):
		return usageErrorf("--spot-interruptions %v: must be finite and >= 0", *spotRate)
	case !(*spotPrice >= 0) || math.IsInf(*spotPrice, 0):
		return usageErrorf("--spot-price %v: must be a finite price >= 0", *spotPrice)
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
	cfg := backtest.DefaultConfig()
	if cfg.Planner, err = cf.plannerConfig(tr); err != nil {
		return err
	}
	cfg.Forecast.RefitEvery = *refit
	cfg.QueueTimeout = *timeout
	cfg.Spot = backtest.Spot{Share: *spotShare, InterruptionsPerHour: *spotRate, Seed: *seed}
	cfg.Planner.Prices.SpotPerHour = *spotPrice
	rep, err := backtest.Run(ctx, tr, cfg, *policies...)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeBacktestFiles(*out, *plotFormat, rep, cfg.Planner.Fleet.RPS()); err != nil {
			return err
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(backtestJSON{Trace: rep.Trace, Static: rep.Static, GPURPS: cfg.Planner.Fleet.RPS(),
			Tick: rep.Tick.String(), ForecastStep: rep.ForecastStep.String(), Refit: rep.RefitEvery.String(), Policies: rep.Policies})
	}
	return writeBacktestTable(stdout, rep, cfg.Planner)
}

// backtestJSON is the --format json document: "policies" as the issue
// specifies, plus the settings that produced it.
type backtestJSON struct {
	Trace        string            `json:"trace"`
	Static       int               `json:"static_instances"`
	GPURPS       float64           `json:"gpu_rps"`
	Tick         string            `json:"tick"`
	ForecastStep string            `json:"forecast_step"`
	Refit        string            `json:"refit_every"`
	Policies     []backtest.Result `json:"policies"`
}

func writeBacktestTable(w io.Writer, rep backtest.Report, c planner.Config) error {
	fmt.Fprintf(w, "%s: static peak needs %d instances of %.4g req/s; boot %s; SLO: wait <= %s; tick %s, forecast step %s, refit every %s\n\n",
		rep.Trace, rep.Static, c.Fleet.RPS(), c.Fleet.BootDelay, c.SLO.Latency, rep.Tick, rep.ForecastStep, rep.RefitEvery)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tGPU-hours\tcost\tvs static\tper 1k req\tSLO attainment\tP99 wait (s)\tdropped\tunder-prov. min\tactions\t")
	for _, r := range rep.Policies {
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.1f%%\t%.4g\t%.3f%%\t%.1f\t%.0f\t%.0f\t%d\t\n", r.Name, r.GPUHours, r.Cost,
			100*r.CostVsStatic, r.CostPer1kRequests, 100*r.SLOAttainment, r.P99LatencyS, r.Dropped, r.UnderprovisionedMinutes, r.Actions)
	}
	return tw.Flush()
}

func writeBacktestFiles(dir, plotFormat string, rep backtest.Report, rps float64) error {
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
	return write("tradeoff."+plotFormat, func(w io.Writer) error {
		return backtest.WritePlot(w, p, plotFormat, backtest.PlotHeight*1.3, backtest.PlotHeight)
	})
}
