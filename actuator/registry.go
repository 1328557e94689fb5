package actuator

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Factory builds a back-end for one pool from its configuration, reading
// back-end specific settings from cfg.Options and secrets from the
// environment or files. It should check its options and fail early with an
// error naming the option.
type Factory func(ctx context.Context, cfg PoolConfig) (Actuator, error)

// Registry maps back-end names to factories, as cluster-autoscaler's cloud
// provider builder or KEDA's scaler table do. Build one with NewRegistry in
// main and register the back-ends the binary ships; there is no global
// registry. A Registry is safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{factories: map[string]Factory{}}
}

// Register adds a back-end under name. Registering an empty name, a nil
// factory or a name twice is an error (a wiring mistake worth failing on).
func (r *Registry) Register(name string, f Factory) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("registering actuator back-end: empty name")
	}
	if f == nil {
		return fmt.Errorf("registering actuator back-end %q: nil factory", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.factories[name]; dup {
		return fmt.Errorf("registering actuator back-end %q: already registered", name)
	}
	r.factories[name] = f
	return nil
}

// Names lists the registered back-ends in alphabetical order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.factories)
}

// New builds the back-end registered under name for the pool cfg. It
// validates cfg first. An unknown name yields an error wrapping
// ErrUnknownBackend that lists the registered names.
func (r *Registry) New(ctx context.Context, name string, cfg PoolConfig) (Actuator, error) {
	r.mu.RLock()
	f, ok := r.factories[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q for pool %q (registered: %s)",
			ErrUnknownBackend, name, cfg.Name, strings.Join(r.Names(), ", "))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, err := f(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("building %s actuator for pool %q: %w", name, cfg.Name, err)
	}
	return a, nil
}
