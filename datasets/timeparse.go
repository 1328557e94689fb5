package datasets

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// timeKind is how a file writes its timestamps; one file uses one kind.
type timeKind int

const (
	kindUnknown timeKind = iota
	kindClock            // a calendar date and time, e.g. "2014-07-01 00:30:00"
	kindUnix             // Unix seconds, integer or fractional
	kindIndex            // a plain integer row index 0, 1, 2, ...
)

func (k timeKind) String() string {
	switch k {
	case kindClock:
		return "date-time"
	case kindUnix:
		return "Unix seconds"
	case kindIndex:
		return "an integer index"
	}
	return "unknown"
}

// maxIndex separates a plain integer index from Unix seconds: an integer
// below it (a time before March 1973) is read as an index.
const maxIndex = 100_000_000

// clockLayouts are the date-time layouts accepted, tried in order. Layouts
// without a zone are read as UTC. Go accepts fractional seconds after the
// seconds field even when the layout does not show them, so
// "2023-11-16 18:15:46.6805900" parses with "2006-01-02 15:04:05".
var clockLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// timeParser parses one file's timestamps. It learns the file's kind from the
// first timestamp it parses and rejects any later one of another kind, so a
// stray "17" in a file of dates is reported instead of read as 1970.
type timeParser struct {
	kind   timeKind
	layout int           // index in clockLayouts of the last layout that matched
	unit   time.Duration // what one index unit means (kindIndex only)
}

// parse returns the time written in s, or an error saying what is wrong.
func (p *timeParser) parse(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("empty timestamp")
	}
	kind, t, err := p.parseAny(s)
	if err != nil {
		return time.Time{}, err
	}
	if p.kind == kindUnknown {
		p.kind = kind
	} else if kind != p.kind {
		return time.Time{}, fmt.Errorf("timestamp %q is %v but the file uses %v", s, kind, p.kind)
	}
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf("timestamp %q is outside %s to %s, the span of the time grid", s, minTime.Format(time.DateOnly), maxTime.Format(time.DateOnly))
	}
	return t, nil
}

// minTime and maxTime bound the timestamps accepted: the times whose Unix
// nanoseconds an int64 holds (1677-09-21 to 2262-04-11), the range of the
// store's time grid (store.WindowStart), less a year on each side so a
// window never leaves it.
var (
	minTime = time.Unix(0, math.MinInt64).UTC().AddDate(1, 0, 0)
	maxTime = time.Unix(0, math.MaxInt64).UTC().AddDate(-1, 0, 0)
)

func (p *timeParser) parseAny(s string) (timeKind, time.Time, error) {
	if looksNumeric(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if p.kind == kindIndex || (p.kind == kindUnknown && i >= 0 && i < maxIndex) {
				if i < 0 || i >= maxIndex {
					return kindUnix, time.Time{}, fmt.Errorf("index %d out of range [0, %d)", i, maxIndex)
				}
				return kindIndex, time.Unix(0, 0).UTC().Add(time.Duration(i) * p.unit), nil
			}
			return kindUnix, time.Unix(i, 0).UTC(), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e11 {
			return kindUnix, time.Time{}, fmt.Errorf("timestamp %q is not a valid number of Unix seconds", s)
		}
		sec := math.Floor(f)
		nsec := math.Round((f - sec) * 1e9)
		return kindUnix, time.Unix(int64(sec), int64(nsec)).UTC(), nil
	}
	n := len(clockLayouts)
	for j := range n {
		layout := clockLayouts[(p.layout+j)%n]
		if t, err := time.Parse(layout, s); err == nil {
			p.layout = (p.layout + j) % n
			return kindClock, t.UTC(), nil
		}
	}
	return kindClock, time.Time{}, fmt.Errorf("cannot parse timestamp %q: want RFC 3339, \"2006-01-02 15:04:05\", Unix seconds or an integer index", s)
}

// looksNumeric reports whether s is written like a number (digits, sign,
// point, exponent) rather than a date: dates contain '-' after the first
// character or ':'.
func looksNumeric(s string) bool {
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E':
		case (c == '-' || c == '+') && (i == 0 || s[i-1] == 'e' || s[i-1] == 'E'):
		default:
			return false
		}
	}
	return true
}
