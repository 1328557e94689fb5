package datasets

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prewarm/prewarm/store"
)

// CSVOptions says how to read a time-series CSV file. The zero value reads a
// two-column "timestamp,value" file of rates at the file's own step.
type CSVOptions struct {
	// ValueColumn names the column holding the values. Default: the only
	// column besides the time column; with more columns it must be set (the
	// error lists them).
	ValueColumn string
	// TimeColumn names the timestamp column. Default: the first column.
	TimeColumn string
	// Counts says the values are counts per row (requests in the row's
	// interval), not rates; it makes "sum" the default Aggregate. Values are
	// returned as read; Series.PerSecond turns counts into rates.
	Counts bool
	// Step is the series' step. 0 infers it as the median spacing between
	// distinct timestamps and snaps each row to the nearest step. A step set
	// here buckets rows into [Start+k·Step, Start+(k+1)·Step) with Start the
	// window of the first timestamp on the store's grid (store.WindowStart:
	// multiples of Step from the Unix epoch); a Step finer than the
	// file's median spacing is an error. For a file indexed 0, 1, 2, ...
	// Step is the duration of one index unit (default 1 min).
	Step time.Duration
	// Aggregate combines rows that share a step (duplicates, or several rows
	// per step when Step is coarser than the file): "mean", "sum" or "max".
	// Default: "sum" when Counts is set, else "mean".
	Aggregate string
	// SkipBad skips bad rows (unparsable time, missing, NaN, infinite,
	// negative or non-numeric value, wrong field count, an absurd value)
	// and lists them in the Report instead of failing (--skip-bad).
	SkipBad bool
	// AllowOutliers keeps values beyond MaxValue or MaxMedianRatio × the
	// median, listing them in Report.Outliers, instead of refusing their
	// rows (--allow-outliers).
	AllowOutliers bool
	// MaxRows and MaxBytes bound what one file may hold (0: MaxCSVRows and
	// MaxCSVBytes); a larger file is refused as soon as the bound is
	// passed, before it is all read, with the bound named.
	MaxRows  int
	MaxBytes int64
}

// DefaultIndexUnit is the duration of one index unit in a file indexed
// 0, 1, 2, ... when CSVOptions.Step is not set: index k is read as the Unix
// epoch + k·DefaultIndexUnit, so a caller turns a step's time back into its
// index by dividing by this unit.
const DefaultIndexUnit = time.Minute

// MaxCSVRows and MaxCSVBytes are the most data rows and bytes a demand
// file may hold by default: a year per minute (525,600 rows, about 16 MB)
// nearly four times over. Each accepted row is kept until the series is
// built (about 40 bytes), so the bounds keep a load within a few hundred
// MB; a longer or finer export is resampled to a coarser step first.
const (
	MaxCSVRows  = 2_000_000
	MaxCSVBytes = 128 << 20
)

// ErrTooLarge is returned for a file past MaxRows or MaxBytes.
var ErrTooLarge = errors.New("file too large")

// maxSparseSteps bounds the series length built from few rows: a series may
// have more than this many steps only if at most 99% of them are gaps. It
// stops one wild timestamp from allocating gigabytes.
const maxSparseSteps = 1_000_000

// sample is one accepted row.
type sample struct {
	t    time.Time
	v    float64
	line int
}

// LoadCSV reads the time-series CSV file at path; see [ReadCSV]. Use
// [LoadCSVReport] to also get the Report.
func LoadCSV(path string, opts CSVOptions) (Series, error) {
	s, _, err := LoadCSVReport(path, opts)
	return s, err
}

// LoadCSVReport reads the time-series CSV file at path and returns the
// series with the report of what loading found; see [ReadCSV].
func LoadCSVReport(path string, opts CSVOptions) (Series, Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return Series{}, Report{File: path}, fmt.Errorf("load time series: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > opts.maxBytes() {
		return Series{}, Report{File: path}, tooLarge(path, fmt.Sprintf("is %d MiB, above the limit of %d MiB", fi.Size()>>20, opts.maxBytes()>>20))
	}
	return ReadCSV(f, path, opts)
}

func (o CSVOptions) maxRows() int    { return cmp.Or(o.MaxRows, MaxCSVRows) }
func (o CSVOptions) maxBytes() int64 { return cmp.Or(o.MaxBytes, MaxCSVBytes) }

