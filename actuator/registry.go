package actuator

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Factory builds a back-end for one pool from its configuration and its
// options, already decoded and checked by the back-end's OptionSet (so a
// factory never parses option text), reading secrets from the environment
// or files. What it still checks (a file that does not read, a setting
// only the environment can supply) it reports naming the option.
type Factory func(ctx context.Context, cfg PoolConfig, opts OptionValues) (Actuator, error)

// Registry maps back-end names to factories and the options each
// declares, as cluster-autoscaler's cloud provider builder or KEDA's scaler
// table do. Build one with NewRegistry in main and register the back-ends
// the binary ships; there is no global registry. A Registry is safe for
// concurrent use.
type Registry struct {
	mu       sync.RWMutex
	backends map[string]registered
}

type registered struct {
	factory Factory
	options OptionSet
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{backends: map[string]registered{}}
}

// Register adds a back-end under name with the options its factory reads
// (declared next to the factory, e.g. kubescale.PoolOptions); a pool of
// this back-end with any other option, or a value its declaration refuses,
// is refused, so a typo such as `namspace` cannot silently scale another
// workload. Registering an empty name, a nil factory, a name twice or an
// invalid declaration is an error (a wiring mistake worth failing on).
func (r *Registry) Register(name string, f Factory, options OptionSet) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("registering actuator back-end: empty name")
	}
	if f == nil {
		return fmt.Errorf("registering actuator back-end %q: nil factory", name)
	}
	if err := options.Validate(); err != nil {
		return fmt.Errorf("registering actuator back-end %q: %w", name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.backends[name]; dup {
		return fmt.Errorf("registering actuator back-end %q: already registered", name)
	}
	r.backends[name] = registered{factory: f, options: options}
	return nil
}

// Names lists the registered back-ends in alphabetical order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.backends)
}

// New builds the back-end registered under name for the pool cfg. It
// validates cfg first and decodes its options; their problems, every one,
// are FieldErrors naming `options.KEY`. An unknown name yields an
// error wrapping ErrUnknownBackend that lists the registered names.
func (r *Registry) New(ctx context.Context, name string, cfg PoolConfig) (Actuator, error) {
	r.mu.RLock()
	b, ok := r.backends[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q for pool %q (registered: %s)",
			ErrUnknownBackend, name, cfg.Name, strings.Join(r.Names(), ", "))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	named := cfg
	named.Backend = name // the back-end that unknown keys are said to be unknown to
	opts, problems := b.options.Decode(named)
	if err := OptionError(cfg.Name, problems); err != nil {
		return nil, err
	}
	a, err := b.factory(ctx, cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("building %s actuator for pool %q: %w", name, cfg.Name, err)
	}
	return a, nil
}

// KnownList renders option keys for an error message ("none" when empty).
func KnownList(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}
