package main

import (
	"context"
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

	"github.com/prewarm/prewarm/datasets/m4"
	"github.com/prewarm/prewarm/datasets/traceeval"
	"github.com/prewarm/prewarm/internal/progress"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/accuracy"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/holtwinters"
	"github.com/prewarm/prewarm/model/seasonal"
)

// evalMethod is one forecasting method 'forecaster eval' can score.
type evalMethod struct {
	name     string
	official string // its id in the official results table, if it has one
	about    string
	new      func() model.Forecaster
}

// evalMethods lists the methods by name, the default one first.
func evalMethods() []evalMethod {
	return []evalMethod{
		{"auto", "", "prewarm's default: a validated pool (seasonal shapes, Holt-Winters, STL/MSTL + ETS) at the hourly clock's periods and the detected ones, conformal intervals",
			func() model.Forecaster { return auto.New(auto.Config{Step: time.Hour}) }},
		{"snaive", "sNaive", "seasonal naive, period 24", func() model.Forecaster {
			return seasonal.SeasonalNaive{Period: m4.HourlyPeriod}
		}},
		{"naive2", "Naive2", "naive on seasonally adjusted data (M4 benchmark)", func() model.Forecaster {
			return seasonal.Naive2{Period: m4.HourlyPeriod}
		}},
		{"naive", "Naive", "last value", func() model.Forecaster { return seasonal.Naive{} }},
		{"profile", "", "median daily shape of the last 7 days at the latest day's level", func() model.Forecaster {
			return seasonal.Profile{Period: m4.HourlyPeriod, Cycles: 7, Robust: true, Relative: true}
		}},
		{"hw", "", "Holt-Winters, periods 24 and 168, form chosen by AICc", func() model.Forecaster {
			return holtwinters.Forecaster{Periods: []int{m4.HourlyPeriod, 168}}
		}},
	}
}

// evalRow is one method's line of the report; its JSON form is the
// documented output of 'forecaster eval m4 --format json'.
type evalRow struct {
	Name     string  `json:"name"`
	SMAPE    float64 `json:"smape"`
	MASE     float64 `json:"mase"`
	OWA      float64 `json:"owa"`
	MSIS     float64 `json:"msis"`
	Coverage float64 `json:"coverage"`
	Seconds  float64 `json:"seconds"`

	official  *m4.Result
	fallbacks int
}

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

// runEvalM4 implements 'forecaster eval m4'.
func runEvalM4(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names, about []string
	for _, m := range evalMethods() {
		names = append(names, m.name)
		about = append(about, fmt.Sprintf("  %-8s %s", m.name, m.about))
	}
	fs := newFlagSet("eval m4", "[--data DIR] [--split official|holdout] [--format table|json] [--series N] [--methods LIST]",
		"Forecast every M4 Hourly series (horizon 48) with each method and print sMAPE, MASE,\n"+
			"OWA, MSIS and coverage of the 95% interval, and the wall-clock seconds.\n\n"+
			"--split official scores the competition's test values, beside its official figures, with\n"+
			"OWA relative to the official Naive2. --split holdout cuts the last 48 values off each\n"+
			"training series and scores those instead (no method or design choice has seen them), with\n"+
			"OWA relative to Naive2 on the same window.\n\n"+
			"Methods:\n"+strings.Join(about, "\n"), stderr)
	dataDir := fs.String("data", filepath.Join("..", "shared", "datasets", "m4-hourly"), "folder holding Hourly-train.csv, Hourly-test.csv and m4-hourly-point-results.csv")
	splitName := fs.String("split", string(m4.SplitOfficial), "which future to score: official (the M4 test) or holdout (the last 48 training values)")
	format := fs.String("format", "table", "output format: table or json")
	limit := fs.Int("series", 0, "evaluate only the first N series (0 = all 414)")
	// hw fits every Holt-Winters form to every series and takes minutes;
	// it runs when asked for.
	defaults := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "hw" })
	methodList := fs.StringSlice("methods", defaults, "comma-separated methods to run (hw, slow, only when named)")
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
	methods, err := pickMethods(*methodList)
	if err != nil {
		return err
	}

	series, err := m4.LoadHourly(*dataDir)
	if err != nil {
		return fmt.Errorf("%w (pass --data with the folder of the M4 Hourly files)", err)
	}
	if *limit > 0 && *limit < len(series) {
		series = series[:*limit]
	}
	if series, err = split.Apply(series, m4.HourlyHorizon); err != nil {
		return err
	}
	var official []m4.Result
	if split == m4.SplitOfficial {
		official, err = m4.LoadResults(filepath.Join(*dataDir, m4.HourlyResults))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	// OWA's units: the published Naive2 on the official test, Naive2 on
	// the same windows for the holdout.
	unit := owaUnit{sMAPE: accuracy.Naive2HourlySMAPE, mase: accuracy.Naive2HourlyMASE, source: "the official Naive2"}
	if split == m4.SplitHoldout {
		res, err := m4.Evaluate(ctx, seasonal.Naive2{Period: m4.HourlyPeriod}, series, m4.EvalOptions{Horizon: m4.HourlyHorizon})
		if err != nil {
			return fmt.Errorf("naive2 on the holdout: %w", err)
		}
		unit = owaUnit{sMAPE: res.Scores.SMAPE, mase: res.Scores.MASE, source: "Naive2 on the same holdout windows"}
	}

	var rows []evalRow
	for _, m := range methods {
		bar := progress.New(stderr, len(series), "eval "+m.name)
		res, err := m4.Evaluate(ctx, m.new(), series, m4.EvalOptions{Horizon: m4.HourlyHorizon, Progress: bar.Add})
		bar.Done()
		if err != nil {
			return fmt.Errorf("method %s: %w", m.name, err)
		}
		sc := res.Scores
		row := evalRow{Name: m.name, SMAPE: sc.SMAPE, MASE: sc.MASE,
			OWA:  accuracy.OWA(sc.SMAPE, sc.MASE, unit.sMAPE, unit.mase),
			MSIS: sc.MSIS, Coverage: sc.Coverage, Seconds: res.Elapsed.Seconds(), fallbacks: res.Fallbacks}
		for i := range official {
			if m.official != "" && official[i].ID == m.official {
				row.official = &official[i]
			}
		}
		rows = append(rows, row)
	}
	if *format == "json" {
		return printJSON(stdout, struct {
			Split       m4.Split  `json:"split"`
			Naive2SMAPE float64   `json:"naive2_smape"`
			Naive2MASE  float64   `json:"naive2_mase"`
			Methods     []evalRow `json:"methods"`
		}{split, unit.sMAPE, unit.mase, rows})
	}
	return writeEvalTable(stdout, rows, official, len(series), split, unit)
}

