package actuator

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// PoolConfig is what a back-end and the safety layer know about one pool:
// its name and back-end, the limits Safe enforces, and the back-end's
// options. It has no file format of its own: the forecaster's one pool spec
// (package spec, the `pools:` of its configuration file) fills it, with
// spec.Pool.Actuator, and reports bad values with their file and line.
type PoolConfig struct {
	// Name identifies the pool to the back-end (a scaling group ID, the
	// `pool` metadata of a KEDA ScaledObject, ...). Required.
	Name string
	// Backend is the registered back-end name ("volcengine", "keda",
	// "dryrun", "simulated"). Required.
	Backend string
	// Min and Max bound the desired size; Safe never asks for less than
	// Min or more than Max. 0 ≤ Min ≤ Max, Max ≥ 1.
	Min, Max int
	// MaxStep caps how many instances one change may add or remove.
	// 0 means no limit beyond [Min, Max].
	MaxStep int
	// MinInterval is the least time between two changes of the pool
	// (a per-pool rate limit). 0 means no limit.
	MinInterval time.Duration
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
	bad := func(field, format string, args ...any) error {
		name := c.Name
		if name == "" {
			name = "(unnamed)"
		}
		return &FieldError{Pool: name, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case strings.TrimSpace(c.Name) == "":
		return bad("name", "is required")
	case strings.TrimSpace(c.Backend) == "":
		return bad("backend", "is required")
	case c.Min < 0:
		return bad("min", "must be ≥ 0, got %d", c.Min)
	case c.Max < 1:
		return bad("max", "must be ≥ 1, got %d", c.Max)
	case c.Max < c.Min:
		return bad("max", "must be ≥ min (%d), got %d", c.Min, c.Max)
	case c.MaxStep < 0:
		return bad("max_step", "must be ≥ 0 (0 = no limit), got %d", c.MaxStep)
	case c.MinInterval < 0:
		return bad("min_interval", "must be ≥ 0, got %s", c.MinInterval)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
