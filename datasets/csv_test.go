package datasets

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nan stands for a missing step in expected values.
var nan = math.NaN()

// sameValues compares float slices treating NaN as equal to NaN.
func sameValues(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool {
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	})
}

func lines[T any](items []T, line func(T) int) []int {
	out := []int{}
	for _, it := range items {
		out = append(out, line(it))
	}
	return out
}

func dupLines(ds []Duplicate) []int  { return lines(ds, func(d Duplicate) int { return d.Line }) }
func oooLines(os []OutOfOrder) []int { return lines(os, func(o OutOfOrder) int { return o.Line }) }
func badLines(es []RowError) []int   { return lines(es, func(e RowError) int { return e.Line }) }
func gapIndexes(gs []Gap) []int      { return lines(gs, func(g Gap) int { return g.Index }) }
func gapLengths(gs []Gap) []int      { return lines(gs, func(g Gap) int { return g.Missing }) }

// TestReadCSVGood loads each good file in testdata and checks the series and
// every finding of the report.
func TestReadCSVGood(t *testing.T) {
	tests := []struct {
		file       string
		opts       CSVOptions
		start      string
		step       time.Duration
		inferred   bool
		values     []float64
		index      bool
		duplicates []int // lines
		merged     []int // lines
		outOfOrder []int // lines
		gapAt      []int // series index of each gap run
		gapLen     []int
	}{
		{file: "two_column.good.csv", start: "2024-01-01T00:00:00Z", step: 5 * time.Minute, inferred: true,
			values: []float64{10, 12.5, 0, 7}},
		{file: "nab.good.csv", start: "2014-07-01T00:00:00Z", step: 30 * time.Minute, inferred: true,
			values: []float64{10844, 8127, 6210, 4656}},
		{file: "wide.good.csv", opts: CSVOptions{ValueColumn: "api_qps_sum"}, start: "2022-09-11T01:19:36Z",
			step: 57 * time.Second, inferred: true, values: []float64{0.09, 0, 0.09}},
		{file: "wide.good.csv", opts: CSVOptions{ValueColumn: "GENERATIVE_QPS_SUM"}, start: "2022-09-11T01:19:36Z",
			step: 57 * time.Second, inferred: true, values: []float64{0, 0.18, 0.09}},
		{file: "unix_float.good.csv", start: "2023-11-14T22:13:20.5Z", step: time.Minute, inferred: true,
			values: []float64{1, 2, 3}},
		// A plain index: one unit is a minute unless Step says otherwise.
		{file: "index.good.csv", start: "1970-01-01T00:00:00Z", step: time.Minute, inferred: true,
			values: []float64{5, 6, 7, 8}, index: true},
		{file: "index.good.csv", opts: CSVOptions{Step: time.Hour}, start: "1970-01-01T00:00:00Z", step: time.Hour,
			values: []float64{5, 6, 7, 8}, index: true},
		{file: "gaps.good.csv", opts: CSVOptions{Counts: true}, start: "2024-01-01T00:00:00Z", step: time.Hour, inferred: true,
			values: []float64{1, 2, nan, nan, 3, 4, nan, 5, 6}, gapAt: []int{2, 6}, gapLen: []int{2, 1}},
		// Resampling counts to 2 h sums what is there; a bucket with no row stays NaN.
		{file: "gaps.good.csv", opts: CSVOptions{Counts: true, Step: 2 * time.Hour}, start: "2024-01-01T00:00:00Z",
			step: 2 * time.Hour, values: []float64{3, nan, 7, 5, 6}, gapAt: []int{1}, gapLen: []int{1}},
		{file: "gaps.good.csv", opts: CSVOptions{Step: 3 * time.Hour, Aggregate: AggregateMax}, start: "2024-01-01T00:00:00Z",
			step: 3 * time.Hour, values: []float64{2, 4, 6}},
		{file: "duplicates.good.csv", start: "2024-01-01T00:00:00Z", step: time.Minute, inferred: true,
			values: []float64{1, 3, 4, 9}, duplicates: []int{4, 6}},
		{file: "duplicates.good.csv", opts: CSVOptions{Counts: true}, start: "2024-01-01T00:00:00Z", step: time.Minute,
			inferred: true, values: []float64{1, 6, 8, 9}, duplicates: []int{4, 6}},
		{file: "out_of_order.good.csv", start: "2024-01-01T00:00:00Z", step: time.Minute, inferred: true,
			values: []float64{1, 2, 3, 4, 5, 6}, outOfOrder: []int{4, 7}},
		// Median spacing 1 min. 00:01:20 snaps to 00:01 (merged with line 3);
		// 00:04:10 snaps to 00:04, alone on its step.
		{file: "irregular.good.csv", start: "2024-01-01T00:00:00Z", step: time.Minute, inferred: true,
			values: []float64{1, 3, 3, 5, 6, 7, 8}, merged: []int{4}},
		{file: "crlf_spaces.good.csv", start: "2024-01-01T00:00:00Z", step: time.Minute, inferred: true,
			values: []float64{1, 2, 3}},
		{file: "bom.good.csv", start: "2024-01-01T00:00:00Z", step: time.Minute, inferred: true,
			values: []float64{1, 2}},
		{file: "arrivals.good.csv", opts: CSVOptions{ValueColumn: "ContextTokens", Step: time.Minute, Counts: true},
			start: "2023-11-16T18:15:00Z", step: time.Minute, values: []float64{870, 879, nan, 10},
			outOfOrder: []int{5}, gapAt: []int{2}, gapLen: []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.opts.ValueColumn+tt.opts.Step.String(), func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			s, rep, err := LoadCSVReport(path, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Start.Equal(mustTime(t, tt.start)) || s.Step != tt.step || rep.Step != tt.step || rep.StepInferred != tt.inferred {
				t.Errorf("start %v step %v (report %v, inferred %v), want %s %v inferred %v",
					s.Start, s.Step, rep.Step, rep.StepInferred, tt.start, tt.step, tt.inferred)
			}
			if !sameValues(s.Values, tt.values) {
				t.Errorf("values %v, want %v", s.Values, tt.values)
			}
			if s.Index != tt.index {
				t.Errorf("Index %v, want %v", s.Index, tt.index)
			}
			check := func(what string, got, want []int) {
				t.Helper()
				if want == nil {
					want = []int{}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %v, want %v", what, got, want)
				}
			}
			check("duplicate lines", dupLines(rep.Duplicates), tt.duplicates)
			check("merged lines", dupLines(rep.Merged), tt.merged)
			check("out-of-order lines", oooLines(rep.OutOfOrder), tt.outOfOrder)
			check("gap indexes", gapIndexes(rep.Gaps), tt.gapAt)
			check("gap lengths", gapLengths(rep.Gaps), tt.gapLen)
			check("bad lines", badLines(rep.Bad), nil)
			if rep.Missing != s.Missing() || rep.GapRuns != len(rep.Gaps) {
				t.Errorf("report missing %d in %d runs, series has %d NaN in %d listed runs", rep.Missing, rep.GapRuns, s.Missing(), len(rep.Gaps))
			}
			if rep.Rows != rep.Accepted {
				t.Errorf("rows %d, accepted %d", rep.Rows, rep.Accepted)
			}
			if want := tt.file + ":" + rep.ValueColumn; s.Name != want {
				t.Errorf("name %q, want %q", s.Name, want)
			}
			if got := rep.Clean(); got != (s.Missing() == 0 && tt.duplicates == nil && tt.merged == nil && tt.outOfOrder == nil) {
				t.Errorf("Clean() = %v for %s", got, rep)
			}
		})
	}
}

