package volcengine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// Pool options (actuator.PoolConfig.Options) the factory reads. Secrets
// never go here.
const (
	// OptRegion overrides VOLCENGINE_REGION for the pool.
	OptRegion = "region"
	// OptEndpoint overrides VOLCENGINE_ENDPOINT for the pool.
	OptEndpoint = "endpoint"
	// OptCredentialsFile names a credentials file (see LoadConfig).
	OptCredentialsFile = "credentials_file"
	// OptScalingGroup is the scaling group ID when the pool name is not.
	OptScalingGroup = "scaling_group"
	// OptInstances is a comma-separated list of instance IDs that may be
	// released through this pool besides the group's members.
	OptInstances = "instances"
	// OptPolicyPrefix overrides DefaultPolicyPrefix.
	OptPolicyPrefix = "policy_prefix"
	// OptTimeout is the per-call HTTP timeout (a Go duration).
	OptTimeout = "timeout"
)

// OptionKeys are the pool options the factory reads; register them with
// it (actuator.Registry.Register), so the pool spec refuses any other key.
var OptionKeys = []string{OptRegion, OptEndpoint, OptCredentialsFile, OptScalingGroup, OptInstances, OptPolicyPrefix, OptTimeout}

// ConfigForPool builds the Config of one pool: the environment (getenv),
// the credentials file named by the pool's options, then the pool's
// region/endpoint/timeout options, which win. Unknown options are errors.
func ConfigForPool(pool actuator.PoolConfig, getenv func(string) string) (Config, error) {
	for k := range pool.Options {
		if !contains(OptionKeys, k) {
			return Config{}, fmt.Errorf("pool %q: options: unknown option %q (known: %s)", pool.Name, k, strings.Join(OptionKeys, ", "))
		}
	}
	cfg, err := LoadConfig(pool.Options[OptCredentialsFile], getenv)
	if err != nil {
		return Config{}, fmt.Errorf("pool %q: %w", pool.Name, err)
	}
	if v := pool.Options[OptRegion]; v != "" {
		cfg.Region = v
	}
	if v := pool.Options[OptEndpoint]; v != "" {
		cfg.Endpoint = v
	}
	if v := pool.Options[OptTimeout]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("pool %q: options: timeout %q is not a positive duration", pool.Name, v)
		}
		cfg.Timeout = d
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("pool %q: %w", pool.Name, err)
	}
	return cfg, nil
}

// NewFactory returns the actuator.Factory to register under Name. getenv
// is os.Getenv in production; logger may be nil.
//
//	reg.Register(volcengine.Name, volcengine.NewFactory(os.Getenv, logger), volcengine.OptionKeys...)
//
// The pool's scaling group is its name unless the scaling_group option
// says otherwise; the returned Actuator then translates the pool name.
func NewFactory(getenv func(string) string, logger *slog.Logger) actuator.Factory {
	return func(ctx context.Context, pool actuator.PoolConfig) (actuator.Actuator, error) {
		cfg, err := ConfigForPool(pool, getenv)
		if err != nil {
			return nil, err
		}
		a, err := New(cfg, Options{Logger: logger, PolicyPrefix: pool.Options[OptPolicyPrefix]})
		if err != nil {
			return nil, err
		}
		if g := pool.Options[OptScalingGroup]; g != "" && g != pool.Name {
			return &renamed{Actuator: a, pool: pool.Name, group: g}, nil
		}
		return a, nil
	}
}

// renamed maps a pool name to a different scaling group ID.
type renamed struct {
	*Actuator
	pool, group string
}

func (r *renamed) id(pool string) string {
	if pool == r.pool {
		return r.group
	}
	return pool
}

func (r *renamed) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	return r.Actuator.Capacity(ctx, r.id(pool))
}

func (r *renamed) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	return r.Actuator.SetDesired(ctx, r.id(pool), desired, reason)
}

func (r *renamed) PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error {
	return r.Actuator.PublishSchedule(ctx, r.id(pool), steps)
}

// AllowedByPools returns the release allow-check for the volcengine pools
// of a configuration: an instance may be released when a pool lists it in
// its instances option, or when it is a member of a pool's scaling group
// (DescribeScalingInstances through a). Pools of other back-ends are
// ignored. The check's signature is releasehook.Allow's.
func AllowedByPools(a *Actuator, pools []actuator.PoolConfig) func(ctx context.Context, instanceID string) (bool, error) {
	var listed []string
	var groups []string
	for _, p := range pools {
		if p.Backend != Name {
			continue
		}
		for _, id := range strings.Split(p.Options[OptInstances], ",") {
			if id = strings.TrimSpace(id); id != "" {
				listed = append(listed, id)
			}
		}
		g := p.Options[OptScalingGroup]
		if g == "" {
			g = p.Name
		}
		groups = append(groups, g)
	}
	return func(ctx context.Context, instanceID string) (bool, error) {
		if contains(listed, instanceID) {
			return true, nil
		}
		for _, g := range groups {
			in, err := a.InScalingGroup(ctx, g, instanceID)
			if err != nil {
				return false, fmt.Errorf("checking whether %s is in scaling group %s: %w", instanceID, g, err)
			}
			if in {
				return true, nil
			}
		}
		return false, nil
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
