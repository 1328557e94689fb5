package actuator

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// PoolConfig is what a back-end and the safety layer know about one pool:
// its name and back-end, the limits Safe enforces, and the back-end's
// options. It has no file format of its own: the forecaster's one pool spec
// (package poolspec, the `pools:` of its configuration file) fills it, with
// poolspec.Pool.Actuator, and reports bad values with their file and line.
type PoolConfig struct {
	// Name identifies the pool to the back-end (a scaling group ID, the
	// `pool` metadata of a KEDA ScaledObject, ...). Required.
	Name string
	// Backend is the registered back-end name ("volcengine", "keda",
	// "dryrun", "simulated"). Required.
	Backend string
	// Limits bound the desired size (Safe never asks for less than
	// MinInstances or more than MaxInstances), the instances one change
	// may add or remove (MaxStep, 0: no limit) and the least time between
	// two changes (MinInterval, 0: none). Their defaults and ranges are
	// planner.Limits'.
	planner.Limits
	// Options are back-end specific settings (region, endpoint, scaling
	// group, ...), read by the back-end's Factory; the keys a back-end
	// accepts are declared when it is registered. Never put secrets here:
	// they come from the environment or a file.
	Options map[string]string
}

// FieldError is a validation error naming the pool and the configuration
// key at fault. It matches ErrInvalidConfig with errors.Is.
type FieldError struct {
	Pool, Field, Problem string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%v: pool %q: %s: %s", ErrInvalidConfig, e.Pool, e.Field, e.Problem)
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidConfig }

// Validate checks a configuration built in code (the pool spec checks the
// same rules, and more, with file and line) and names the offending key in
// its error, which wraps ErrInvalidConfig.
func (c PoolConfig) Validate() error {
	name := c.Name
	if name == "" {
		name = "(unnamed)"
	}
	var first *FieldError
	bad := func(field, problem string) {
		if first == nil {
			first = &FieldError{Pool: name, Field: field, Problem: problem}
		}
	}
	switch {
	case strings.TrimSpace(c.Name) == "":
		bad("name", "is required")
	case strings.TrimSpace(c.Backend) == "":
		bad("backend", "is required")
	}
	c.Limits.CheckRanges(firstOutOfRange(bad))
	if first != nil {
		return first
	}
	return nil
}

// firstOutOfRange is a planner.RangeChecker that tells its function of
// each setting out of its range.
type firstOutOfRange func(key, problem string)

func (f firstOutOfRange) Int(r planner.Range[int]) {
	if !r.Contains() {
		f(r.Key, fmt.Sprintf("must be in [%d, %d], got %d", r.Lo, r.Hi, r.Value))
	}
}

func (f firstOutOfRange) Duration(r planner.Range[time.Duration]) {
	if !r.Contains() {
		f(r.Key, fmt.Sprintf("must be in [%s, %s], got %s", r.Lo, r.Hi, r.Value))
	}
}

func (f firstOutOfRange) Float(r planner.Range[float64]) {
	if !r.Contains() {
		f(r.Key, fmt.Sprintf("must be in %s, got %v", r.Want(), r.Value))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
