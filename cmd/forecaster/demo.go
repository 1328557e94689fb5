package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/prewarm/prewarm/demo"
)

// runDemo implements 'forecaster demo'.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", "[FLAGS]",
		"Runs the whole loop with embedded defaults: synthetic demand into the embedded store, the scaling\n"+
			"service driving a simulated GPU fleet on a simulated clock, then a backtest of every policy.\n"+
			"Needs no InfluxDB, cloud account or GPU.", stderr)
	storePath := fs.String("store", "", "embedded store file to keep (default: a temporary file, removed afterwards)")
	days := fs.Int("history-days", 28, "days of synthetic history written before the live replay")
	hours := fs.Int("live-hours", 24, "hours replayed minute by minute through the service")
	seed := fs.Uint64("seed", 1, "seed of the synthetic demand")
	boot := fs.Duration("boot", 0, "instance boot + model-load time (default 10m)")
	verbose := fs.Bool("verbose", false, "log the service's decisions to stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if *days < 15 || *hours < 1 {
		return usageErrorf("--history-days must be at least 15 and --live-hours at least 1")
	}
	opts := demo.Options{StorePath: *storePath, HistoryDays: *days, LiveHours: *hours, Seed: *seed, BootDelay: *boot}
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	return demo.Run(ctx, opts, stdout)
}
