package control

import (
	"slices"
	"time"
)

// StartTimes learns how long the fleet takes to bring an instance from
// being asked for to ready, from what it shows at each decision: the size
// it is asked to reach and how many instances serve. A configured boot
// delay that is wrong by half is a silent SLO breach (the plan asks too
// late) or a standing cost (too early); the measured one says which.
//
// The fleet owes max(asked − ready, 0) instances at each observation. Each
// owed instance is dated when it was first owed: asked for (at the
// observation), or replacing one that stopped serving (between the last
// observation and this one). When more instances serve than at the last
// observation, the oldest debts are settled, each a measured start time.
// When the debt shrinks otherwise (a scale-in before the boots ended), the
// newest are dropped. An instance seen ready became so between the last
// observation and this one: its start is counted to the middle of that
// span, which makes the estimate unbiased for boots of any length (and
// half a span short for boots that end exactly at an observation).
//
// Call Observe after each decision with the size just asked for, so that
// a request is dated when it was made.
//
// The zero value is ready to use; it is not safe for concurrent use.
type StartTimes struct {
	owed     []time.Time     // when each owed instance was first owed, oldest first; zero: unknown
	measured []time.Duration // the last maxStarts start times, oldest first
	asked    int             // the size asked for at the last observation
	ready    int             // ready instances at the last observation
	last     time.Time       // the last observation
	seen     bool            // an observation was made
	recorded int             // starts measured since the zero value or Restore
}

// Start-time learning bounds: the estimate is made from the last
// maxStarts starts, once minStarts have been measured.
const (
	maxStarts = 128
	minStarts = 5
)

// Observe records one observation at now: asked is the size the fleet is
// asked to reach, ready how many instances serve.
func (s *StartTimes) Observe(now time.Time, asked, ready int) {
	asked, ready = max(asked, 0), max(ready, 0)
	if s.seen && ready > s.ready {
		settled := min(ready-s.ready, len(s.owed))
		readyAt := s.last.Add(now.Sub(s.last) / 2)
		for _, since := range s.owed[:settled] {
			if !since.IsZero() && readyAt.After(since) {
				s.record(readyAt.Sub(since))
			}
		}
		s.owed = slices.Delete(s.owed, 0, settled)
	}
	owed := max(asked-ready, 0)
	if len(s.owed) > owed {
		s.owed = s.owed[:owed] // the newest were cancelled
	}
	// New debts are requests made now (asked for more) or replacements of
	// instances that stopped serving since the last look (dated to its
	// middle, and older than the requests); before the first look, unknown.
	added := max(owed-len(s.owed), 0)
	requests := min(max(asked-s.asked, 0), added)
	replaced, requested := time.Time{}, time.Time{}
	if s.seen {
		replaced, requested = s.last.Add(now.Sub(s.last)/2), now
	}
	for range added - requests {
		s.owed = append(s.owed, replaced)
	}
	for range requests {
		s.owed = append(s.owed, requested)
	}
	s.asked, s.ready, s.last, s.seen = asked, ready, now, true
}

func (s *StartTimes) record(d time.Duration) {
	if len(s.measured) == maxStarts {
		s.measured = slices.Delete(s.measured, 0, 1)
	}
	s.measured = append(s.measured, d)
	s.recorded++
}

// Measured returns the start times the estimate is made from, oldest
// first: what a state file keeps across restarts (Restore).
func (s *StartTimes) Measured() []time.Duration { return slices.Clone(s.measured) }

// Recorded counts the starts measured since the zero value or Restore: it
// changes when Measured does.
func (s *StartTimes) Recorded() int { return s.recorded }

// Restore replaces the measured start times with saved ones (Measured),
// keeping the last 128 of those that are positive; the debts in flight
// and the last observation start afresh.
func (s *StartTimes) Restore(saved []time.Duration) {
	*s = StartTimes{}
	for _, d := range saved {
		if d > 0 {
			s.record(d)
		}
	}
	s.recorded = 0
}

// StartEstimate is what StartTimes has measured.
type StartEstimate struct {
	// Starts is how many start times the figures come from (the last
	// ones, at most 128).
	Starts int `json:"starts"`
	// Median and P90 are those starts' median and 90th percentile.
	Median time.Duration `json:"median"`
	P90    time.Duration `json:"p90"`
}

// Estimate returns the measured start times, and whether enough starts
// (five) were seen for them to stand in for a configured boot delay.
func (s *StartTimes) Estimate() (StartEstimate, bool) {
	if len(s.measured) == 0 {
		return StartEstimate{}, false
	}
	sorted := slices.Sorted(slices.Values(s.measured))
	at := func(q float64) time.Duration { return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)] }
	return StartEstimate{Starts: len(sorted), Median: at(0.5), P90: at(0.9)}, len(sorted) >= minStarts
}