// tooLarge is the error for a file past a bound: what was passed, and
// what to do.
func tooLarge(name, what string) error {
	return fmt.Errorf("%s: %w: it %s; resample it to a coarser step (one row a minute or fewer) and load that", name, ErrTooLarge, what)
}

// limitedReader fails a read past limit bytes with ErrTooLarge, so that a
// pipe is bounded as a file is. The failure sticks: a reader above it that
// drops one error (a peek) gets it again.
type limitedReader struct {
	r           io.Reader
	read, limit int64
	name        string
	err         error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.read >= l.limit {
		// One byte more tells a file of exactly limit bytes from a longer one.
		var one [1]byte
		if k, err := l.r.Read(one[:]); k == 0 {
			l.err = cmp.Or(err, io.EOF)
			return 0, l.err
		}
		l.err = tooLarge(l.name, fmt.Sprintf("holds more than the limit of %d MiB", l.limit>>20))
		return 0, l.err
	}
	k, err := l.r.Read(p[:min(int64(len(p)), l.limit-l.read)])
	l.read += int64(k)
	return k, err
}

// ReadCSV reads a time-series CSV with a header line from r; name (usually
// the path) is used in errors and the Report. Rows may come in any order and
// repeat timestamps: they are sorted, merged with the aggregate, placed on a
// regular step with NaN for steps without data, and every such repair is
// listed in the Report with line numbers. A bad row fails the read with a
// *BadRowsError naming "file:line: column: problem" unless opts.SkipBad is
// set. The Report is returned even when err != nil.
func ReadCSV(r io.Reader, name string, opts CSVOptions) (Series, Report, error) {
	rep := Report{File: name}
	agg := opts.Aggregate
	if agg == "" {
		agg = AggregateMean
		if opts.Counts {
			agg = AggregateSum
		}
	}
	rep.Aggregate = agg
	if err := validAggregate(agg); err != nil {
		return Series{}, rep, fmt.Errorf("%s: %w", name, err)
	}
	if opts.Step < 0 {
		return Series{}, rep, fmt.Errorf("%s: --step %v must not be negative", name, opts.Step)
	}

	r = &limitedReader{r: r, limit: opts.maxBytes(), name: name}
	rr, err := newRowReader(r, name, "timestamp,value", &rep)
	if err != nil {
		return Series{}, rep, err
	}
	rr.maxRows = opts.maxRows()
	ti, vi, err := pickColumns(rr.header, opts)
	if err != nil {
		return Series{}, rep, fmt.Errorf("%s:1: %w", name, err)
	}
	rep.TimeColumn, rep.ValueColumn = rr.header[ti], rr.header[vi]
	if looksLikeData(rep.TimeColumn, rep.ValueColumn) {
		return Series{}, rep, fmt.Errorf("%s:1: the first line looks like data (%q, %q): the file needs a header line naming its columns, e.g. \"timestamp,value\"", name, rep.TimeColumn, rep.ValueColumn)
	}

	tp := timeParser{unit: DefaultIndexUnit}
	if opts.Step > 0 {
		tp.unit = opts.Step
	}
	var samples []sample
	var rejectedTimes []time.Time // of rows with a good time and a bad value
	var order orderCheck
	for {
		rec, line, err := rr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Series{}, rep, err
		}
		t, err := tp.parse(rec[ti])
		if err != nil {
			rr.bad(line, rep.TimeColumn, err.Error())
			continue
		}
		v, problem := parseValue(rec[vi])
		if problem != "" {
			rr.bad(line, rep.ValueColumn, problem)
			rejectedTimes = append(rejectedTimes, t)
			continue
		}
		order.observe(t, line, &rep)
		samples = append(samples, sample{t: t, v: v, line: line})
	}
	samples, refused := screenOutliers(samples, rep.ValueColumn, opts.AllowOutliers, rr)
	rejectedTimes = append(rejectedTimes, refused...)
	rep.Accepted = len(samples)
	if err := badRowsError(&rep, opts.SkipBad); err != nil {
		return Series{}, rep, err
	}
	if len(samples) == 0 {
		return Series{}, rep, fmt.Errorf("%s: no usable data rows (%d read, %d bad)", name, rep.Rows, len(rep.Bad))
	}
	s, err := buildSeries(samples, rejectedTimes, opts.Step, tp.kind == kindIndex, agg, &rep)
	if err != nil {
		return Series{}, rep, fmt.Errorf("%s: %w", name, err)
	}
	s.Name = filepath.Base(name) + ":" + rep.ValueColumn
	s.Index = tp.kind == kindIndex
	return s, rep, nil
}