// owaUnit holds the Naive2 scores OWA is relative to, and where they
// come from.
type owaUnit struct {
	sMAPE, mase float64
	source      string
}

func pickMethods(list []string) ([]evalMethod, error) {
	all := evalMethods()
	var out []evalMethod
	for _, name := range list {
		name = strings.TrimSpace(name)
		found := false
		for _, m := range all {
			if m.name == name {
				out = append(out, m)
				found = true
			}
		}
		if !found {
			var names []string
			for _, m := range all {
				names = append(names, m.name)
			}
			return nil, usageErrorf("--methods: unknown method %q (known: %s)", name, strings.Join(names, ", "))
		}
	}
	if len(out) == 0 {
		return nil, usageErrorf("--methods: name at least one method")
	}
	return out, nil
}

func writeEvalTable(w io.Writer, rows []evalRow, official []m4.Result, nSeries int, split m4.Split, unit owaUnit) error {
	fmt.Fprintf(w, "M4 Hourly, %s split, %d series, horizon %d, 95%% intervals; OWA relative to %s (sMAPE %.3f, MASE %.3f)\n\n",
		split, nSeries, m4.HourlyHorizon, unit.source, unit.sMAPE, unit.mase)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "method\tsMAPE\tMASE\tOWA\tMSIS\tcoverage\tseconds\tms/series\tfallbacks\t"
	if split == m4.SplitOfficial {
		header += "official sMAPE\tofficial MASE\tofficial OWA\t"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.3f\t%.2f\t%.1f\t%d\t",
			r.Name, r.SMAPE, r.MASE, r.OWA, r.MSIS, r.Coverage, r.Seconds, 1000*r.Seconds/float64(nSeries), r.fallbacks)
		if split == m4.SplitOfficial {
			off := "-\t-\t-"
			if r.official != nil {
				off = fmt.Sprintf("%.3f\t%.3f\t%.3f", r.official.SMAPE, r.official.MASE, r.official.OWA)
			}
			line += off + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(official) > 0 {
		best := official[0]
		for _, o := range official {
			if o.OWA < best.OWA {
				best = o
			}
		}
		fmt.Fprintf(w, "\nBest official entry: %s (%s) sMAPE %.3f, MASE %.3f, OWA %.3f.\n", best.ID, best.Team, best.SMAPE, best.MASE, best.OWA)
	}
	return nil
}

// traceMethods are the methods 'forecaster eval traces' can score; each
// is built per window, knowing the window's step.
func traceMethods() []traceeval.Method {
	return []traceeval.Method{
		{Name: "auto", New: func(w traceeval.Window) model.Forecaster { return auto.New(auto.Config{Step: w.Step}) }},
		{Name: "hw", New: func(w traceeval.Window) model.Forecaster { return holtwinters.Forecaster{Periods: w.Periods} }},
		{Name: "profile", New: func(w traceeval.Window) model.Forecaster {
			return seasonal.Profile{Period: w.Period, Cycles: 7, Robust: true, Relative: true}
		}},
		{Name: "naive", New: func(traceeval.Window) model.Forecaster { return seasonal.Naive{} }},
	}
}

// runEvalTraces implements 'forecaster eval traces'.
func runEvalTraces(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, m := range traceMethods() {
		names = append(names, m.Name)
	}
	fs := newFlagSet("eval traces", "[--data DIR] [--methods LIST] [--format table|json] [--reference FILE] [--export-windows FILE]",
		"Forecast the recorded traces from rolling origins (each trace at its own step, and at per-minute\n"+
			"and 5-minute resamplings where the trace is finer) and print, per trace, the MASE ratio against\n"+
			"seasonal naive on the same windows (below 1 beats it), the coverage of the 80% and 95% intervals,\n"+
			"the MSIS of the 95% one and the milliseconds per fit; then the geometric mean of the ratios over\n"+
			"the traces, for all origins and for the first (tuning) and second (held-out) half of each trace's.\n"+
			"R forecast 8.20's figures on the same windows (stlf, mstl, ets, tbats; measured by\n"+
			"datasets/traceeval/testdata/r_reference.R) are printed beside them.\n\n"+
			"Methods: "+strings.Join(names, ", "), stderr)
	dataDir := fs.String("data", filepath.Join("..", "shared", "datasets", "traces"), "folder holding the recorded traces (nyc_taxi.csv, alibaba_sd_*.csv, azure_llm_2023_*.csv)")
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
	var methods []traceeval.Method
	for _, name := range *methodList {
		i := slices.IndexFunc(traceMethods(), func(m traceeval.Method) bool { return m.Name == strings.TrimSpace(name) })
		if i < 0 {
			return usageErrorf("--methods: unknown method %q (known: %s)", name, strings.Join(names, ", "))
		}
		methods = append(methods, traceMethods()[i])
	}
	traces := traceeval.DefaultTraces()
	windows, err := traceeval.Windows(*dataDir, traces)
	if err != nil {
		return fmt.Errorf("%w (pass --data with the folder of the recorded traces)", err)
	}
	if *export != "" {
		return exportWindows(*export, windows, stderr)
	}
	var ref []traceeval.RefScore
	switch *refPath {
	case "none":
	case "":
		if ref, err = traceeval.ReadReference(strings.NewReader(traceeval.Reference), "r_reference.csv (built in)"); err != nil {
			return err
		}
	default:
		f, err := os.Open(*refPath)
		if err != nil {
			return fmt.Errorf("--reference: %w", err)
		}
		ref, err = traceeval.ReadReference(f, *refPath)
		f.Close()
		if err != nil {
			return err
		}
	}

	bar := progress.New(stderr, len(windows), "eval traces")
	scores, err := traceeval.Evaluate(ctx, windows, methods, traceeval.Options{Progress: bar.Add})
	bar.Done()
	if err != nil {
		return err
	}
	var failed map[string]int
	if len(ref) > 0 {
		var rScores []traceeval.Score
		if rScores, failed, err = traceeval.Attach(ref, windows, scores); err != nil {
			return err
		}
		scores = append(scores, rScores...)
	}
	report := newTraceReport(traces, scores, failed)
	if *format == "json" {
		return printJSON(stdout, report)
	}
	return report.write(stdout)
}

func exportWindows(path string, windows []traceeval.Window, stderr io.Writer) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--export-windows: %w", err)
	}
	if err := traceeval.WriteWindows(f, windows); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--export-windows: %w", err)
	}
	fmt.Fprintf(stderr, "wrote %d windows to %s\n", len(windows), path)
	return nil
}

