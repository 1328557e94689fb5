package datasets

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ErrBadRow is matched (errors.Is) by every error about a rejected input row.
var ErrBadRow = errors.New("bad row")

// RowError is one rejected input row: its file, 1-based line, the column at
// fault (empty when the whole row is at fault) and the problem.
type RowError struct {
	File    string
	Line    int
	Column  string
	Problem string
}

// Error formats the row error as "file:line: column: problem", the form
// editors and CI logs link to. A column name that is not plain printable
// text is quoted, so a message never carries the file's raw bytes.
func (e *RowError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Problem)
	}
	column := e.Column
	if strings.IndexFunc(column, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		column = strconv.Quote(column)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, column, e.Problem)
}

// Is makes errors.Is(err, ErrBadRow) true for a *RowError.
func (e *RowError) Is(target error) bool { return target == ErrBadRow }

// BadRowsError is returned when a file has bad rows and the options did not
// ask to skip them. It lists every bad row found; its message names the first.
type BadRowsError struct {
	Rows []RowError
}

// Error names the first bad row and how many more there are.
func (e *BadRowsError) Error() string {
	if len(e.Rows) == 0 {
		return "bad rows"
	}
	msg := e.Rows[0].Error()
	if n := len(e.Rows) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more bad rows)", n)
	}
	return msg + "; fix the file, or use --skip-bad to skip the bad rows and list them"
}

// Unwrap returns each bad row as an error, so errors.As finds a *RowError.
func (e *BadRowsError) Unwrap() []error {
	errs := make([]error, len(e.Rows))
	for i := range e.Rows {
		errs[i] = &e.Rows[i]
	}
	return errs
}

// Duplicate is a row whose timestamp an earlier row already had; the two
// values were merged with the aggregate.
type Duplicate struct {
	Line      int       // line of the repeated timestamp
	FirstLine int       // line where the timestamp first appeared
	Time      time.Time // the shared timestamp
}

// OutOfOrder is a row whose timestamp is earlier than a previous row's; rows
// are sorted by time before the series is built.
type OutOfOrder struct {
	Line  int       // line of the row that went back in time
	Time  time.Time // its timestamp
	After time.Time // the latest timestamp seen before it
}

// Gap is a run of consecutive steps with no data, filled with NaN.
type Gap struct {
	Index   int       // position in Series.Values of the first missing step
	At      time.Time // its time
	Missing int       // number of consecutive missing steps
}

// MaxListedGaps is how many gap runs a Report lists; GapRuns and Missing
// count all of them.
const MaxListedGaps = 10

// Report says what loading a file found and did, so that nothing is changed
// or dropped silently.
type Report struct {
	File        string
	TimeColumn  string
	ValueColumn string
	// Rows counts the data rows read (the header excluded); Accepted those
	// that went into the series. Rows - Accepted == len(Bad).
	Rows, Accepted int
	// Step is the series' step; StepInferred says it was the median spacing
	// of the timestamps rather than asked for.
	Step         time.Duration
	StepInferred bool
	// Aggregate is how rows sharing a step were combined.
	Aggregate string
	// Missing counts steps with no data (NaN in the series); GapRuns the runs
	// of consecutive missing steps; Gaps lists the first MaxListedGaps runs.
	Missing, GapRuns int
	Gaps             []Gap
	// Duplicates lists every repeated timestamp; OutOfOrder every row earlier
	// than one before it; Bad every rejected row.
	Duplicates []Duplicate
	// Merged lists rows that, with an inferred step, had their own timestamp
	// but landed on a step another row already held (irregular sampling) and
	// were combined by the aggregate. FirstLine is the step's first row.
	// With a Step set, combining rows is the point and is not listed.
	Merged     []Duplicate
	OutOfOrder []OutOfOrder
	Bad        []RowError
	// Outliers lists the values beyond MaxValue or MaxMedianRatio × the
	// median that CSVOptions.AllowOutliers kept (without it their rows
	// are bad rows).
	Outliers []Outlier
}

// Clean reports whether the file needed no repair and held nothing to
// flag: no gaps, duplicates, off-grid, out-of-order or bad rows, no
// outliers kept.
func (r Report) Clean() bool {
	return r.Missing == 0 && len(r.Duplicates) == 0 && len(r.Merged) == 0 && len(r.OutOfOrder) == 0 && len(r.Bad) == 0 &&
		len(r.Outliers) == 0
}

// Notice is what every command prints (to stderr) about a file it loaded:
// "" for a clean file, else "PROGRAM: FILE needed repairs:" and the
// report (String), so that no duplicate merged, row re-ordered, gap
// filled, row skipped or outlier kept goes unsaid. program names the
// command, e.g. "forecaster backtest".
func (r Report) Notice(program string) string {
	if r.Clean() {
		return ""
	}
	return fmt.Sprintf("%s: the input needed repairs:\n%s\n", program, r)
}

// String summarises the report in a few lines, listing at most three
// positions of each kind of finding.
func (r Report) String() string {
	var b strings.Builder
	inferred := ""
	if r.StepInferred {
		inferred = " (inferred)"
	}
	fmt.Fprintf(&b, "%s: %d rows, %d accepted, step %v%s, aggregate %s, column %q",
		r.File, r.Rows, r.Accepted, r.Step, inferred, r.Aggregate, r.ValueColumn)
	if r.Missing > 0 {
		fmt.Fprintf(&b, "\n  gaps: %d missing steps in %d runs, filled with NaN", r.Missing, r.GapRuns)
		writeFirst(&b, r.Gaps, ", ...", func(g Gap) string { return fmt.Sprintf("; %d at %s", g.Missing, g.At.Format(time.RFC3339)) })
	}
	if n := len(r.Duplicates); n > 0 {
		fmt.Fprintf(&b, "\n  duplicate timestamps: %d, merged by %s; lines", n, r.Aggregate)
		writeFirst(&b, r.Duplicates, ", ...", func(d Duplicate) string { return fmt.Sprintf(" %d (first %d)", d.Line, d.FirstLine) })
	}
	if n := len(r.Merged); n > 0 {
		fmt.Fprintf(&b, "\n  off-grid rows merged into a neighbouring step: %d, by %s; lines", n, r.Aggregate)
		writeFirst(&b, r.Merged, ", ...", func(d Duplicate) string { return fmt.Sprintf(" %d (with %d)", d.Line, d.FirstLine) })
	}
	if n := len(r.OutOfOrder); n > 0 {
		fmt.Fprintf(&b, "\n  out-of-order rows: %d, sorted; lines", n)
		writeFirst(&b, r.OutOfOrder, ", ...", func(o OutOfOrder) string { return fmt.Sprintf(" %d", o.Line) })
	}
	if n := len(r.Outliers); n > 0 {
		fmt.Fprintf(&b, "\n  outliers kept (--allow-outliers): %d; lines", n)
		writeFirst(&b, r.Outliers, ", ...", func(o Outlier) string { return fmt.Sprintf(" %d (%g)", o.Line, o.Value) })
	}
	if n := len(r.Bad); n > 0 {
		fmt.Fprintf(&b, "\n  bad rows skipped: %d", n)
		writeFirst(&b, r.Bad, "\n    ...", func(e RowError) string { return fmt.Sprintf("\n    %s", e.Error()) })
	}
	return b.String()
}

// writeFirst writes line(item) for the first three items, then more when
// there are others: a report names a few examples, not all.
func writeFirst[T any](b *strings.Builder, items []T, more string, line func(T) string) {
	for i, it := range items {
		if i == 3 {
			b.WriteString(more)
			return
		}
		b.WriteString(line(it))
	}
}