// pickColumns returns the indexes of the time and value columns. Names match
// exactly first, then ignoring case.
func pickColumns(header []string, opts CSVOptions) (ti, vi int, err error) {
	ti = 0
	if opts.TimeColumn != "" {
		if ti = findColumn(header, opts.TimeColumn); ti < 0 {
			return 0, 0, fmt.Errorf("no time column %q; the columns are %s", opts.TimeColumn, quoteAll(header))
		}
	}
	if opts.ValueColumn != "" {
		if vi = findColumn(header, opts.ValueColumn); vi < 0 {
			return 0, 0, fmt.Errorf("no value column %q; the columns are %s", opts.ValueColumn, quoteAll(header))
		}
		if vi == ti {
			return 0, 0, fmt.Errorf("value column %q is also the time column", opts.ValueColumn)
		}
		return ti, vi, nil
	}
	switch len(header) {
	case 1:
		return 0, 0, fmt.Errorf("the header has one column, %s: want a time column and a value column separated by a comma, e.g. \"timestamp,value\"", quoteAll(header))
	case 2:
	default:
		return 0, 0, fmt.Errorf("choose the value column with --value-column: the columns are %s", quoteAll(header))
	}
	return ti, 1 - ti, nil
}

func findColumn(header []string, name string) int {
	if i := slices.Index(header, name); i >= 0 {
		return i
	}
	return slices.IndexFunc(header, func(h string) bool { return strings.EqualFold(h, name) })
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// looksLikeData reports whether a header's time and value cells are a
// timestamp and a number, i.e. the file has no header line.
func looksLikeData(timeCell, valueCell string) bool {
	var tp timeParser
	if _, err := tp.parse(timeCell); err != nil {
		return false
	}
	_, err := strconv.ParseFloat(strings.TrimSpace(valueCell), 64)
	return err == nil
}

// parseValue parses a value cell; a non-empty problem means the row is bad.
func parseValue(cell string) (float64, string) {
	cell = strings.TrimSpace(cell)
	if cell == "" {
		return 0, "missing value"
	}
	v, err := strconv.ParseFloat(cell, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Sprintf("value %q is not a number", cell)
	case math.IsNaN(v):
		return 0, "value is NaN"
	case math.IsInf(v, 0):
		return 0, fmt.Sprintf("value %q is infinite", cell)
	case v < 0:
		return 0, fmt.Sprintf("negative value %v", v)
	}
	return v, ""
}

// buildSeries sorts the samples, reports duplicates, places them on a regular
// step and reports the gaps. Samples must be non-empty.
func buildSeries(samples []sample, rejectedTimes []time.Time, step time.Duration, index bool, agg string, rep *Report) (Series, error) {
	slices.SortStableFunc(samples, func(a, b sample) int { return a.t.Compare(b.t) })
	reportDuplicates(samples, rep)
	g, err := chooseGrid(samples, rejectedTimes, step, index)
	if err != nil {
		return Series{}, err
	}
	rep.Step, rep.StepInferred = g.step, g.snap
	s := placeOnGrid(samples, g, agg, rep)
	reportGaps(s, rep)
	return s, nil
}

// reportDuplicates lists each sample whose time equals the previous one's.
func reportDuplicates(sorted []sample, rep *Report) {
	firstLine := sorted[0].line
	for i := 1; i < len(sorted); i++ {
		if sorted[i].t.Equal(sorted[i-1].t) {
			rep.Duplicates = append(rep.Duplicates, Duplicate{Line: sorted[i].line, FirstLine: firstLine, Time: sorted[i].t})
		} else {
			firstLine = sorted[i].line
		}
	}
}

// grid is the regular time axis a series is built on.
type grid struct {
	start time.Time
	step  time.Duration
	// snap places a time on the nearest step (inferred step: the rows are
	// samples on a grid); otherwise on the step whose interval holds it
	// (chosen step: the rows are aggregated into intervals).
	snap bool
}

// index returns the step t belongs to (t ≥ start).
func (g grid) index(t time.Time) int {
	d := t.Sub(g.start)
	k := d / g.step
	if g.snap && d%g.step >= g.step-d%g.step {
		k++ // nearer the next step; written so as not to overflow d+step/2
	}
	return int(k)
}

// chooseGrid picks the grid for sorted samples: the chosen step, or the
// median spacing of the timestamps (those of rows rejected for their value
// included, so a skipped row leaves a gap rather than changing the step).
func chooseGrid(sorted []sample, rejectedTimes []time.Time, step time.Duration, index bool) (grid, error) {
	first, last := sorted[0].t, sorted[len(sorted)-1].t
	if err := checkSpan(first, last); err != nil {
		return grid{}, err
	}
	g := grid{start: first, step: step}
	switch {
	case step > 0 && index:
		// Index times are already multiples of the step.
	case step > 0:
		if spacing := medianSpacing(sorted, rejectedTimes); spacing > step {
			return grid{}, fmt.Errorf("--step %v is finer than the file's spacing %v (median): loading only aggregates rows, it never invents data; use --step %v or more", step, spacing, spacing)
		}
		g.start = store.WindowStart(first, step)
	default:
		g.step = medianSpacing(sorted, rejectedTimes)
		if g.step <= 0 {
			return grid{}, fmt.Errorf("cannot infer the step: all %d rows share the timestamp %s; set --step", len(sorted), first.Format(time.RFC3339))
		}
		g.snap = true
	}
	steps := last.Sub(g.start) / g.step
	if steps >= maxSparseSteps && int(steps) >= 100*len(sorted) {
		return grid{}, fmt.Errorf("%d rows span %v, %d steps of %v: more than 99%% of the series would be gaps; check the timestamps or set a coarser --step", len(sorted), last.Sub(g.start), steps, g.step)
	}
	return g, nil
}

// placeOnGrid aggregates the sorted samples into one value per step, NaN
// where no sample fell, and lists off-grid rows merged into a taken step.
func placeOnGrid(sorted []sample, g grid, agg string, rep *Report) Series {
	n := g.index(sorted[len(sorted)-1].t) + 1
	aggs := make([]aggregator, n)
	prev, stepLine := -1, 0 // the previous sample's step; the first line on that step
	for i, sm := range sorted {
		k := g.index(sm.t)
		if k != prev {
			stepLine = sm.line
		} else if g.snap && !sm.t.Equal(sorted[i-1].t) {
			rep.Merged = append(rep.Merged, Duplicate{Line: sm.line, FirstLine: stepLine, Time: sm.t})
		}
		prev = k
		aggs[k].add(sm.v)
	}
	s := Series{Start: g.start, Step: g.step, Values: make([]float64, n)}
	for k := range aggs {
		s.Values[k] = aggs[k].value(agg)
	}
	return s
}

// maxSpan bounds the time a series may cover: half the largest
// time.Duration (about 146 years), so Start + i·Step never overflows.
const maxSpan = time.Duration(math.MaxInt64 / 2)

// checkSpan rejects timestamps too far apart to index with time.Duration.
func checkSpan(first, last time.Time) error {
	if last.Sub(first) >= maxSpan {
		return fmt.Errorf("timestamps span %s to %s, more than %d years; check the time column",
			first.Format(time.RFC3339), last.Format(time.RFC3339), int(maxSpan.Hours()/24/365))
	}
	return nil
}

// medianSpacing returns the median positive difference between consecutive
// timestamps of the (sorted) samples and the extra times, or 0 when all are
// equal.
func medianSpacing(samples []sample, extra []time.Time) time.Duration {
	times := make([]time.Time, 0, len(samples)+len(extra))
	for _, sm := range samples {
		times = append(times, sm.t)
	}
	if len(extra) > 0 {
		times = append(times, extra...)
		slices.SortFunc(times, time.Time.Compare)
	}
	diffs := make([]time.Duration, 0, len(times))
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d > 0 {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) == 0 {
		return 0
	}
	slices.SortFunc(diffs, cmp.Compare)
	return diffs[(len(diffs)-1)/2]
}

// reportGaps records the runs of NaN in s.
func reportGaps(s Series, rep *Report) {
	for i := 0; i < len(s.Values); {
		if !math.IsNaN(s.Values[i]) {
			i++
			continue
		}
		j := i
		for j < len(s.Values) && math.IsNaN(s.Values[j]) {
			j++
		}
		rep.Missing += j - i
		rep.GapRuns++
		if len(rep.Gaps) < MaxListedGaps {
			rep.Gaps = append(rep.Gaps, Gap{Index: i, At: s.Time(i), Missing: j - i})
		}
		i = j
	}
}
