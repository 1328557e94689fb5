package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/prewarm/prewarm/datasets/m4"
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
		{"auto", "", "prewarm's default: best two of a validated pool (seasonal shapes, Holt-Winters), conformal intervals",
			func() model.Forecaster { return auto.New(auto.Config{}) }},
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

// runEval implements 'forecaster eval m4'.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names, about []string
	for _, m := range evalMethods() {
		names = append(names, m.name)
		about = append(about, fmt.Sprintf("  %-8s %s", m.name, m.about))
	}
	fs := newFlagSet("eval", "m4 [--data DIR] [--format table|json] [--series N] [--methods LIST]",
		"Forecast every M4 Hourly series (horizon 48) with each method and print sMAPE, MASE,\n"+
			"OWA (relative to the official Naive2), MSIS and coverage of the 95% interval, and the\n"+
			"wall-clock seconds, beside the competition's official figures.\n\n"+
			"Methods:\n"+strings.Join(about, "\n"), stderr)
	dataDir := fs.String("data", filepath.Join("..", "shared", "datasets", "m4-hourly"), "folder holding Hourly-train.csv, Hourly-test.csv and m4-hourly-point-results.csv")
	format := fs.String("format", "table", "output format: table or json")
	limit := fs.Int("series", 0, "evaluate only the first N series (0 = all 414)")
	// hw fits every Holt-Winters form to every series and takes minutes;
	// it runs when asked for.
	defaults := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "hw" })
	methodList := fs.StringSlice("methods", defaults, "comma-separated methods to run (hw, slow, only when named)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "m4" {
		return usageErrorf("want exactly one data set, m4; got %q", fs.Args())
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
	official, err := m4.LoadResults(filepath.Join(*dataDir, m4.HourlyResults))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
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
			OWA:  accuracy.OWA(sc.SMAPE, sc.MASE, accuracy.Naive2HourlySMAPE, accuracy.Naive2HourlyMASE),
			MSIS: sc.MSIS, Coverage: sc.Coverage, Seconds: res.Elapsed.Seconds(), fallbacks: res.Fallbacks}
		for i := range official {
			if m.official != "" && official[i].ID == m.official {
				row.official = &official[i]
			}
		}
		rows = append(rows, row)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Methods []evalRow `json:"methods"`
		}{rows})
	}
	return writeEvalTable(stdout, rows, official, len(series))
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

func writeEvalTable(w io.Writer, rows []evalRow, official []m4.Result, nSeries int) error {
	fmt.Fprintf(w, "M4 Hourly, %d series, horizon %d, 95%% intervals; OWA relative to the official Naive2 (%.3f / %.3f)\n\n",
		nSeries, m4.HourlyHorizon, accuracy.Naive2HourlySMAPE, accuracy.Naive2HourlyMASE)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tsMAPE\tMASE\tOWA\tMSIS\tcoverage\tseconds\tfallbacks\tofficial sMAPE\tofficial MASE\tofficial OWA\t")
	for _, r := range rows {
		off := "-\t-\t-"
		if r.official != nil {
			off = fmt.Sprintf("%.3f\t%.3f\t%.3f", r.official.SMAPE, r.official.MASE, r.official.OWA)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.3f\t%.2f\t%d\t%s\t\n",
			r.Name, r.SMAPE, r.MASE, r.OWA, r.MSIS, r.Coverage, r.Seconds, r.fallbacks, off)
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
