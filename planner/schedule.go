package planner

import "time"

// Step is one entry of a capacity schedule: from At on, the pool should have
// Desired ready instances, for the reason given.
type Step struct {
	At      time.Time
	Desired int
	// Reason says which term decided Desired, e.g. "forecast p95 at
	// 10:15 needs 7 (pre-warm 10m)", "reactive: util 91% > 85% for 5m",
	// "schedule weekdays 09:45-12:00".
	Reason string
}

// Schedule is a capacity schedule in time order.
type Schedule []Step
