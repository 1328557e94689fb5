package datasets

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// rowReader reads the data rows of a CSV file with a header line, counting
// them in a Report and listing malformed ones there as bad rows.
type rowReader struct {
	name   string
	cr     *csv.Reader
	header []string
	rep    *Report
	// maxRows, when positive, refuses a file with more data rows, good or
	// bad (ErrTooLarge): every row read is kept or listed until the end.
	maxRows int
}

// newRowReader reads the header line; example names a typical header for
// the error on an empty file. A file that is not comma-separated UTF-8
// text is refused first with what it looks like (see sniff).
func newRowReader(r io.Reader, name, example string, rep *Report) (*rowReader, error) {
	r, err := sniff(r, name)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // a short row is reported as a bad row, not a read error
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file: want a header line such as %q", name, example)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	header = slices.Clone(header)
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	return &rowReader{name: name, cr: cr, header: header, rep: rep}, nil
}

// next returns the next row that has as many fields as the header, with its
// line number; other rows are listed as bad. It returns io.EOF at the end.
// The returned slice is reused by the next call.
func (rr *rowReader) next() ([]string, int, error) {
	for {
		rec, err := rr.cr.Read()
		if errors.Is(err, io.EOF) {
			return nil, 0, io.EOF
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			if err := rr.count(pe.StartLine); err != nil {
				return nil, 0, err
			}
			rr.bad(pe.StartLine, "", pe.Err.Error())
			continue
		}
		if errors.Is(err, ErrTooLarge) {
			return nil, 0, err
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", rr.name, err)
		}
		if err := rr.count(0); err != nil {
			return nil, 0, err
		}
		line, _ := rr.cr.FieldPos(0)
		if len(rec) != len(rr.header) {
			rr.bad(line, "", fmt.Sprintf("row has %d columns, the header has %d", len(rec), len(rr.header)))
			continue
		}
		return rec, line, nil
	}
}

// count counts one more data row, refusing it past maxRows; line is the
// row's line, or 0 for the reader's current one.
func (rr *rowReader) count(line int) error {
	rr.rep.Rows++
	if rr.maxRows <= 0 || rr.rep.Rows <= rr.maxRows {
		return nil
	}
	if line == 0 {
		line, _ = rr.cr.FieldPos(0)
	}
	return tooLarge(rr.name, fmt.Sprintf("has more than the limit of %d data rows (line %d)", rr.maxRows, line))
}

// bad lists a rejected row.
func (rr *rowReader) bad(line int, column, problem string) {
	rr.rep.Bad = append(rr.rep.Bad, RowError{File: rr.name, Line: line, Column: column, Problem: problem})
}

// column returns the index of the named column, exact match first, then
// ignoring case, or an error listing the columns; role says what the column
// is for ("time column").
func (rr *rowReader) column(name, role string) (int, error) {
	if i := findColumn(rr.header, name); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("%s:1: no %s %q; the columns are %s", rr.name, role, name, quoteAll(rr.header))
}

// orderCheck lists rows whose time is earlier than one before them.
type orderCheck struct {
	latest time.Time
	seen   bool
}

func (o *orderCheck) observe(t time.Time, line int, rep *Report) {
	if o.seen && t.Before(o.latest) {
		rep.OutOfOrder = append(rep.OutOfOrder, OutOfOrder{Line: line, Time: t, After: o.latest})
	}
	if !o.seen || t.After(o.latest) {
		o.latest, o.seen = t, true
	}
}

// badRowsError returns the error for the report's bad rows, or nil when
// there are none or they are to be skipped.
func badRowsError(rep *Report, skipBad bool) error {
	if len(rep.Bad) == 0 || skipBad {
		return nil
	}
	return &BadRowsError{Rows: rep.Bad}
}
