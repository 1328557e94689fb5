package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/internal/progress"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/open"
)

// runImport implements 'forecaster import': a CSV export into the store,
// as the series serve reads by default, so a new pool starts from history.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", "--input FILE.csv --pool NAME [--store embedded:PATH | --influx-url URL] [FLAGS]",
		"Loads a CSV export of a pool's demand (requests/s, or requests per row with --counts) into the embedded\n"+
			"store or InfluxDB as the series 'forecaster serve' reads by default, "+store.ServiceRequestRate+"{pool=NAME},\n"+
			"so that the pool's first refit finds history and its first plan is a forecast, not reactive-only.\n"+
			"Steps that the collector's own series already cover are left out (never counted twice); importing\n"+
			"the same file again overwrites what it wrote. Stop 'forecaster serve' first: the embedded file has\n"+
			"one writer at a time.", stderr)
	var (
		input, pool, measurement string
		storeFlags               open.Flags
		csv                      datasets.CSVOptions
		shift                    bool
		pointEvery               time.Duration
	)
	fs.StringVar(&input, "input", "", "CSV file with a header: a time column and a value column (required)")
	fs.StringVar(&pool, "pool", "", "the pool the demand belongs to: the pool tag of the series (required)")
	storeFlags.Register(fs, "embedded:prewarm.db", "store: embedded:PATH, or use the --influx-* flags")
	fs.StringVar(&measurement, "measurement", store.ServiceRequestRate, "measurement to write (a pool's demand.measurement, if it sets one)")
	fs.StringVar(&csv.TimeColumn, "time-column", "", "column holding the timestamps (default: the first)")
	var csvf datasets.CSVFlags
	csvf.Register(fs)
	fs.BoolVar(&csv.Counts, "counts", false, "values are requests per row, not requests/s: divided by the step")
	fs.DurationVar(&csv.Step, "step", 0, "bucket the rows into steps of this length (default: the file's own step)")
	fs.BoolVar(&shift, "shift-to-now", false, "move the series to end within a day of now: by whole weeks when that does (weekdays and times of day kept), else by whole days (times of day kept, weekdays moved); the output says which")
	fs.DurationVar(&pointEvery, "point-every", 0, "write each step's value every DURATION within the step (e.g. 30m for hourly data and a 30m forecast.step; default: once per step)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected argument %q (the file goes after --input)", fs.Arg(0))
	case input == "":
		return usageErrorf("--input is required")
	case pool == "":
		return usageErrorf("--pool is required")
	case pointEvery < 0:
		return usageErrorf("--point-every %v must not be negative", pointEvery)
	}

	opts := csvf.Options()
	opts.TimeColumn, opts.Counts, opts.Step = csv.TimeColumn, csv.Counts, csv.Step
	series, err := datasets.LoadCSVTelling(stderr, "forecaster import", input, opts)
	if err != nil {
		return err
	}
	unit := "requests/s"
	if csv.Counts {
		series = series.PerSecond()
		unit = fmt.Sprintf("requests per %v, as requests/s", series.Step)
	}
	now := time.Now()
	var moved datasets.Shift
	switch {
	case shift:
		series, moved = datasets.ShiftToNow(series, now)
	case series.Index:
		return usageErrorf("%s: the timestamps are an index (0, 1, 2, ...), not dates: add --shift-to-now", input)
	}
	db, err := openStore(ctx, storeFlags)
	if err != nil {
		return err
	}
	tags := map[string]string{store.TagPool: pool}
	tell, clearProgress := progress.Stages(stderr)
	res, err := datasets.ImportInChunks(ctx, db, series, datasets.ImportOptions{Measurement: measurement, Tags: tags,
		PointEvery: pointEvery, Until: now}, tell)
	clearProgress()
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the store: %w", cerr)
	}
	if err != nil {
		return err
	}
	if shift {
		fmt.Fprintln(stdout, moved)
	}
	fmt.Fprintf(stdout, "imported %d points (%d steps of %v, %s) into %s{pool=%s} in %s", res.Points, res.Steps, series.Step, unit,
		measurement, pool, storeFlags.Name())
	if res.Steps > 0 {
		end := res.Last.Add(series.Step)
		fmt.Fprintf(stdout, " from %s to %s (%s)", res.First.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), endsBefore(now, end))
	}
	fmt.Fprintf(stdout, "; skipped %d steps without data and %d steps the store's other %s{pool=%s} series already cover\n",
		res.Missing, res.Overlapping, measurement, pool)
	if res.Steps > 0 {
		fmt.Fprintln(stderr, "a running 'forecaster serve' uses this history at its next refit; kill -HUP it to refit every pool at its next decision")
	}
	if history := control.DefaultSettings().History; res.Steps > 0 && now.Sub(res.Last) > history {
		fmt.Fprintf(stderr, "note: the data ends %s ago; serve reads history back from now (forecast.history, default %d days): add --shift-to-now to use it\n",
			now.Sub(res.Last).Round(time.Hour), history/(24*time.Hour))
	}
	return nil
}

// endsBefore says how long before now the history ends ("history ends 3h
// before now").
func endsBefore(now, end time.Time) string {
	gap := now.Sub(end)
	if gap < time.Minute {
		return "history ends at now"
	}
	return "history ends " + poolspec.FormatSpan(gap.Truncate(time.Minute)) + " before now"
}