// TestReadCSVBad is the expected-errors table: each bad file fails with an
// error naming file:line: column: problem; with SkipBad the same rows are
// listed in the report and the rest of the file is loaded.
func TestReadCSVBad(t *testing.T) {
	tests := []struct {
		file     string
		opts     CSVOptions
		err      string    // the error without SkipBad, after "testdata/"
		badLines []int     // rows listed with SkipBad
		skipped  []float64 // values loaded with SkipBad; nil: SkipBad fails too
	}{
		{file: "non_numeric.bad.csv", err: `non_numeric.bad.csv:3: value: value "abc" is not a number; fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{3}, skipped: []float64{1, nan, 3}},
		{file: "nan.bad.csv", err: `nan.bad.csv:3: value: value is NaN; fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{3}, skipped: []float64{1, nan, 3}},
		{file: "inf.bad.csv", err: `inf.bad.csv:3: value: value "+Inf" is infinite; fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{3}, skipped: []float64{1, nan, 3}},
		// A row rejected for its value leaves a gap (its time still counts
		// when inferring the step); one rejected for its time cannot.
		{file: "negative.bad.csv", err: `negative.bad.csv:4: value: negative value -3; fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{4}, skipped: []float64{1, 2, nan, 4}},
		{file: "bad_time.bad.csv", err: `bad_time.bad.csv:3: timestamp: cannot parse timestamp "yesterday": want RFC 3339, "2006-01-02 15:04:05", Unix seconds or an integer index; fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{3}, skipped: []float64{1, 3}},
		{file: "short_row.bad.csv", err: `short_row.bad.csv:3: row has 1 columns, the header has 2; fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{3}, skipped: []float64{1, 3}},
		{file: "empty_value.bad.csv", err: `empty_value.bad.csv:3: value: missing value; fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{3}, skipped: []float64{1, nan, 3}},
		{file: "mixed_time.bad.csv", err: `mixed_time.bad.csv:4: timestamp: timestamp "2023-11-14 22:15:00" is date-time but the file uses Unix seconds; fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{4}, skipped: []float64{1, 2, nan, 4}},
		// Line 4 is blank (skipped, not a row); the line numbers stay the file's.
		{file: "several.bad.csv", err: `several.bad.csv:3: value: value "x" is not a number (and 2 more bad rows); fix the file, or use --skip-bad to skip the bad rows and list them`,
			badLines: []int{3, 5, 6}, skipped: []float64{1, nan, nan, nan, nan, 6, 7, 8}},
		{file: "no_header.bad.csv", err: `no_header.bad.csv:1: the first line looks like data ("2024-01-01 00:00:00", "1"): the file needs a header line naming its columns, e.g. "timestamp,value"`},
		{file: "empty.bad.csv", err: `empty.bad.csv: empty file: want a header line such as "timestamp,value"`},
		{file: "header_only.bad.csv", err: `header_only.bad.csv: no usable data rows (0 read, 0 bad)`},
		{file: "wide_no_column.bad.csv", err: `wide_no_column.bad.csv:1: choose the value column with --value-column: the columns are "timestamp", "a", "b"`},
		{file: "wide_no_column.bad.csv", opts: CSVOptions{ValueColumn: "c"}, err: `wide_no_column.bad.csv:1: no value column "c"; the columns are "timestamp", "a", "b"`},
		{file: "wide_no_column.bad.csv", opts: CSVOptions{ValueColumn: "a", TimeColumn: "when"}, err: `wide_no_column.bad.csv:1: no time column "when"; the columns are "timestamp", "a", "b"`},
		{file: "one_timestamp.bad.csv", err: `one_timestamp.bad.csv: cannot infer the step: all 2 rows share the timestamp 2024-01-01T00:00:00Z; set --step`},
		{file: "two_column.good.csv", opts: CSVOptions{Step: time.Minute}, err: `two_column.good.csv: --step 1m0s is finer than the file's spacing 5m0s (median): loading only aggregates rows, it never invents data; use --step 5m0s or more`},
		{file: "two_column.good.csv", opts: CSVOptions{Aggregate: "median"}, err: `two_column.good.csv: unknown aggregate "median": want mean, sum or max`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			_, rep, err := LoadCSVReport(path, tt.opts)
			if err == nil || err.Error() != "testdata/"+tt.err {
				t.Fatalf("error\n  %v\nwant\n  testdata/%s", err, tt.err)
			}
			if tt.badLines != nil {
				if !errors.Is(err, ErrBadRow) {
					t.Errorf("errors.Is(%v, ErrBadRow) = false", err)
				}
				var re *RowError
				if !errors.As(err, &re) || re.Line != tt.badLines[0] {
					t.Errorf("errors.As found %+v, want the row error of line %d", re, tt.badLines[0])
				}
				if got := badLines(rep.Bad); !slices.Equal(got, tt.badLines) {
					t.Errorf("report lists bad lines %v, want %v", got, tt.badLines)
				}
			}

			opts := tt.opts
			opts.SkipBad = true
			s, rep, err := LoadCSVReport(path, opts)
			if tt.skipped == nil {
				if err == nil {
					t.Fatalf("SkipBad: loaded %v, want an error", s.Values)
				}
				return
			}
			if err != nil {
				t.Fatalf("SkipBad: %v", err)
			}
			if !sameValues(s.Values, tt.skipped) {
				t.Errorf("SkipBad: values %v, want %v", s.Values, tt.skipped)
			}
			if got := badLines(rep.Bad); !slices.Equal(got, tt.badLines) {
				t.Errorf("SkipBad: bad lines %v, want %v", got, tt.badLines)
			}
			if rep.Rows-rep.Accepted != len(rep.Bad) {
				t.Errorf("SkipBad: rows %d - accepted %d != bad %d", rep.Rows, rep.Accepted, len(rep.Bad))
			}
			if !strings.Contains(rep.String(), "bad rows skipped") {
				t.Errorf("report summary does not mention the skipped rows:\n%s", rep)
			}
		})
	}
}