// traceRow is one method's line for one trace (Series "" for the
// geometric mean over the traces); its JSON form is the output of 'eval
// traces --format json'.
type traceRow struct {
	Series    string  `json:"series,omitempty"`
	Method    string  `json:"method"`
	Windows   int     `json:"windows"`
	MASE      float64 `json:"mase"`
	Ratio     float64 `json:"mase_ratio"`
	Cov80     float64 `json:"coverage80"`
	Cov95     float64 `json:"coverage95"`
	MSIS      float64 `json:"msis"`
	Seconds   float64 `json:"seconds_per_fit"`
	Fallbacks int     `json:"fallbacks"`
}

// traceReport is the whole output of 'eval traces'.
type traceReport struct {
	Series []traceRow `json:"series"`
	// Overall, FirstHalf and SecondHalf hold each method's geometric mean
	// ratio over the traces (windows = traces) for all origins, the
	// tuning half and the held-out half.
	Overall    []traceRow     `json:"overall"`
	FirstHalf  []traceRow     `json:"first_half"`
	SecondHalf []traceRow     `json:"second_half"`
	RFailed    map[string]int `json:"r_failed_fits,omitempty"`

	traces  []string
	methods []string
}

// writeSubsets says, for each method that covers fewer traces than the
// others (R's stlf and mstl need two days of history), what the first
// method scores on the same traces, so the geometric means compare.
func (r traceReport) writeSubsets(w io.Writer) {
	covers := map[string]map[string]traceRow{}
	for _, s := range r.Series {
		if covers[s.Method] == nil {
			covers[s.Method] = map[string]traceRow{}
		}
		covers[s.Method][s.Series] = s
	}
	if len(r.methods) < 2 {
		return
	}
	ours := r.methods[1]
	for _, m := range r.methods[2:] {
		if len(covers[m]) >= len(covers[ours]) || len(covers[m]) == 0 {
			continue
		}
		logs, n := 0.0, 0
		for id := range covers[m] {
			if s, ok := covers[ours][id]; ok {
				logs += math.Log(s.Ratio)
				n++
			}
		}
		if n > 0 {
			fmt.Fprintf(w, "%s fits %d of the traces; %s on the same %d: geo-mean %.3f\n", m, len(covers[m]), ours, n, math.Exp(logs/float64(n)))
		}
	}
}

