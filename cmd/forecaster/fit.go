package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/holtwinters"
	"github.com/prewarm/prewarm/model/seasonal"
)

// fitMethods are the forecasting methods 'forecaster fit' offers, each
// built for the series' seasonal periods (shortest first; none for a
// non-seasonal series; nil when --period is auto and the method detects
// them itself) and the series' step (0 for an indexed file).
var fitMethods = []struct {
	name  string
	about string
	build func(periods []int, step time.Duration) model.Forecaster
}{
	{"auto", "prewarm's default: validated robust combination with calibrated intervals", func(p []int, step time.Duration) model.Forecaster {
		// With nil periods auto offers the clock's day and week and adds
		// what it detects itself.
		return auto.New(auto.Config{Periods: p, Step: step})
	}},
	{"hw", "Holt-Winters (single or double seasonal), form chosen by AICc", func(p []int, _ time.Duration) model.Forecaster {
		return holtwinters.Forecaster{Periods: p}
	}},
	{"snaive", "seasonal naive at the shortest period", func(p []int, _ time.Duration) model.Forecaster {
		if len(p) == 0 {
			return seasonal.Naive{}
		}
		return seasonal.SeasonalNaive{Period: p[0]}
	}},
	{"profile", "median of the same step of the longest cycle over the last 4 cycles", func(p []int, _ time.Duration) model.Forecaster {
		if len(p) == 0 {
			return seasonal.Naive{}
		}
		return seasonal.Profile{Period: p[len(p)-1], Cycles: 4, Robust: true}
	}},
	{"naive2", "naive on seasonally adjusted data (the M4 benchmark)", func(p []int, _ time.Duration) model.Forecaster {
		if len(p) == 0 {
			return seasonal.Naive{}
		}
		return seasonal.Naive2{Period: p[0]}
	}},
	{"naive", "the last value", func([]int, time.Duration) model.Forecaster { return seasonal.Naive{} }},
}

// maxFitHorizon bounds --horizon (about two years of per-minute steps), so
// a typo cannot make the forecasters allocate gigabytes.
const maxFitHorizon = 1_000_000

// fitPoint is one forecast step of the JSON output.
type fitPoint struct {
	Timestamp string  `json:"timestamp"`
	Forecast  float64 `json:"forecast"`
	Lower     float64 `json:"lower"`
	Upper     float64 `json:"upper"`
}

// fitResult is the JSON output of 'forecaster fit'.
type fitResult struct {
	Input    string     `json:"input"`
	Method   string     `json:"method"`
	Fallback string     `json:"fallback,omitempty"`
	Periods  []int      `json:"periods"`
	Level    float64    `json:"level"`
	Points   []fitPoint `json:"points"`
}

