package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/prewarm/prewarm/internal/progress"
	"github.com/prewarm/prewarm/report"
)

// runReport implements 'forecaster report'.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "--input FILE [--counts] --gpu-rps R [FLAGS] | --config FILE --pool NAME [--store SPEC]\n"+
		"       [--horizon 7d] [--format html|md|json] [--out FILE]",
		"Writes a capacity-planning report for one pool: the demand and its forecast with 80% and 95% bands,\n"+
			"the seasons found, the model and its holdout accuracy against seasonal naive; the pre-warm plan hour\n"+
			"by hour (the controller 'serve' runs, after replaying --warm-up of history through it), and the\n"+
			"GPU-hours, cost and SLO attainment of static, reactive, hybrid and oracle over the last\n"+
			"--backtest-weeks (the backtest 'forecaster backtest' runs); the reserved baseline that minimises the\n"+
			"expected cost under the forecast, the on-demand/spot split above it and the saving; the peak the SLO\n"+
			"needs and the headroom under max; and the risks, each a rule with its threshold (docs/report.md).\n"+
			"HTML is one self-contained file that prints on A4; md is for tickets; json carries the same numbers.\n"+
			"With --config the pool's settings are used (its demand from --store, or from --input); --price,\n"+
			"--reserved-price, --reserved, --spot-price and --currency may still override its prices. Costs are\n"+
			"shown in --currency (prices.currency), and marked as placeholders while the prices are the defaults.", stderr)
	rf := newReportFlags()
	rf.Register(fs, 7*24*time.Hour)
	rf.RegisterBacktest(fs)
	rf.RegisterCurrency(fs)
	format := fs.String("format", report.FormatHTML, "output format: html, md or json")
	out := fs.String("out", "", "write the report to this file (default: standard output)")
	weeks := fs.Int("backtest-weeks", 4, fmt.Sprintf("weeks at the end of the history the backtest scores (1 to %d)", report.MaxBacktestWeeks))
	title := fs.String("title", "", "the report's heading (default: the pool's name, or the input file's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	case !slices.Contains(report.Formats, *format):
		return usageErrorf("--format %q: want one of %s", *format, strings.Join(report.Formats, ", "))
	case *weeks < 1 || *weeks > report.MaxBacktestWeeks:
		return usageErrorf("--backtest-weeks %d: must be between 1 and %d", *weeks, report.MaxBacktestWeeks)
	}
	in, err := rf.Input(ctx, fs, *weeks, stderr)
	if err != nil {
		return err
	}
	if *title != "" {
		in.Title = *title
	}
	in.BacktestWeeks = *weeks
	in.BacktestCommand = rf.BacktestCommand(fs, in.Trace, *weeks)
	var clearProgress func()
	in.Backtest.Progress, clearProgress = progress.Stages(stderr)
	rep, err := report.Build(ctx, in)
	clearProgress()
	if err != nil {
		return err
	}
	return report.WriteFile(stdout, *out, *format, rep, in.Title, in.Horizon)
}

// newReportFlags returns the flags 'report' and 'plan' share, wired to
// this binary's configuration loader and stores.
func newReportFlags() *report.Flags {
	rf := &report.Flags{OpenStore: openStore}
	rf.Demand.LoadConfig = loadConfig
	return rf
}
