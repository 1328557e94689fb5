package main

import (
	"context"
	"io"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/report"
)

// runPlan implements 'forecaster plan': the plan section of 'forecaster
// report' as a table, from the same controller serve runs.
func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("plan", "[--input FILE] [--counts] --gpu-rps R [FLAGS] | --config FILE --pool NAME [--store SPEC]\n"+
		"       [--horizon 24h] [--history 28d] [--warm-up 14d] [--format table|json]",
		"Forecast the demand after the end of the series and print the pre-warm capacity schedule hour by\n"+
			"hour (time, desired instances, reason), the expected GPU-hours and cost, all on demand and with the\n"+
			"reserved baseline 'forecaster report' advises plus on-demand/spot burst, and the cost per 1,000\n"+
			"requests. The schedule is the one 'forecaster serve' would make for the pool: --warm-up of history\n"+
			"is replayed through it first (a refit every forecast.refit_every, a decision a minute), so its gate\n"+
			"has scored its own forecasts against seasonal naive; --warm-up 0 is a cold start, serve's first\n"+
			"refit. 'forecaster report' gives the same plan with charts, the backtest and the risks.", stderr)
	rf := newReportFlags()
	rf.Register(fs, 24*time.Hour)
	var history time.Duration
	fs.Var(poolspec.NewSpanFlag(&history, control.DefaultSettings().History, report.MinHistory, report.MaxHistory), "history",
		"most recent history each refit reads, as the pool's forecast.history ("+poolspec.HelpSpan(report.MinHistory)+" to "+poolspec.HelpSpan(report.MaxHistory)+")")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	case *format != "table" && *format != "json":
		return usageErrorf("--format %q: want table or json", *format)
	}
	in, err := rf.Input(ctx, fs, 0, stderr)
	if err != nil {
		return err
	}
	if rf.ConfigFile == "" || fs.Changed("history") {
		in.Backtest.Forecast.History = history
	}
	if err := in.CheckHistory("--history"); err != nil {
		return err
	}
	in.PlanOnly = true
	rep, err := report.Build(ctx, in)
	if err != nil {
		return err
	}
	out := report.NewPlanSummary(rep)
	if *format == "json" {
		return printJSON(stdout, out)
	}
	return report.WritePlanTable(stdout, out)
}
