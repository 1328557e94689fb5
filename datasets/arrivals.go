package datasets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/prewarm/prewarm/store"
)

// ArrivalOptions says how to turn a per-request log (one row per request)
// into a series of requests per interval.
type ArrivalOptions struct {
	// TimeColumn names the arrival-time column. Default: the first column.
	TimeColumn string
	// SumColumn, when set, sums this column per interval (e.g.
	// "ContextTokens" for tokens per interval) instead of counting rows.
	SumColumn string
	// Step is the counting interval. Default: 1 minute.
	Step time.Duration
	// SkipBad skips rows with an unparsable time or (with SumColumn) a bad
	// value, listing them in the Report, instead of failing (--skip-bad).
	SkipBad bool
	// AllowOutliers keeps SumColumn values above MaxValue, listing them in
	// Report.Outliers, instead of refusing their rows (--allow-outliers).
	AllowOutliers bool
}

// DefaultArrivalStep is the counting interval when ArrivalOptions.Step is 0.
const DefaultArrivalStep = time.Minute

// LoadArrivals reads the per-request log at path and counts requests per
// interval; see [ReadArrivals]. Use [ReadArrivals] to also get the Report.
func LoadArrivals(path string, opts ArrivalOptions) (Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return Series{}, fmt.Errorf("load arrivals: %w", err)
	}
	defer f.Close()
	s, _, err := ReadArrivals(f, path, opts)
	return s, err
}

// ReadArrivals reads a per-request log with a header line from r (the Azure
// LLM trace "TIMESTAMP,ContextTokens,GeneratedTokens", Alibaba's per-event
// "timestamp_anon,value,container_ip") and returns the number of requests
// (or the sum of opts.SumColumn) in each interval [Start+k·Step,
// Start+(k+1)·Step), Start being the window of the first arrival on the
// store's grid (store.WindowStart: multiples of Step from the Unix epoch). Intervals without a request are 0, not NaN: the log covers its
// whole span. The first and last intervals are usually partial.
//
// Rows need not be sorted; rows earlier than a previous one are listed in
// Report.OutOfOrder (and counted normally). Requests sharing a timestamp are
// normal in such logs and are not reported as duplicates.
func ReadArrivals(r io.Reader, name string, opts ArrivalOptions) (Series, Report, error) {
	step := opts.Step
	if step == 0 {
		step = DefaultArrivalStep
	}
	rep := Report{File: name, Step: step, Aggregate: AggregateSum}
	if step < 0 {
		return Series{}, rep, fmt.Errorf("%s: --step %v must be positive", name, step)
	}
	rr, err := newRowReader(r, name, "TIMESTAMP,ContextTokens", &rep)
	if err != nil {
		return Series{}, rep, err
	}
	ti, si := 0, -1
	if opts.TimeColumn != "" {
		if ti, err = rr.column(opts.TimeColumn, "time column"); err != nil {
			return Series{}, rep, err
		}
	}
	rep.TimeColumn = rr.header[ti]
	if opts.SumColumn != "" {
		if si, err = rr.column(opts.SumColumn, "column to sum"); err != nil {
			return Series{}, rep, err
		}
		rep.ValueColumn = rr.header[si]
	}

	tp := timeParser{unit: step}
	var samples []sample
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
		v := 1.0
		if si >= 0 {
			var problem string
			if v, problem = parseValue(rec[si]); problem != "" {
				rr.bad(line, rep.ValueColumn, problem)
				continue
			}
			if problem = outlierProblem(v, 0); problem != "" {
				if !opts.AllowOutliers {
					rr.bad(line, rep.ValueColumn, problem+outlierHint)
					continue
				}
				rep.Outliers = append(rep.Outliers, Outlier{Line: line, Value: v, Problem: problem})
			}
		}
		order.observe(t, line, &rep)
		samples = append(samples, sample{t: t, v: v, line: line})
	}
	rep.Accepted = len(samples)
	if err := badRowsError(&rep, opts.SkipBad); err != nil {
		return Series{}, rep, err
	}
	if len(samples) == 0 {
		return Series{}, rep, fmt.Errorf("%s: no usable rows (%d read, %d bad)", name, rep.Rows, len(rep.Bad))
	}
	s, err := countPerStep(samples, step, tp.kind == kindIndex)
	if err != nil {
		return Series{}, rep, fmt.Errorf("%s: %w", name, err)
	}
	s.Name = filepath.Base(name) + ":requests"
	if si >= 0 {
		s.Name = filepath.Base(name) + ":" + rep.ValueColumn
	}
	return s, rep, nil
}

// countPerStep sums the (unsorted, non-empty) samples' values into steps
// of the given length from the first arrival's window on the store's grid
// (from the first arrival itself for an index), 0 where no request arrived.
func countPerStep(samples []sample, step time.Duration, index bool) (Series, error) {
	first, last := samples[0].t, samples[0].t
	for _, sm := range samples {
		if sm.t.Before(first) {
			first = sm.t
		}
		if sm.t.After(last) {
			last = sm.t
		}
	}
	if err := checkSpan(first, last); err != nil {
		return Series{}, err
	}
	start := store.WindowStart(first, step)
	if index {
		start = first
	}
	n := last.Sub(start) / step
	if n >= maxSparseSteps && int(n) >= 100*len(samples) {
		return Series{}, fmt.Errorf("%d rows span %v, %d steps of %v; check the timestamps or set a coarser --step", len(samples), last.Sub(start), n, step)
	}
	s := Series{Start: start, Step: step, Values: make([]float64, int(n)+1), Index: index}
	for _, sm := range samples {
		s.Values[int(sm.t.Sub(start)/step)] += sm.v
	}
	return s, nil
}
