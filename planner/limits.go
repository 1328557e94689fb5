package planner

import "time"

// The ranges of the limits. MaxFleet is also actuator.Safe's sanity
// limit: it never asks a back-end for more instances; a larger number is
// a unit or a digit typed wrong.
const (
	// MaxFleet is the most instances a pool may be given.
	MaxFleet = 100_000
	// MaxMinInterval is the longest least time between two changes.
	MaxMinInterval = 24 * time.Hour
)

// Limits bound what may be done to a pool: its size, the instances one
// change may add or remove, and the least time between two changes. They
// are the `min`, `max`, `max_step` and `min_interval` of a pool in the
// forecaster's configuration file, declared once here: every plan stays
// within MinInstances and MaxInstances, and the safety layer
// (actuator.Safe) enforces all four on every change, in the service, in
// the backtest's simulator and in the tuner's twins alike.
//
// Defaults are DefaultLimits'; each field's range is what CheckRanges
// reports, the one table the configuration file, the actuator, the
// planner and the command-line flags check.
type Limits struct {
	// MinInstances is the fewest instances (default 1; 0 to max).
	MinInstances int `yaml:"min" json:"min"`
	// MaxInstances is the most instances, also the static fleet a plan's
	// cost is compared with (default 100 in code; a pool in the
	// configuration file must set it; max(1, min) to MaxFleet).
	MaxInstances int `yaml:"max" json:"max"`
	// MaxStep caps how many instances one change may add or remove
	// (default 0: no limit beyond [min, max]; 0 to max).
	MaxStep int `yaml:"max_step" json:"max_step"`
	// MinInterval is the least time between two changes of the pool, a
	// per-pool rate limit (default 0: none; 0 to MaxMinInterval). In JSON
	// it is nanoseconds.
	MinInterval time.Duration `yaml:"min_interval" json:"min_interval"`
}

// DefaultLimits returns the limits a pool starts from: 1 to 100
// instances, changes of any size, at any time.
func DefaultLimits() Limits { return Limits{MinInstances: 1, MaxInstances: 100} }

// CheckRanges tells c each limit with its range: a range may depend on
// another limit (max_step at most max), never on anything outside them.
func (l Limits) CheckRanges(c RangeChecker) {
	c.Int(Range[int]{Key: "min", Value: l.MinInstances, Lo: 0, Hi: MaxFleet})
	c.Int(Range[int]{Key: "max", Value: l.MaxInstances, Lo: max(1, l.MinInstances), Hi: MaxFleet})
	c.Int(Range[int]{Key: "max_step", Value: l.MaxStep, Lo: 0, Hi: max(l.MaxInstances, 0), HiKey: "max"})
	c.Duration(Range[time.Duration]{Key: "min_interval", Value: l.MinInterval, Lo: 0, Hi: MaxMinInterval})
}

// Validate reports every limit outside its range, each error naming the
// YAML key (as a *RangeError).
func (l Limits) Validate() error { return RangeErrors(l.CheckRanges) }
