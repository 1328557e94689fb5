package datasets

import (
	"fmt"
	"math"
	"time"
)

// Bounds on what a command may allocate from the numbers a user types,
// checked before anything is allocated, so that a typo (--step 1ns,
// --boot 30000h, --max 1000000000) is a message naming the flag instead of
// minutes of work or an out-of-memory kill. Commands call StepsIn for
// every span they turn into steps (history, horizon, boot delay,
// synthetic days) and CheckCells for every table of steps × instances.
const (
	// MaxSteps bounds the steps of one series: 10 million, 116 days at a
	// 1 s step or 19 years at 1 min (80 MB of float64).
	MaxSteps = 10_000_000
	// MaxCells bounds steps × instances in one simulation or plan: 200
	// million cells (1.6 GB of float64).
	MaxCells = 200_000_000
	// MaxDays bounds a number of days typed on a command line (synthetic
	// demand, history): 100 years.
	MaxDays = 36_500
)

// StepsIn returns how many whole steps of step fit in span, refusing, with
// a message naming the flags, a span or step that is not positive and a
// count above MaxSteps. spanFlag and stepFlag are the flags the two came
// from ("--history", "--step").
func StepsIn(span time.Duration, spanFlag string, step time.Duration, stepFlag string) (int, error) {
	switch {
	case step <= 0:
		return 0, fmt.Errorf("%s %v must be positive", stepFlag, step)
	case span <= 0:
		return 0, fmt.Errorf("%s %v must be positive", spanFlag, span)
	}
	n := span / step
	if n > MaxSteps {
		return 0, fmt.Errorf("%s %v at %s %v is %d steps, more than %d: shorten %s or use a coarser %s",
			spanFlag, span, stepFlag, step, n, MaxSteps, spanFlag, stepFlag)
	}
	return int(n), nil
}

// DaysSpan returns days as a duration, refusing fewer than 1 and more than
// MaxDays, naming flag ("--synthetic-days").
func DaysSpan(days int, flag string) (time.Duration, error) {
	if days < 1 || days > MaxDays {
		return 0, fmt.Errorf("%s %d: want 1 to %d days", flag, days, MaxDays)
	}
	return time.Duration(days) * 24 * time.Hour, nil
}

// CheckCells refuses a table of steps × instances above MaxCells (or with
// a negative side), naming instancesFlag ("--max") and what the steps are
// ("28 days at 1m").
func CheckCells(steps int, stepsWhat string, instances int, instancesFlag string) error {
	switch {
	case steps < 0 || instances < 0:
		return fmt.Errorf("%s %d: must not be negative", instancesFlag, instances)
	case steps == 0 || instances == 0:
		return nil
	case float64(steps)*float64(instances) > MaxCells || instances > math.MaxInt/steps:
		return fmt.Errorf("%s %d over %d steps (%s) is %.3g cells, more than %d: lower %s or use a coarser step",
			instancesFlag, instances, steps, stepsWhat, float64(steps)*float64(instances), MaxCells, instancesFlag)
	}
	return nil
}
