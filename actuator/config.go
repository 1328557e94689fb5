package actuator

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// PoolConfig is the per-pool configuration every back-end and the safety
// layer share. It is usually read from YAML:
//
//	pools:
//	  - name: sd-pool            # the back-end's pool: scaling group ID, KEDA pool, ...
//	    backend: volcengine      # a name registered in the Registry
//	    min: 1
//	    max: 16
//	    max_step: 4              # at most 4 instances added or removed per change
//	    min_interval: 2m         # at most one change every 2 minutes
//	    options:                 # back-end specific, read by its Factory
//	      region: cn-beijing
type PoolConfig struct {
	// Name identifies the pool to the back-end (a scaling group ID, the
	// `pool` metadata of a KEDA ScaledObject, ...). Required.
	Name string `yaml:"name"`
	// Backend is the registered back-end name ("volcengine", "keda",
	// "dryrun", "simulated"). Required.
	Backend string `yaml:"backend"`
	// Min and Max bound the desired size; Safe never asks for less than
	// Min or more than Max. 0 ≤ Min ≤ Max, Max ≥ 1.
	Min int `yaml:"min"`
	Max int `yaml:"max"`
	// MaxStep caps how many instances one change may add or remove.
	// 0 means no limit beyond [Min, Max].
	MaxStep int `yaml:"max_step"`
	// MinInterval is the least time between two changes of the pool
	// (a per-pool rate limit). 0 means no limit.
	MinInterval time.Duration `yaml:"min_interval"`
	// Options are back-end specific settings (region, endpoint, scaling
	// group, ...), read by the back-end's Factory. Never put secrets here:
	// they come from the environment or a file.
	Options map[string]string `yaml:"options"`
}

// FieldError is a validation error naming the pool and the YAML field at
// fault. It matches ErrInvalidConfig with errors.Is.
type FieldError struct {
	Pool, Field, Problem string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%v: pool %q: %s: %s", ErrInvalidConfig, e.Pool, e.Field, e.Problem)
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidConfig }

// poolConfigFields are the YAML keys PoolConfig accepts; any other key is a
// typo and is reported with its line.
var poolConfigFields = []string{"name", "backend", "min", "max", "max_step", "min_interval", "options"}

// Validate checks the configuration and names the offending field in its
// error, which wraps ErrInvalidConfig.
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

// UnmarshalYAML decodes a pool, rejects unknown keys and validates it, so a
// bad configuration is reported with its line as soon as it is read.
func (c *PoolConfig) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("%w: line %d: a pool must be a mapping", ErrInvalidConfig, node.Line)
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key := node.Content[i]
		if !contains(poolConfigFields, key.Value) {
			return fmt.Errorf("%w: line %d: unknown field %q (known: %s)",
				ErrInvalidConfig, key.Line, key.Value, strings.Join(poolConfigFields, ", "))
		}
	}
	type plain PoolConfig // no UnmarshalYAML: avoids recursion
	var p plain
	if err := node.Decode(&p); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err) // yaml's message names the line
	}
	cfg := PoolConfig(p)
	if err := cfg.Validate(); err != nil {
		line := node.Line
		var fe *FieldError
		if errors.As(err, &fe) {
			for i := 0; i+1 < len(node.Content); i += 2 {
				if node.Content[i].Value == fe.Field {
					line = node.Content[i].Line
				}
			}
		}
		return fmt.Errorf("line %d: %w", line, err)
	}
	*c = cfg
	return nil
}

// Config is a document listing pools, the `pools:` section of prewarm's
// configuration.
type Config struct {
	Pools []PoolConfig `yaml:"pools"`
}

// ParseConfig reads a Config from YAML. source names the file in errors.
// Unknown keys, invalid pools and duplicate pool names are errors.
func ParseConfig(data []byte, source string) (Config, error) {
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, fmt.Errorf("%s: %w: no pools", source, ErrInvalidConfig)
		}
		return Config{}, fmt.Errorf("%s: %w", source, err)
	}
	if len(cfg.Pools) == 0 {
		return Config{}, fmt.Errorf("%s: %w: pools: at least one pool is required", source, ErrInvalidConfig)
	}
	seen := map[string]bool{}
	for _, p := range cfg.Pools {
		if seen[p.Name] {
			return Config{}, fmt.Errorf("%s: %w: pool %q: name: defined twice", source, ErrInvalidConfig, p.Name)
		}
		seen[p.Name] = true
	}
	return cfg, nil
}

// LoadConfig reads and parses a pools file.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading actuator config: %w", err)
	}
	return ParseConfig(data, path)
}

// Pool returns the configuration of the named pool.
func (c Config) Pool(name string) (PoolConfig, bool) {
	for _, p := range c.Pools {
		if p.Name == name {
			return p, true
		}
	}
	return PoolConfig{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
