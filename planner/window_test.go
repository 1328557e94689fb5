package planner

import (
	"strings"
	"testing"
	"time"
)

func TestParseWindowsGood(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		start int
		end   int
		days  string // "smtwtfs" letters for set days, '.' for unset
		zone  string
		min   int
	}{
		{"weekdays", "weekdays 09:45-12:00 at least 6", 9*60 + 45, 12 * 60, ".MTWTF.", "UTC", 6},
		{"weekends with zone", "weekends 10:00-14:00 Europe/Berlin at least 2", 600, 840, "S.....S", "Europe/Berlin", 2},
		{"list and range", "mon,wed-fri 22:00-02:00 at least 3", 22 * 60, 120, ".M.WTF.", "UTC", 3},
		{"wrapping range", "fri-mon 00:00-24:00 at least 1", 0, 1440, "SM...FS", "UTC", 1},
		{"daily, comment and case", "Daily 08:00-09:00 AT LEAST 4  # morning", 480, 540, "SMTWTFS", "UTC", 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := ParseWindows(tc.text, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(ws) != 1 {
				t.Fatalf("got %d windows", len(ws))
			}
			w := ws[0]
			var days strings.Builder
			for d, on := range w.Days {
				if on {
					days.WriteByte("SMTWTFS"[d])
				} else {
					days.WriteByte('.')
				}
			}
			if w.StartMinute != tc.start || w.EndMinute != tc.end || days.String() != tc.days ||
				w.Location.String() != tc.zone || w.Min != tc.min {
				t.Errorf("got start %d end %d days %s zone %s min %d", w.StartMinute, w.EndMinute, days.String(), w.Location, w.Min)
			}
		})
	}
}

func TestParseWindowsBad(t *testing.T) {
	cases := []struct {
		name string
		text string
		want string
	}{
		{"bad hour", "# floors\nweekdays 25:00-26:00 at least 2", `line 2, field 2 "25:00-26:00": hour 25 out of range`},
		{"unknown day", "mon-fry 09:00-10:00 at least 2", `line 1, field 1 "mon-fry": unknown day "fry"`},
		{"unknown zone", "daily 09:00-10:00 Mars/Olympus at least 2", `line 1, field 3 "Mars/Olympus": unknown time zone`},
		{"missing at least", "daily 09:00-10:00 2", `line 1, field 4`},
		{"negative count", "daily 09:00-10:00 at least -1", `line 1, field 5 "-1": want a whole number`},
		{"empty window", "daily 09:00-09:00 at least 1", `empty window`},
		{"too few fields", "daily 09:00-10:00", `line 1, field 3 "": want DAYS`},
		{"no dash", "daily 0900 at least 1", `line 1, field 2 "0900": want HH:MM-HH:MM`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWindows(tc.text, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ~%q", err, tc.want)
			}
		})
	}
}

func TestWindowOverlaps(t *testing.T) {
	if _, err := time.LoadLocation("Europe/Berlin"); err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	mustParse := func(s string) Window {
		w, err := ParseWindow(s, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	utc := func(s string) time.Time {
		t, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			panic(err)
		}
		return t
	}
	cases := []struct {
		name   string
		window string
		from   string
		to     string
		want   bool
	}{
		{"inside on a weekday", "weekdays 09:45-12:00 at least 6", "2026-03-02 10:00", "2026-03-02 10:00", true},
		{"end is exclusive", "weekdays 09:45-12:00 at least 6", "2026-03-02 12:00", "2026-03-02 12:00", false},
		{"lead reaches the opening", "weekdays 09:45-12:00 at least 6", "2026-03-02 09:35", "2026-03-02 09:45", true},
		{"not on saturday", "weekdays 09:45-12:00 at least 6", "2026-03-07 10:00", "2026-03-07 10:00", false},
		{"past midnight belongs to the start day", "fri 22:00-02:00 at least 3", "2026-03-07 01:00", "2026-03-07 01:00", true},
		{"not the night after thursday", "fri 22:00-02:00 at least 3", "2026-03-06 01:00", "2026-03-06 01:00", false},
		// Berlin is UTC+1 in March before the switch: 09:00 Berlin = 08:00 UTC.
		{"zone shifts the window", "daily 09:00-10:00 Europe/Berlin at least 1", "2026-03-02 08:30", "2026-03-02 08:30", true},
		{"zone shifts the window out", "daily 09:00-10:00 Europe/Berlin at least 1", "2026-03-02 09:30", "2026-03-02 09:30", false},
		// After the switch to summer time (29 March 2026) 09:00 Berlin = 07:00 UTC.
		{"daylight saving time", "daily 09:00-10:00 Europe/Berlin at least 1", "2026-03-30 07:30", "2026-03-30 07:30", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := mustParse(tc.window)
			if got := w.Overlaps(utc(tc.from), utc(tc.to)); got != tc.want {
				t.Errorf("Overlaps = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFloorStepPreWarms(t *testing.T) {
	c := planConfig()
	ws, err := ParseWindows("weekdays 09:45-12:00 at least 6\nweekdays 10:00-11:00 at least 8", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Windows = ws
	cases := []struct {
		name string
		now  string
		want int
	}{
		{"before the lead", "09:30", 0},
		{"one boot delay ahead", "09:35", 6},
		{"the higher floor wins", "09:55", 8},
		{"after both", "12:00", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := c.FloorStep(at(tc.now))
			if st.Desired != tc.want {
				t.Errorf("FloorStep(%s) = %d (%q), want %d", tc.now, st.Desired, st.Reason, tc.want)
			}
			if tc.want > 0 && !strings.HasPrefix(st.Reason, "schedule weekdays") {
				t.Errorf("reason %q does not name the window", st.Reason)
			}
		})
	}
}

// FuzzParseWindows checks the parser never panics and that what it
// accepts is well-formed.
//
//	go test ./planner -run '^$' -fuzz FuzzParseWindows -fuzztime 20s
func FuzzParseWindows(f *testing.F) {
	for _, s := range []string{"weekdays 09:45-12:00 at least 6", "sat,sun 10:00-14:00 Europe/Berlin at least 2",
		"mon-thu 22:00-02:00 UTC at least 3 # c", "daily 00:00-24:00 at least 1", "x", "mon 24:00-01:00 at least 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ws, err := ParseWindows(text, nil)
		if err != nil {
			return
		}
		for _, w := range ws {
			if w.StartMinute < 0 || w.StartMinute >= 1440 || w.EndMinute < 0 || w.EndMinute > 1440 ||
				w.StartMinute == w.EndMinute || w.Min < 0 || w.Location == nil {
				t.Fatalf("accepted a bad window %+v from %q", w, text)
			}
			w.Overlaps(t0, t0.Add(time.Hour))
		}
	})
}
