package auto

import (
	"slices"

	"github.com/prewarm/prewarm/model/seasonal"
)

// season is one pair of periods a pool of candidates is built around:
// the day (the short period, in steps) and the week (the long one; 0
// when the history is too short for weekly candidates). from says where
// the pair came from, for the Method name: "clock" or "detected".
type season struct {
	day, week int
	from      string
}

// daysPerWeek turns a daily period into the weekly one tried when only
// the day is known: demand that follows the clock usually follows the
// calendar too, and validation drops the weekly candidates where it does
// not. A week of another length (a 5-day working week) must be detected.
const daysPerWeek = 7

// seasons returns the period pairs to build candidates around, the
// clock's first: Config.Periods when given (else the day and the week of
// Config.Step), then the periods seasonal.Detect finds, when they differ.
// Detection only adds: odd detected periods cost candidates, never the
// clock's. A pair needs two days of history; its week is kept when the
// history holds three weeks. An explicitly empty Config.Periods means no
// seasonality and no detection.
func (f *forecaster) seasons(x []float64) []season {
	n := len(x)
	var clock []int
	switch {
	case f.cfg.Periods != nil:
		clock = cleanPeriods(f.cfg.Periods)
		if len(clock) == 0 {
			return nil
		}
	default:
		clock = seasonal.ClockPeriods(f.cfg.Step)
	}
	var out []season
	add := func(s season) {
		if s.day < 2 || n < 2*s.day+1 {
			return
		}
		if n < 2*s.week+1 {
			s.week = 0
		}
		for _, o := range out {
			if o.day == s.day && o.week == s.week {
				return
			}
		}
		out = append(out, s)
	}
	if len(clock) > 0 {
		s := season{day: clock[0], week: clock[0] * daysPerWeek, from: "clock"}
		if len(clock) > 1 {
			s.day, s.week = clock[len(clock)-2], clock[len(clock)-1]
		}
		add(s)
	}
	if detected := seasonal.Detect(x, seasonal.DetectOptions{Snap: clock}); len(detected) > 0 {
		add(dayAndWeek(x, detected))
	}
	return out
}

// dayAndWeek picks the day and the week among detected periods: the
// pair whose ratio is 5 to 7 days (a working or a calendar week) with
// the longest week, so that [2 24 168] and [24 168 672] both give 24 and
// 168; without such a pair, the shortest period and the week
// seasonal.WeekOf finds for it.
func dayAndWeek(x []float64, periods []int) season {
	best := season{from: "detected"}
	for i, d := range periods {
		for _, w := range periods[i+1:] {
			if w%d == 0 && w/d >= 5 && w/d <= daysPerWeek && w > best.week {
				best.day, best.week = d, w
			}
		}
	}
	if best.day == 0 {
		best.day = periods[0]
		best.week = seasonal.WeekOf(x, best.day)
		if best.week == 0 {
			best.week = daysPerWeek * best.day
		}
	}
	return best
}

// cleanPeriods drops periods below 2 and sorts the rest, shortest first;
// nil stays nil (detect).
func cleanPeriods(periods []int) []int {
	if periods == nil {
		return nil
	}
	out := []int{}
	for _, p := range periods {
		if p >= 2 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
