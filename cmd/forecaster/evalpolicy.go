package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/report"
)

// runEvalPolicy implements 'forecaster eval policy'.
func runEvalPolicy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval policy", "[--input FILE|DIR ...] [--counts] --peak-instances N [--boot 10m] [--slo 10s] [--loto] [--format table|json]",
		"Score the default hybrid policy, causally, against the plans a team could make without a\n"+
			"forecast, on every trace: each is split at the midnight before its middle; on the first\n"+
			"half the cheapest reactive setting of the frontier's grid and the cheapest flat fleet that\n"+
			"reach --slo-target are chosen, both are replayed on the second half, and the baseline is the\n"+
			"cheaper of those that reach it there (else the one with the higher attainment). The hybrid\n"+
			"runs at its defaults, walk-forward, and is scored on the same second half, beside the\n"+
			"oracle and the reactive setting and flat size chosen on the second half itself (hindsight).\n"+
			"Without --input it replays the shared traces of --datasets; with it, every FILE and every\n"+
			"CSV of every DIR, each at its own step (--step resamples them all). --synthetic-seeds adds\n"+
			"the generator's bursts and spikes with each seed. --loto chooses the tuner's defaults on the\n"+
			"first halves of every trace but the one it scores (leave one trace out). --reserve-advice\n"+
			"replays each trace on the reserved base a plan report advises on its first half.", stderr)
	var cf backtest.InputFlags
	cf.RegisterCSV(fs)
	cf.RegisterFleet(fs)
	var inputs []string
	fs.StringArrayVar(&inputs, "input", nil, fmt.Sprintf("a demand CSV file, or a folder of them; repeat for more (at most %d files)", backtest.MaxSuiteFiles))
	datasetsDir := fs.String("datasets", datasets.Dir(os.Getenv), "the shared datasets folder, whose traces/ the suite replays without --input")
	seeds := fs.UintSlice("synthetic-seeds", []uint{1, 2, 3}, fmt.Sprintf("seeds of the generator's bursts and spikes to add, at most %d (0: none)", backtest.MaxSuiteSeeds))
	days := fs.Int("synthetic-days", backtest.DefaultSuiteDays, fmt.Sprintf("days of each generated trace, %d to %d", backtest.MinSuiteDays, backtest.MaxSyntheticDays))
	tuning := fs.Bool("tune", true, "let the hybrid choose walk-forward among its candidates, as serve's pools do (tune.enabled: true); false: the hybrid alone")
	loto := fs.Bool("loto", false, "choose the tuner's defaults without each trace before scoring it (leave one trace out); replays every first half once per setting")
	format := fs.String("format", "table", "output format: table or json")
	reserveAdvice := fs.Bool("reserve-advice", false, "reserve, per trace, the base a plan report advises on its first half (as forecaster report would, looking as far ahead as the second half), for every policy's replay; instead of --reserved")
	var spot backtest.Options
	spot.RegisterSpot(fs, poolspec.DefaultPool().Prices.SpotPerHour)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 0:
		return usageErrorf("unexpected arguments %q after policy", fs.Args())
	case *format != "table" && *format != "json":
		return usageErrorf("--format %q: want table or json", *format)
	case len(*seeds) > backtest.MaxSuiteSeeds:
		return usageErrorf("--synthetic-seeds: %d seeds, at most %d", len(*seeds), backtest.MaxSuiteSeeds)
	case *reserveAdvice && fs.Changed("reserved"):
		return usageErrorf("--reserve-advice sets the reserved base per trace: give it or --reserved, not both")
	case *loto && !*tuning:
		return usageErrorf("--loto chooses the tuner's defaults: it needs --tune")
	}
	if err := poolspec.CheckInt("--synthetic-days", *days, backtest.MinSuiteDays, backtest.MaxSyntheticDays); err != nil {
		return err
	}
	if err := cf.CheckRanges(); err != nil {
		return err
	}
	if err := spot.CheckSpotFlags(); err != nil {
		return err
	}
	suite := backtest.SuiteInputs{Inputs: inputs, Datasets: *datasetsDir, Seeds: *seeds, Days: *days}
	traces, err := suite.Traces(func(path string) (backtest.Trace, error) { return cf.LoadFile(path, stderr) }, stderr)
	if err != nil {
		return err
	}
	cases, err := backtest.SuiteCases(traces, cf.PlannerConfig, *tuning)
	if err != nil {
		return err
	}
	if spotFlagsGiven(fs) {
		for i := range cases {
			cases[i].Config.Spot = spot.Spot()
			cases[i].Config.Planner.Prices.SpotPerHour = spot.SpotPrice
		}
	}
	start := time.Now()
	say := func(s string) { fmt.Fprintf(stderr, "%6s  %s\n", time.Since(start).Round(time.Second), s) }
	if *reserveAdvice {
		bases, err := report.ReserveAtAdvice(ctx, cases, spot.SpotRate)
		if err != nil {
			return err
		}
		for i, k := range bases {
			say(fmt.Sprintf("%s: reserving %d, the first half's advice", cases[i].Trace.Name, k))
		}
	}
	if *loto {
		rep, err := backtest.LeaveOneTraceOut(ctx, cases, backtest.DefaultsGrid(), say)
		if err != nil {
			return err
		}
		if *format == "json" {
			return printJSON(stdout, rep)
		}
		return backtest.WriteLOTOTable(stdout, rep)
	}
	rep, err := backtest.RunSuite(ctx, cases, func(done int, e backtest.SuiteEntry) {
		say(fmt.Sprintf("%d/%d %s: hybrid %.3f× the baseline", done, len(cases), e.Trace, e.VsBaseline))
	})
	if err != nil {
		return err
	}
	if *format == "json" {
		return printJSON(stdout, rep)
	}
	return backtest.WriteSuiteTable(stdout, rep)
}

// spotFlagsGiven reports whether the command line gave a spot flag: the
// suite runs all on demand otherwise.
func spotFlagsGiven(fs *pflag.FlagSet) bool {
	for _, name := range []string{"spot-share", "spot-interruptions", "spot-stockouts", "spot-stockout-for", "spot-zones", "spot-price", "seed"} {
		if f := fs.Lookup(name); f != nil && f.Changed {
			return true
		}
	}
	return false
}
