package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/model/fit"
)

// fitFlags are the command line of 'forecaster fit'.
type fitFlags struct {
	input, format string
	horizon       int
	level         float64 // percent
	method        fit.Method
	periods       []int // nil: detect
	csv           datasets.CSVFlags
}

// runFit implements 'forecaster fit' (package model/fit).
func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseFitFlags(args, stderr)
	if err != nil {
		return err
	}
	series, err := datasets.LoadCSVTelling(stderr, "forecaster fit", f.input, f.csv.Options())
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	step := series.Step
	if series.Index {
		step = 0 // no clock: no day or week to offer
	}
	fc, err := f.method.Forecast(fit.Series{Values: series.Values, Step: step, Periods: f.periods}, f.horizon, f.level/100)
	if err != nil {
		return fmt.Errorf("%s: %w", f.input, err)
	}
	res := fit.NewOutput(f.input, f.level, fc, func(j int) string { return series.Stamp(series.Len() + j) })
	if f.format == "json" {
		return printJSON(stdout, res)
	}
	if fc.Fallback != "" {
		fmt.Fprintf(stderr, "forecaster fit: %s fell back: %s\n", f.method.Name, fc.Fallback)
	}
	return res.WriteCSV(stdout)
}

// parseFitFlags parses and checks the command line of 'forecaster fit'.
func parseFitFlags(args []string, stderr io.Writer) (*fitFlags, error) {
	var about []string
	for _, m := range fit.Methods() {
		about = append(about, fmt.Sprintf("  %-8s %s", m.Name, m.About))
	}
	fs := newFlagSet("fit", "--input FILE.csv --horizon N [--period auto|none|24,168] [--level 95] [--format csv|json] [--method auto]",
		"Forecast the series in a two-column CSV file (header 'timestamp,value'; timestamps RFC 3339,\n"+
			"'2006-01-02 15:04:05', Unix seconds, or a plain integer index) and print one row per step:\n"+
			"timestamp,forecast,lower,upper, the bounds being the --level prediction interval.\n\n"+
			"Methods:\n"+strings.Join(about, "\n"), stderr)
	f := &fitFlags{}
	fs.StringVar(&f.input, "input", "", "CSV file to forecast (required)")
	fs.IntVar(&f.horizon, "horizon", 0, "number of steps to forecast (required)")
	period := fs.String("period", "auto", "seasonal periods in steps: auto (detect), none, or a list such as 24,168")
	fs.Float64Var(&f.level, "level", 95, "prediction interval coverage in percent, in (0, 100)")
	fs.StringVar(&f.format, "format", "csv", "output format: csv or json")
	method := fs.String("method", "auto", "forecasting method (see above)")
	f.csv.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, usageErrorf("unexpected arguments %q", fs.Args())
	case f.input == "":
		return nil, usageErrorf("--input is required")
	case f.horizon < 1 || f.horizon > fit.MaxHorizon:
		return nil, usageErrorf("--horizon %d: must be between 1 and %d steps", f.horizon, fit.MaxHorizon)
	case !(f.level > 0 && f.level < 100):
		return nil, usageErrorf("--level %v: must be a percentage in (0, 100), e.g. 95", f.level)
	case f.format != "csv" && f.format != "json":
		return nil, usageErrorf("--format %q: want csv or json", f.format)
	}
	var ok bool
	if f.method, ok = fit.Lookup(*method); !ok {
		return nil, usageErrorf("--method %q: want one of %s", *method, strings.Join(fit.Names(), ", "))
	}
	var err error
	if f.periods, err = fit.ParsePeriods(*period); err != nil {
		return nil, usageErrorf("--period %q: %v", *period, err)
	}
	return f, nil
}