// TestParseTimestamps checks each accepted timestamp format.
func TestParseTimestamps(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339; empty: an error
		kind timeKind
	}{
		{"2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z", kindClock},
		{"2024-01-02T03:04:05+02:00", "2024-01-02T01:04:05Z", kindClock},
		{"2024-01-02T03:04:05.123456789Z", "2024-01-02T03:04:05.123456789Z", kindClock},
		{"2024-01-02 03:04:05", "2024-01-02T03:04:05Z", kindClock},
		{"2023-11-16 18:15:46.6805900", "2023-11-16T18:15:46.68059Z", kindClock},
		{"2024-01-02 03:04", "2024-01-02T03:04:00Z", kindClock},
		{"2024-01-02T03:04:05", "2024-01-02T03:04:05Z", kindClock},
		{"2024-01-02", "2024-01-02T00:00:00Z", kindClock},
		{"1662858720", "2022-09-11T01:12:00Z", kindUnix},
		{"1662859290.0", "2022-09-11T01:21:30Z", kindUnix},
		{"1662859290.25", "2022-09-11T01:21:30.25Z", kindUnix},
		{"17", "1970-01-01T00:17:00Z", kindIndex}, // one index unit = 1 minute
		{"2024-13-01 00:00:00", "", kindUnknown},
		{"1e400", "", kindUnknown},
		{"NaN", "", kindUnknown},
		{"", "", kindUnknown},
		{"12:00", "", kindUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p := timeParser{unit: time.Minute}
			got, err := p.parse(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("parsed %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := mustTime(t, tt.want); !got.Equal(want) || p.kind != tt.kind {
				t.Errorf("got %v (%v), want %v (%v)", got, p.kind, want, tt.kind)
			}
		})
	}
}

