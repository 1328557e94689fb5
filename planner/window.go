package planner

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Window is a recurring time window that sets a floor on capacity, written
// like a crontab line:
//
//	weekdays 09:45-12:00 at least 6
//	sat,sun 10:00-14:00 Europe/Berlin at least 2
//	mon-thu 22:00-02:00 UTC at least 3     # past midnight: ends on the next day
//	daily 00:00-24:00 at least 1
//
// Fields: days (daily, weekdays, weekends, or a comma list of mon..sun and
// ranges like mon-fri), the local time range HH:MM-HH:MM (24:00 allowed as
// an end; an end not after the start runs into the next day), an optional
// IANA time zone (default: the one given to the parser), and "at least N".
type Window struct {
	// Days marks the weekdays, indexed by time.Weekday, on which the
	// window starts.
	Days [7]bool
	// StartMinute and EndMinute are minutes after local midnight.
	StartMinute, EndMinute int
	// Location is the window's time zone.
	Location *time.Location
	// Min is the floor on ready instances inside the window.
	Min int
	// Text is the line the window was parsed from, for reasons.
	Text string
}

var dayNames = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// ParseWindows parses one window per line; blank lines and text after '#'
// are ignored. Errors name the line and field: `line 3, field 2
// "25:00-26:00": hour 25 out of range 0-24`. loc is the zone of windows that
// name none (nil means UTC).
func ParseWindows(text string, loc *time.Location) ([]Window, error) {
	var out []Window
	for i, line := range strings.Split(text, "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		w, err := ParseWindow(line, loc)
		if err != nil {
			return nil, fmt.Errorf("line %d, %w", i+1, err)
		}
		out = append(out, w)
	}
	return out, nil
}

// ParseWindow parses a single window; see Window for the syntax. Errors
// start with the field: `field 4 "at": ...`.
func ParseWindow(line string, loc *time.Location) (Window, error) {
	if loc == nil {
		loc = time.UTC
	}
	f := strings.Fields(line)
	w := Window{Location: loc, Text: strings.Join(f, " ")}
	fieldErr := func(i int, format string, args ...any) error {
		tok := ""
		if i < len(f) {
			tok = f[i]
		}
		return fmt.Errorf("field %d %q: %s", i+1, tok, fmt.Sprintf(format, args...))
	}
	if len(f) < 4 {
		return Window{}, fieldErr(len(f), "want DAYS HH:MM-HH:MM [ZONE] at least N, got %d fields", len(f))
	}
	var err error
	if w.Days, err = parseDays(f[0]); err != nil {
		return Window{}, fieldErr(0, "%v", err)
	}
	if w.StartMinute, w.EndMinute, err = parseRange(f[1]); err != nil {
		return Window{}, fieldErr(1, "%v", err)
	}
	i := 2
	if !strings.EqualFold(f[i], "at") {
		z, err := time.LoadLocation(f[i])
		if err != nil {
			return Window{}, fieldErr(i, "unknown time zone")
		}
		w.Location = z
		i++
	}
	if len(f) != i+3 || !strings.EqualFold(f[i], "at") || !strings.EqualFold(f[i+1], "least") {
		return Window{}, fieldErr(i, `want "at least N" after the time range`)
	}
	n, err := strconv.Atoi(f[i+2])
	if err != nil || n < 0 {
		return Window{}, fieldErr(i+2, "want a whole number of instances >= 0")
	}
	w.Min = n
	return w, nil
}

func parseDays(s string) ([7]bool, error) {
	var days [7]bool
	switch strings.ToLower(s) {
	case "daily", "everyday", "*":
		for d := range days {
			days[d] = true
		}
		return days, nil
	case "weekdays":
		return parseDays("mon-fri")
	case "weekends":
		return parseDays("sat,sun")
	}
	for _, part := range strings.Split(strings.ToLower(s), ",") {
		from, to, isRange := strings.Cut(part, "-")
		a, ok := dayNames[from]
		if !ok {
			return days, fmt.Errorf("unknown day %q: want daily, weekdays, weekends or mon..sun lists and ranges", from)
		}
		b := a
		if isRange {
			if b, ok = dayNames[to]; !ok {
				return days, fmt.Errorf("unknown day %q: want daily, weekdays, weekends or mon..sun lists and ranges", to)
			}
		}
		for d := a; ; d = (d + 1) % 7 {
			days[d] = true
			if d == b {
				break
			}
		}
	}
	return days, nil
}

func parseRange(s string) (start, end int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("want HH:MM-HH:MM")
	}
	if start, err = parseClock(a); err != nil {
		return 0, 0, err
	}
	if end, err = parseClock(b); err != nil {
		return 0, 0, err
	}
	if start == 24*60 {
		return 0, 0, fmt.Errorf("a window cannot start at 24:00")
	}
	if start == end {
		return 0, 0, fmt.Errorf("empty window: start equals end")
	}
	return start, end, nil
}

func parseClock(s string) (int, error) {
	hh, mm, ok := strings.Cut(s, ":")
	if !ok || len(mm) != 2 || len(hh) == 0 || len(hh) > 2 {
		return 0, fmt.Errorf("time %q: want HH:MM", s)
	}
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("time %q: want HH:MM", s)
	}
	if h < 0 || h > 24 {
		return 0, fmt.Errorf("hour %d out of range 0-24", h)
	}
	if m < 0 || m > 59 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("minute %d out of range 0-59 (24:00 is the only time past 23:59)", m)
	}
	return h*60 + m, nil
}

// Overlaps reports whether any occurrence of the window intersects the
// interval [t0, t1].
func (w Window) Overlaps(t0, t1 time.Time) bool {
	loc := w.Location
	if loc == nil {
		loc = time.UTC
	}
	l := t0.In(loc)
	// Start one day early: a window past midnight began yesterday.
	for d := -1; ; d++ {
		day := time.Date(l.Year(), l.Month(), l.Day()+d, 0, 0, 0, 0, loc)
		if day.After(t1) {
			return false
		}
		if !w.Days[day.Weekday()] {
			continue
		}
		s := time.Date(day.Year(), day.Month(), day.Day(), 0, w.StartMinute, 0, 0, loc)
		endDay := day.Day()
		if w.EndMinute <= w.StartMinute {
			endDay++
		}
		e := time.Date(day.Year(), day.Month(), endDay, 0, w.EndMinute, 0, 0, loc)
		if !s.After(t1) && e.After(t0) {
			return true
		}
	}
}

// FloorStep returns the schedule floor in force at now: the largest Min of
// the windows that overlap [now, now+BootDelay], so instances are asked for
// one boot delay before a window opens. Desired is 0 with an empty reason
// when no window applies.
func (c *Config) FloorStep(now time.Time) Step {
	best := Step{At: now}
	for _, w := range c.Windows {
		if w.Min > best.Desired && w.Overlaps(now, now.Add(c.Fleet.BootDelay)) {
			best.Desired = w.Min
			best.Reason = "schedule " + w.Text
		}
	}
	return best
}
