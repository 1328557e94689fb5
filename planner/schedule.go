package planner

import (
	"sort"
	"time"
)

// Step is one entry of a capacity schedule: from At on, the pool should have
// Desired ready instances, for the reason given.
type Step struct {
	At      time.Time `json:"at"`
	Desired int       `json:"desired"`
	// Reason says which term decided Desired, e.g. "forecast p95 at
	// 10:15 needs 7 (pre-warm 10m)", "reactive: util 91% > 85% for 5m",
	// "schedule weekdays 09:45-12:00".
	Reason string `json:"reason"`
	// Warm is how many stopped instances the warm tier keeps ready to
	// start at At (0 without one, Fleet.WarmStart).
	Warm int `json:"warm,omitempty"`
}

// Schedule is a capacity schedule in time order.
type Schedule []Step

// At returns the step in force at t: the last step whose At is not after t.
// ok is false when t is before the first step.
func (s Schedule) At(t time.Time) (step Step, ok bool) {
	i := sort.Search(len(s), func(i int) bool { return s[i].At.After(t) })
	if i == 0 {
		return Step{}, false
	}
	return s[i-1], true
}

// Compact returns s without the steps that repeat the previous Desired and
// Warm, so every remaining step is a change.
func (s Schedule) Compact() Schedule {
	out := make(Schedule, 0, len(s))
	for _, st := range s {
		if len(out) > 0 && out[len(out)-1].Desired == st.Desired && out[len(out)-1].Warm == st.Warm {
			continue
		}
		out = append(out, st)
	}
	return out
}
