package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/datasets/m4"
	"github.com/prewarm/prewarm/datasets/m4eval"
	"github.com/prewarm/prewarm/datasets/traceeval"
	"github.com/prewarm/prewarm/internal/progress"
)

// runEval implements 'forecaster eval m4' and 'forecaster eval traces'.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "m4":
			return runEvalM4(ctx, args[1:], stdout, stderr)
		case "traces":
			return runEvalTraces(ctx, args[1:], stdout, stderr)
		case "policy":
			return runEvalPolicy(ctx, args[1:], stdout, stderr)
		}
	}
	fs := newFlagSet("eval", "m4|traces|policy [FLAGS]",
		"Score the forecasting methods and the scaling policy out of sample.\n\n"+
			"  m4      the M4 Hourly series, on the official test or on a holdout cut from the training data\n"+
			"  traces  rolling origins on the recorded traces, against seasonal naive, beside R's forecast package\n"+
			"  policy  the hybrid policy's cost on each trace's second half against the cheaper of a reactive\n"+
			"          and a flat fleet chosen on its first half, at the same SLO\n\n"+
			"Run 'forecaster eval m4 --help', 'forecaster eval traces --help' or 'forecaster eval policy --help' for the flags.", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return usageErrorf("want m4, traces or policy; got %q", fs.Args())
}

// runEvalM4 implements 'forecaster eval m4' (package datasets/m4eval).
func runEvalM4(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var about []string
	for _, m := range m4eval.Methods() {
		about = append(about, fmt.Sprintf("  %-8s %s", m.Name, m.About))
	}
	fs := newFlagSet("eval m4", "[--data DIR] [--split official|holdout] [--format table|json] [--series N] [--methods LIST]",
		"Forecast every M4 Hourly series (horizon 48) with each method and print sMAPE, MASE,\n"+
			"OWA, MSIS and coverage of the 95% interval, and the wall-clock seconds.\n\n"+
			"--split official scores the competition's test values, beside its official figures, with\n"+
			"OWA relative to the official Naive2. --split holdout cuts the last 48 values off each\n"+
			"training series and scores those instead (no method or design choice has seen them), with\n"+
			"OWA relative to Naive2 on the same window.\n\n"+
			"Methods:\n"+strings.Join(about, "\n"), stderr)
	dataDir := fs.String("data", filepath.Join(datasets.Dir(os.Getenv), "m4-hourly"), "folder holding Hourly-train.csv, Hourly-test.csv and m4-hourly-point-results.csv")
	splitName := fs.String("split", string(m4.SplitOfficial), "which future to score: official (the M4 test) or holdout (the last 48 training values)")
	format := fs.String("format", "table", "output format: table or json")
	limit := fs.Int("series", 0, "evaluate only the first N series (0 = all 414)")
	methodList := fs.StringSlice("methods", m4eval.DefaultMethods(), "comma-separated methods to run (hw, slow, only when named)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErrorf("unexpected arguments %q after m4", fs.Args())
	}
	split, err := m4.ParseSplit(*splitName)
	if err != nil {
		return usageErrorf("--split: %v", err)
	}
	if *format != "table" && *format != "json" {
		return usageErrorf("--format %q: want table or json", *format)
	}
	if *limit < 0 {
		return usageErrorf("--series %d: must be 0 (all) or positive", *limit)
	}
	methods, err := m4eval.Pick(*methodList)
	if err != nil {
		return usageErrorf("--methods: %v", err)
	}
	series, err := m4.LoadHourly(*dataDir)
	if err != nil {
		return fmt.Errorf("%w (pass --data with the folder of the M4 Hourly files)", err)
	}
	series, official, err := m4.Prepare(series, *dataDir, split, *limit)
	if err != nil {
		return err
	}
	report, err := m4eval.Run(ctx, series, methods, m4eval.Options{Split: split, Official: official,
		Progress: func(method string, n int) (func(), func()) {
			bar := progress.New(stderr, n, "eval "+method)
			return bar.Add, bar.Done
		}})
	if err != nil {
		return err
	}
	if *format == "json" {
		return printJSON(stdout, report)
	}
	return report.WriteTable(stdout)
}

// runEvalTraces implements 'forecaster eval traces' (package
// datasets/traceeval).
func runEvalTraces(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval traces", "[--data DIR] [--methods LIST] [--format table|json] [--reference FILE] [--export-windows FILE]",
		"Forecast the recorded traces from rolling origins (each trace at its own step, and at per-minute\n"+
			"and 5-minute resamplings where the trace is finer) and print, per trace, the MASE ratio against\n"+
			"seasonal naive on the same windows (below 1 beats it), the coverage of the 80% and 95% intervals,\n"+
			"the MSIS of the 95% one and the milliseconds per fit; then the geometric mean of the ratios over\n"+
			"the traces, for all origins and for the first (tuning) and second (held-out) half of each trace's.\n"+
			"R forecast 8.20's figures on the same windows (stlf, mstl, ets, tbats; measured by\n"+
			"datasets/traceeval/testdata/r_reference.R) are printed beside them.\n\n"+
			"Methods: "+strings.Join(traceeval.MethodNames(), ", "), stderr)
	dataDir := fs.String("data", filepath.Join(datasets.Dir(os.Getenv), "traces"), "folder holding the recorded traces (nyc_taxi.csv, alibaba_sd_*.csv, azure_llm_2023_*.csv)")
	methodList := fs.StringSlice("methods", []string{"auto"}, "comma-separated methods to score besides seasonal naive")
	format := fs.String("format", "table", "output format: table or json")
	refPath := fs.String("reference", "", "R reference scores (default: the copy built in, from datasets/traceeval/testdata/r_reference.csv); none to leave R out")
	export := fs.String("export-windows", "", "write the exact windows to this CSV file for testdata/r_reference.R and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErrorf("unexpected arguments %q after traces", fs.Args())
	}
	if *format != "table" && *format != "json" {
		return usageErrorf("--format %q: want table or json", *format)
	}
	methods, err := traceeval.PickMethods(*methodList)
	if err != nil {
		return usageErrorf("--methods: %v", err)
	}
	traces := traceeval.DefaultTraces()
	windows, err := traceeval.Windows(*dataDir, traces)
	if err != nil {
		return fmt.Errorf("%w (pass --data with the folder of the recorded traces)", err)
	}
	if *export != "" {
		if err := traceeval.ExportWindows(*export, "--export-windows", windows); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d windows to %s\n", len(windows), *export)
		return nil
	}
	ref, err := traceeval.LoadReference(*refPath, "--reference")
	if err != nil {
		return err
	}
	bar := progress.New(stderr, len(windows), "eval traces")
	report, err := traceeval.Run(ctx, traces, windows, methods, ref, traceeval.Options{Progress: bar.Add})
	bar.Done()
	if err != nil {
		return err
	}
	if *format == "json" {
		return printJSON(stdout, report)
	}
	return report.WriteTable(stdout)
}