func newTraceReport(traces []traceeval.Trace, scores []traceeval.Score, failed map[string]int) traceReport {
	var ids []string
	for _, t := range traces {
		ids = append(ids, t.ID)
	}
	per := traceeval.Summarise(scores, nil)
	traceeval.SortSeries(per, ids)
	rows := func(s []traceeval.Summary) []traceRow {
		out := make([]traceRow, len(s))
		for i, x := range s {
			out[i] = traceRow{x.Series, x.Method, x.Windows, x.MASE, x.Ratio, x.Cov80, x.Cov95, x.MSIS, x.Seconds, x.Fallbacks}
		}
		return out
	}
	half := func(h int) []traceRow {
		return rows(traceeval.Overall(traceeval.Summarise(scores, func(s traceeval.Score) bool { return s.Half == h })))
	}
	r := traceReport{Series: rows(per), Overall: rows(traceeval.Overall(per)), FirstHalf: half(1), SecondHalf: half(2),
		RFailed: failed, traces: ids}
	for _, o := range r.Overall {
		r.methods = append(r.methods, o.Method)
	}
	return r
}

func (r traceReport) write(w io.Writer) error {
	fmt.Fprintf(w, "Recorded traces, rolling origins: MASE ratio against seasonal naive on the same windows (< 1 beats it)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cell := map[[2]string]traceRow{}
	for _, s := range r.Series {
		cell[[2]string{s.Series, s.Method}] = s
	}
	fmt.Fprint(tw, "trace\twindows\tsnaive MASE\t")
	for _, m := range r.methods[1:] {
		fmt.Fprintf(tw, "%s\t", m)
	}
	fmt.Fprintln(tw)
	for _, id := range r.traces {
		b := cell[[2]string{id, traceeval.Baseline}]
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t", id, b.Windows, b.MASE)
		for _, m := range r.methods[1:] {
			if c, ok := cell[[2]string{id, m}]; ok {
				fmt.Fprintf(tw, "%.3f\t", c.Ratio)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nOver the traces: geometric mean of the ratios (all origins; first, tuning half; second, held-out half),\n"+
		"the worst trace, and means of coverage, MSIS (95%%) and milliseconds per fit\n\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\ttraces\tgeo-mean\tfirst half\tsecond half\tworst\tworst trace\tcoverage 80\tcoverage 95\tMSIS\tms/fit\tfallbacks\t")
	find := func(rows []traceRow, m string) float64 {
		for _, x := range rows {
			if x.Method == m {
				return x.Ratio
			}
		}
		return math.NaN()
	}
	for _, o := range r.Overall {
		worst, worstName := "-", "-"
		if o.Method != traceeval.Baseline {
			wr := traceRow{}
			for _, s := range r.Series {
				if s.Method == o.Method && s.Ratio > wr.Ratio {
					wr = s
				}
			}
			worst, worstName = fmt.Sprintf("%.3f", wr.Ratio), wr.Series
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%s\t%s\t%.3f\t%.3f\t%.2f\t%.1f\t%d\t\n", o.Method, o.Windows, o.Ratio,
			find(r.FirstHalf, o.Method), find(r.SecondHalf, o.Method), worst, worstName,
			o.Cov80, o.Cov95, o.MSIS, 1000*o.Seconds, o.Fallbacks)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	r.writeSubsets(w)
	if len(r.RFailed) > 0 {
		fmt.Fprintf(w, "\nR fits that failed (left out of that method's figures): %v\n", r.RFailed)
	}
	return nil
}