// runFit implements 'forecaster fit'.
func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, m := range fitMethods {
		names = append(names, fmt.Sprintf("  %-8s %s", m.name, m.about))
	}
	fs := newFlagSet("fit", "--input FILE.csv --horizon N [--period auto|none|24,168] [--level 95] [--format csv|json] [--method auto]",
		"Forecast the series in a two-column CSV file (header 'timestamp,value'; timestamps RFC 3339,\n"+
			"'2006-01-02 15:04:05', Unix seconds, or a plain integer index) and print one row per step:\n"+
			"timestamp,forecast,lower,upper, the bounds being the --level prediction interval.\n\n"+
			"Methods:\n"+strings.Join(names, "\n"), stderr)
	input := fs.String("input", "", "CSV file to forecast (required)")
	horizon := fs.Int("horizon", 0, "number of steps to forecast (required)")
	period := fs.String("period", "auto", "seasonal periods in steps: auto (detect), none, or a list such as 24,168")
	level := fs.Float64("level", 95, "prediction interval coverage in percent, in (0, 100)")
	format := fs.String("format", "csv", "output format: csv or json")
	method := fs.String("method", "auto", "forecasting method (see above)")
	var csvf csvFlags
	csvf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	case *input == "":
		return usageErrorf("--input is required")
	case *horizon < 1 || *horizon > maxFitHorizon:
		return usageErrorf("--horizon %d: must be between 1 and %d steps", *horizon, maxFitHorizon)
	case !(*level > 0 && *level < 100):
		return usageErrorf("--level %v: must be a percentage in (0, 100), e.g. 95", *level)
	case *format != "csv" && *format != "json":
		return usageErrorf("--format %q: want csv or json", *format)
	}
	build := -1
	for i, m := range fitMethods {
		if m.name == *method {
			build = i
		}
	}
	if build < 0 {
		var known []string
		for _, m := range fitMethods {
			known = append(known, m.name)
		}
		return usageErrorf("--method %q: want one of %s", *method, strings.Join(known, ", "))
	}
	givenPeriods, detect, err := parsePeriods(*period)
	if err != nil {
		return err
	}

	series, err := loadDemandCSV("forecaster fit", *input, csvf.options(), stderr)
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
	periods, given := givenPeriods, givenPeriods
	if detect {
		periods = seasonal.Detect(series.Values, seasonal.DetectOptions{Snap: seasonal.ClockPeriods(step)})
		if periods == nil {
			periods = []int{}
		}
		// auto offers the clock's day and week itself and adds what it
		// detects; the others are given the detected periods.
		given = periods
		if fitMethods[build].name == "auto" {
			given = nil
		}
	}
	fc, err := fitMethods[build].build(given, step).Forecast(series.Values, *horizon, *level/100)
	if err != nil {
		return fmt.Errorf("%s: %w", *input, err)
	}
	res := fitResult{Input: *input, Method: fc.Method, Fallback: fc.Fallback, Periods: periods, Level: *level}
	for j := range fc.Mean {
		res.Points = append(res.Points, fitPoint{Timestamp: stepTimestamp(series, series.Len()+j),
			Forecast: fc.Mean[j], Lower: fc.Lower[j], Upper: fc.Upper[j]})
	}
	if *format == "json" {
		return printJSON(stdout, res)
	}
	if fc.Fallback != "" {
		fmt.Fprintf(stderr, "forecaster fit: %s fell back: %s\n", *method, fc.Fallback)
	}
	return writeFitCSV(stdout, res.Points)
}

// maxListedBadRows is how many bad rows 'forecaster fit' prints before
// summarising the rest.
const maxListedBadRows = 20

// listBadRows prints the bad rows of a *datasets.BadRowsError, one
// "file:line: column: problem" per line, and returns a short error; other
// errors are returned as they are.
func listBadRows(err error, input string, stderr io.Writer) error {
	var bad *datasets.BadRowsError
	if !errors.As(err, &bad) {
		return err
	}
	for i, r := range bad.Rows {
		if i == maxListedBadRows {
			fmt.Fprintf(stderr, "... and %d more bad rows\n", len(bad.Rows)-i)
			break
		}
		fmt.Fprintln(stderr, r.Error())
	}
	return fmt.Errorf("%s: %d bad rows; fix them and run again", input, len(bad.Rows))
}

// writeFitCSV writes the forecast with the header
// timestamp,forecast,lower,upper.
func writeFitCSV(w io.Writer, points []fitPoint) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"timestamp", "forecast", "lower", "upper"})
	for _, p := range points {
		cw.Write([]string{p.Timestamp, formatFloat(p.Forecast), formatFloat(p.Lower), formatFloat(p.Upper)})
	}
	cw.Flush()
	return cw.Error()
}

// parsePeriods reads --period: "auto" (detect), "none", or a comma list
// of periods ≥ 2 in increasing order.
func parsePeriods(s string) (periods []int, detect bool, err error) {
	switch strings.TrimSpace(s) {
	case "auto", "":
		return nil, true, nil
	case "none":
		return []int{}, false, nil
	}
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 2 {
			return nil, false, usageErrorf("--period %q: want auto, none, or periods ≥ 2 such as 24,168", s)
		}
		if len(periods) > 0 && p <= periods[len(periods)-1] {
			return nil, false, usageErrorf("--period %q: list the periods shortest first, each once", s)
		}
		periods = append(periods, p)
	}
	return periods, false, nil
}

// stepTimestamp formats the time of step i: RFC 3339 in UTC, or the plain
// index for an indexed file (loaded with the default index unit, so a file
// indexed 10, 12, 14 continues 16, 18).
func stepTimestamp(s datasets.Series, i int) string {
	if s.Index {
		return strconv.FormatInt(int64(s.Time(i).Sub(time.Unix(0, 0))/datasets.DefaultIndexUnit), 10)
	}
	return s.Time(i).UTC().Format(time.RFC3339)
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
