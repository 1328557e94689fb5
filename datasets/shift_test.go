package datasets_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
)

// --shift-to-now ends the series within a day of now, at or before it:
// by whole weeks when that does (weekdays kept), else by whole days; the
// time of day is kept either way.
func TestShiftToNow(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC) // a Tuesday
	day := 24 * time.Hour
	tests := []struct {
		name      string
		end       time.Time // of the series before the shift
		wantWeeks bool
		wantBy    time.Duration
		says      string
	}{
		{"weeks end it 3h before now", now.Add(-3*time.Hour - 5*datasets.Week), true, 5 * datasets.Week, "moved by 5 weeks (weekdays and times of day kept)"},
		{"weeks would leave 4 days", now.Add(-4*day - 3*time.Hour - 2*datasets.Week), false, 18 * day, "moved by 18 days (times of day kept; weekdays moved by 4 days: the export's Mondays are now Fridays)"},
		{"already within a day", now.Add(-2 * time.Hour), true, 0, "not moved"},
		{"in the future", now.Add(3*day + time.Hour), false, -4 * day, "moved by -4 days (times of day kept; weekdays moved by 3 days: the export's Mondays are now Thursdays)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := datasets.Series{Start: tc.end.Add(-48 * time.Hour), Step: time.Hour, Values: make([]float64, 48)}
			got, moved := datasets.ShiftToNow(s, now)
			if moved.Weeks != tc.wantWeeks || moved.By != tc.wantBy || !strings.Contains(moved.String(), tc.says) {
				t.Errorf("moved %v (weeks %v): %q; want %v (weeks %v) saying %q", moved.By, moved.Weeks, moved, tc.wantBy, tc.wantWeeks, tc.says)
			}
			if e := got.End(); e.After(now) || now.Sub(e) > day {
				t.Errorf("ends %s, want within the day before %s", e, now)
			}
			if got.Start.Hour() != s.Start.Hour() || got.Start.Minute() != s.Start.Minute() {
				t.Errorf("time of day changed: %s -> %s", s.Start, got.Start)
			}
			if tc.wantWeeks && got.Start.Weekday() != s.Start.Weekday() {
				t.Errorf("weekday changed by a whole-week shift: %s -> %s", s.Start, got.Start)
			}
		})
	}
}
