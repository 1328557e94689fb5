package datasets

import (
	"fmt"
	"math"
	"time"
)

// Day is the shift ShiftToNow falls back to when whole weeks would end a
// series more than a day before now.
const Day = 24 * time.Hour

// Shift says how ShiftToNow moved a series.
type Shift struct {
	// By is the shift, a whole number of days (of weeks when Weeks).
	By time.Duration
	// Weeks is set when the shift is by whole weeks: weekdays kept.
	Weeks bool
}

// String is the line 'forecaster import --shift-to-now' prints about the
// shift.
func (s Shift) String() string {
	days := int(s.By / Day)
	switch {
	case days == 0:
		return "--shift-to-now: the series already ends within a day of now; not moved"
	case s.Weeks:
		return fmt.Sprintf("--shift-to-now: moved by %s (weekdays and times of day kept)", countOf(days/7, "week"))
	}
	wd := ((days % 7) + 7) % 7
	return fmt.Sprintf("--shift-to-now: moved by %s (times of day kept; weekdays moved by %s: the export's Mondays are now %ss), "+
		"as whole weeks would end it more than a day before now", countOf(days, "day"), countOf(wd, "day"), (time.Monday + time.Weekday(wd)).String())
}

// ShiftToNow moves s to end within a day of now, at or before it: by the
// whole weeks that do so when there are such (weekday and time of day
// kept, for a weekly season), else by whole days (time of day kept, the
// weekdays moved), so that the history reaches the last day rather than
// leaving up to a week empty before now. Ending closer than a day would
// move the time of day, which a daily season needs kept.
func ShiftToNow(s Series, now time.Time) (Series, Shift) {
	weekly := s.AlignWeeks(now)
	if now.Sub(weekly.End()) <= Day {
		return weekly, Shift{By: weekly.Start.Sub(s.Start), Weeks: true}
	}
	days := int64(math.Floor(float64(now.Sub(s.End())) / float64(Day)))
	s.Start = s.Start.Add(time.Duration(days) * Day)
	return s, Shift{By: time.Duration(days) * Day}
}

// countOf is n and the noun, plural when n is not 1 ("3 weeks").
func countOf(n int, noun string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
