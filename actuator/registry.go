package actuator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Factory builds a back-end for one pool from its configuration, reading
// back-end specific settings from cfg.Options and secrets from the
// environment or files. It should check its options' values and fail early
// with an error naming the option; unknown option keys never reach it
// (Registry.New refuses them).
type Factory func(ctx context.Context, cfg PoolConfig) (Actuator, error)

// Registry maps back-end names to factories and the option keys each
// accepts, as cluster-autoscaler's cloud provider builder or KEDA's scaler
// table do. Build one with NewRegistry in main and register the back-ends
// the binary ships; there is no global registry. A Registry is safe for
// concurrent use.
type Registry struct {
	mu       sync.RWMutex
	backends map[string]registered
}

type registered struct {
	factory Factory
	options []string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{backends: map[string]registered{}}
}

// Register adds a back-end under name with the option keys its factory
// reads (declared next to the factory, e.g. kubescale.OptionKeys); a pool
// of this back-end with any other option is refused, so a typo such as
// `namspace` cannot silently scale another workload. Registering an empty
// name, a nil factory or a name twice is an error (a wiring mistake worth
// failing on).
func (r *Registry) Register(name string, f Factory, optionKeys ...string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("registering actuator back-end: empty name")
	}
	if f == nil {
		return fmt.Errorf("registering actuator back-end %q: nil factory", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.backends[name]; dup {
		return fmt.Errorf("registering actuator back-end %q: already registered", name)
	}
	r.backends[name] = registered{factory: f, options: slices.Sorted(slices.Values(optionKeys))}
	return nil
}

// Names lists the registered back-ends in alphabetical order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.backends)
}

// New builds the back-end registered under name for the pool cfg. It
// validates cfg first, including its option keys. An unknown name yields an
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
	for _, k := range sortedKeys(cfg.Options) {
		if !slices.Contains(b.options, k) {
			return nil, &FieldError{Pool: cfg.Name, Field: "options." + k,
				Problem: fmt.Sprintf("unknown option of back-end %s (known: %s)", name, KnownList(b.options))}
		}
	}
	a, err := b.factory(ctx, cfg)
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
