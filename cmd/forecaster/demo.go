package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/demo"
	"github.com/prewarm/prewarm/demo/live"
	"github.com/prewarm/prewarm/internal/cli"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// demoFlags are the command line of 'forecaster demo'.
type demoFlags struct {
	replay   bool
	live     live.Options
	offline  demo.Options
	logLevel cli.LogLevelFlag
	verbose  bool
}

// liveOnly and replayOnly are the flags that go with one way of running
// the demo only, so that a flag given to the other is refused by name.
var (
	liveOnly   = []string{"listen", "trace", "speed", "duration", "shift", "log-level", "warm-start", "spot-share"}
	replayOnly = []string{"store", "live-hours", "verbose"}
)

// runDemo implements 'forecaster demo': the live loop with its status page
// by default, or with --replay the offline replay and backtest.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", "[FLAGS] | --replay [FLAGS]",
		"Runs the scaling service on embedded defaults: synthetic demand (or a recorded trace) in a temporary\n"+
			"embedded store, a simulated clock and a simulated GPU fleet, with the status page, the API and /metrics\n"+
			"on "+live.DefaultListen+". Needs no InfluxDB, cloud account or GPU. With --replay it runs the same loop\n"+
			"offline as fast as it can, then a backtest of every policy on the same demand, and prints the figures.", stderr)
	var f demoFlags
	fs.BoolVar(&f.replay, "replay", false, "replay offline and print the figures instead of serving the live page")
	fs.StringVar(&f.live.Listen, "listen", live.DefaultListen, "HTTP address of the status page, the API and /metrics")
	fs.StringVar(&f.live.Trace, "trace", "", "replay this CSV of demand (a time column and requests/s) instead of synthetic demand")
	fs.Float64Var(&f.live.Speed, "speed", live.DefaultSpeed, fmt.Sprintf("simulated seconds per real second, 1 to %g (1440: a simulated day a minute)", live.MaxSpeed))
	fs.DurationVar(&f.live.Duration, "duration", 0, "stop after this much real time (0: run until interrupted)")
	fs.BoolVar(&f.live.Shift, "shift", false, "the synthetic demand turns from smooth rhythms to short untimeable spikes a week into the replay, to watch the pool's tuner change policy on the page")
	fs.DurationVar(&f.live.WarmStart, "warm-start", 0, "a warm tier: stopped instances that serve this long after they start, below --boot (0: none)")
	fs.Float64Var(&f.live.SpotShare, "spot-share", 0, fmt.Sprintf("run this share of the instances above the pool's min on spot, in [0, 1], interrupted %g times an instance-hour and out of stock %d time a week (0: none)",
		backtest.DefaultSpotInterruptions, live.StockOutsPerWeek))
	f.logLevel = cli.LogLevelFlag{Level: slog.LevelWarn}
	fs.Var(&f.logLevel, "log-level", "least severe log lines written to stderr: "+strings.Join(cli.LogLevels, ", "))
	fs.IntVar(&f.offline.HistoryDays, "history-days", live.DefaultHistoryDays,
		fmt.Sprintf("days of synthetic history written before the replay, %d to %d", live.MinHistoryDays, live.MaxHistoryDays))
	fs.Uint64Var(&f.offline.Seed, "seed", 1, "seed of the synthetic demand")
	fs.DurationVar(&f.offline.BootDelay, "boot", 0, fmt.Sprintf("instance boot + model-load time, up to %gh (default %v)", planner.MaxDelay.Hours(), poolspec.FormatSpan(planner.DefaultConfig().Fleet.BootDelay)))
	fs.StringVar(&f.offline.StorePath, "store", "", "with --replay: embedded store file to keep (default: a temporary file, removed afterwards)")
	fs.IntVar(&f.offline.LiveHours, "live-hours", 24, fmt.Sprintf("with --replay: hours replayed minute by minute through the service, 1 to %d", demo.MaxLiveHours))
	fs.BoolVar(&f.verbose, "verbose", false, "with --replay: log the service's decisions to stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if err := refuseOtherMode(f.replay, fs.Changed); err != nil {
		return err
	}
	if f.replay {
		return replayDemo(ctx, f, stdout, stderr)
	}
	return liveDemo(ctx, f, stdout, stderr)
}

// refuseOtherMode names the first flag given that belongs to the other
// way of running the demo.
func refuseOtherMode(replay bool, changed func(string) bool) error {
	other, why := replayOnly, "goes with --replay"
	if replay {
		other, why = liveOnly, "does not go with --replay (it sets the live page)"
	}
	for _, name := range other {
		if changed(name) {
			return usageErrorf("--%s %s", name, why)
		}
	}
	return nil
}

// liveDemo serves the live demo (package demo/live).
func liveDemo(ctx context.Context, f demoFlags, stdout, stderr io.Writer) error {
	opts := f.live
	opts.HistoryDays, opts.Seed, opts.BootDelay = f.offline.HistoryDays, f.offline.Seed, f.offline.BootDelay
	if err := opts.Check(); err != nil {
		return usageErrorf("%v", err)
	}
	opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: f.logLevel.Level}))
	return live.Run(ctx, opts, stdout)
}

// replayDemo runs the offline replay and backtest (package demo).
func replayDemo(ctx context.Context, f demoFlags, stdout, stderr io.Writer) error {
	opts := f.offline
	if err := opts.Check(); err != nil {
		return usageErrorf("%v", err)
	}
	if f.verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	return demo.Run(ctx, opts, stdout)
}