func TestResample(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:10:00Z")
	in := Series{Name: "x", Start: start, Step: 10 * time.Minute, Values: []float64{1, 2, nan, 4, 5, 6, 7}}
	tests := []struct {
		step   time.Duration
		agg    string
		start  string
		values []float64
		err    string
	}{
		// Buckets start on the hour: [00:00,00:30) holds 00:10 and 00:20.
		{step: 30 * time.Minute, agg: AggregateSum, start: "2024-01-01T00:00:00Z", values: []float64{3, 9, 13}},
		{step: 30 * time.Minute, agg: AggregateMean, start: "2024-01-01T00:00:00Z", values: []float64{1.5, 4.5, 6.5}},
		{step: time.Hour, agg: AggregateMax, start: "2024-01-01T00:00:00Z", values: []float64{5, 7}},
		{step: 10 * time.Minute, agg: AggregateSum, start: "2024-01-01T00:10:00Z", values: []float64{1, 2, nan, 4, 5, 6, 7}},
		// 25 min is not a multiple of 10 min: samples go whole to the bucket
		// their start falls in. 25 min does not divide a day either, so the
		// buckets are those of the store's epoch grid, not the hour's:
		// 2024-01-01 00:00 is 28,401,120 min after the epoch, 20 past a
		// multiple of 25, so buckets start at 23:40, 00:05, 00:30, 00:55:
		// [00:55, 01:20) holds 01:00 and 01:10.
		{step: 25 * time.Minute, agg: AggregateSum, start: "2024-01-01T00:05:00Z", values: []float64{3, 9, 13}},
		{step: 5 * time.Minute, agg: AggregateSum, err: "resample x: step 5m0s is finer than the series' step 10m0s; upsampling is not supported"},
		{step: 0, agg: AggregateSum, err: "resample x: step 0s must be positive"},
		{step: time.Hour, agg: "p99", err: `unknown aggregate "p99": want mean, sum or max`},
	}
	for _, tt := range tests {
		t.Run(tt.step.String()+tt.agg, func(t *testing.T) {
			out, err := Resample(in, tt.step, tt.agg)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !out.Start.Equal(mustTime(t, tt.start)) || out.Step != tt.step || !sameValues(out.Values, tt.values) {
				t.Errorf("got %v %v %v, want %s %v %v", out.Start, out.Step, out.Values, tt.start, tt.step, tt.values)
			}
		})
	}
}

