package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/internal/progress"
	"github.com/spf13/pflag"
)

// parseBacktestFlags parses and checks the backtest's flags into fs
// (backtest.Flags), and loads --config's pool (refusing the flags it also
// sets) before any demand is read.
func parseBacktestFlags(fs *pflag.FlagSet, args []string) (*backtest.Flags, error) {
	bf := &backtest.Flags{}
	bf.Input.LoadConfig = loadConfig
	bf.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageErrorf("unexpected arguments %q", fs.Args())
	}
	return bf, bf.Check()
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
			"(timestamp,demand_rps,ready,desired,billed,spot,stopped) and plots (a run over two weeks\n"+
			"as its busiest and a typical week).\n\n"+
			"With --config FILE --pool NAME the backtest runs exactly what 'serve' runs for that pool:\n"+
			"its sizing, SLO, planner and reactive settings, schedule windows in its time_zone, its\n"+
			"forecast settings, its min/max/max_step/min_interval through the same safety layer, its\n"+
			"interval as the decision tick. The flags those keys set are refused with --config; the\n"+
			"demand (--input, --counts, --step, ...) and the simulation's flags stay.", stderr)
	bf, err := parseBacktestFlags(fs, args)
	if err != nil {
		return err
	}
	tr, err := bf.Input.Load(stderr)
	if err != nil {
		return err
	}
	if bf.WriteDemand != "" {
		if err := backtest.WriteReplayedDemand(bf.WriteDemand, tr); err != nil {
			return fmt.Errorf("--write-demand: %w", err)
		}
	}
	cfg, err := bf.Config(tr)
	if err != nil {
		return err
	}
	var clearProgress func()
	cfg.Progress, clearProgress = progress.Stages(stderr)
	rep, front, err := backtest.Compare(ctx, tr, cfg, bf.Frontier, bf.Sim.SLOTargets, bf.Sim.Policies...)
	clearProgress()
	if err != nil {
		return err
	}
	if bf.Out != "" {
		files, err := backtest.WriteFiles(bf.Out, bf.PlotFormat, rep, front.Trials, bf.Sim.SLOTargets, cfg.Planner)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d files to %s: %s\n", len(files), bf.Out, strings.Join(files, ", "))
	}
	if bf.Format == "json" {
		return printJSON(stdout, backtest.NewDocument(rep, front, cfg, bf.Input.ConfigFile, bf.Input.PoolName))
	}
	return backtest.WriteTables(stdout, rep, front, cfg.Planner, bf.Frontier)
}