func TestSeriesHelpers(t *testing.T) {
	s := Series{Start: mustTime(t, "2024-01-01T00:00:00Z"), Step: time.Hour, Values: []float64{3600, nan, 7200}}
	if got := s.Time(2); !got.Equal(mustTime(t, "2024-01-01T02:00:00Z")) {
		t.Errorf("Time(2) = %v", got)
	}
	if got := s.End(); !got.Equal(mustTime(t, "2024-01-01T03:00:00Z")) {
		t.Errorf("End() = %v", got)
	}
	if got := s.PerSecond().Values; !sameValues(got, []float64{1, nan, 2}) {
		t.Errorf("PerSecond() = %v", got)
	}
	if s.Values[0] != 3600 {
		t.Error("PerSecond modified its receiver")
	}
}

func TestReadArrivals(t *testing.T) {
	tests := []struct {
		file     string
		opts     ArrivalOptions
		start    string
		step     time.Duration
		values   []float64
		ooo      []int
		err      string
		badLines []int
	}{
		{file: "arrivals.good.csv", start: "2023-11-16T18:15:00Z", step: time.Minute, values: []float64{3, 1, 0, 1}, ooo: []int{5}},
		{file: "arrivals.good.csv", opts: ArrivalOptions{SumColumn: "GeneratedTokens"}, start: "2023-11-16T18:15:00Z",
			step: time.Minute, values: []float64{154, 55, 0, 2}, ooo: []int{5}},
		{file: "arrivals.good.csv", opts: ArrivalOptions{Step: 2 * time.Minute}, start: "2023-11-16T18:14:00Z",
			step: 2 * time.Minute, values: []float64{3, 1, 1}, ooo: []int{5}},
		{file: "arrivals.bad.csv", err: `arrivals.bad.csv:4: row has 2 columns, the header has 3 (and 1 more bad rows); fix the file, or use --skip-bad to skip the bad rows and list them`, badLines: []int{4, 5}},
		{file: "arrivals.bad.csv", opts: ArrivalOptions{SumColumn: "ContextTokens"}, err: `arrivals.bad.csv:3: ContextTokens: value "many" is not a number (and 2 more bad rows); fix the file, or use --skip-bad to skip the bad rows and list them`, badLines: []int{3, 4, 5}},
		{file: "arrivals.bad.csv", opts: ArrivalOptions{SumColumn: "ContextTokens", SkipBad: true}, start: "2023-11-16T18:15:00Z",
			step: time.Minute, values: []float64{374}, badLines: []int{3, 4, 5}},
		{file: "arrivals.bad.csv", opts: ArrivalOptions{SumColumn: "Tokens"}, err: `arrivals.bad.csv:1: no column to sum "Tokens"; the columns are "TIMESTAMP", "ContextTokens", "GeneratedTokens"`},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.opts.SumColumn, func(t *testing.T) {
			s, rep, err := readArrivalsFile(filepath.Join("testdata", tt.file), tt.opts)
			if tt.err != "" {
				if err == nil || err.Error() != "testdata/"+tt.err {
					t.Fatalf("error\n  %v\nwant\n  testdata/%s", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if !s.Start.Equal(mustTime(t, tt.start)) || s.Step != tt.step || !sameValues(s.Values, tt.values) {
				t.Errorf("got %v %v %v, want %s %v %v", s.Start, s.Step, s.Values, tt.start, tt.step, tt.values)
			}
			if got := badLines(rep.Bad); !slices.Equal(got, append([]int{}, tt.badLines...)) {
				t.Errorf("bad lines %v, want %v", got, tt.badLines)
			}
			if got := oooLines(rep.OutOfOrder); tt.err == "" && !slices.Equal(got, append([]int{}, tt.ooo...)) {
				t.Errorf("out-of-order lines %v, want %v", got, tt.ooo)
			}
		})
	}
}

// TestReportListsThreeExamples: each list in a report's summary names its
// first three items and marks the rest.
func TestReportListsThreeExamples(t *testing.T) {
	line := func(n int) string { return fmt.Sprintf(" %d", n) }
	tests := []struct {
		items []int
		want  string
	}{
		{nil, ""},
		{[]int{1, 2, 3}, " 1 2 3"},
		{[]int{1, 2, 3, 4, 5}, " 1 2 3, ..."},
	}
	for _, tt := range tests {
		var b strings.Builder
		writeFirst(&b, tt.items, ", ...", line)
		if b.String() != tt.want {
			t.Errorf("%v: %q, want %q", tt.items, b.String(), tt.want)
		}
	}
	r := Report{File: "f.csv", Duplicates: []Duplicate{{Line: 3, FirstLine: 2}, {Line: 5, FirstLine: 4}, {Line: 7, FirstLine: 6}, {Line: 9, FirstLine: 8}}}
	if got, want := r.String(), "lines 3 (first 2) 5 (first 4) 7 (first 6), ..."; !strings.Contains(got, want) {
		t.Errorf("report %q does not list %q", got, want)
	}
}

// A file past the row or byte bound is refused with ErrTooLarge, naming
// the bound, as soon as the bound is passed; one at the bound loads.
func TestCSVBounds(t *testing.T) {
	rows := func(n int, bad bool) string {
		var b strings.Builder
		b.WriteString("timestamp,value\n")
		for i := range n {
			v := fmt.Sprint(i % 7)
			if bad {
				v = "x"
			}
			fmt.Fprintf(&b, "%s,%s\n", time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC).Format(time.RFC3339), v)
		}
		return b.String()
	}
	ten := rows(10, false)
	tests := []struct {
		name    string
		data    string
		opts    CSVOptions
		wantErr string
	}{
		{"at the row bound", ten, CSVOptions{MaxRows: 10}, ""},
		{"one row past it", rows(11, false), CSVOptions{MaxRows: 10}, "more than the limit of 10 data rows (line 12)"},
		{"bad rows count too", rows(11, true), CSVOptions{MaxRows: 10, SkipBad: true}, "more than the limit of 10 data rows"},
		{"at the byte bound", ten, CSVOptions{MaxBytes: int64(len(ten))}, ""},
		{"one byte past it", ten, CSVOptions{MaxBytes: int64(len(ten) - 1)}, "holds more than the limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadCSV(strings.NewReader(tc.data), "demand.csv", tc.opts)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ReadCSV: %v, want the series", err)
			case tc.wantErr != "" && (!errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("ReadCSV: %v, want ErrTooLarge saying %q", err, tc.wantErr)
			}
		})
	}
	// A file larger than the byte bound is refused from its size alone.
	path := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(path, []byte(ten), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadCSVReport(path, CSVOptions{MaxBytes: 10}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "big.csv") {
		t.Errorf("LoadCSVReport of a file over the bound: %v, want ErrTooLarge naming the file", err)
	}
}
