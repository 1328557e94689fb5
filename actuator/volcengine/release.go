package volcengine

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	"github.com/prewarm/prewarm/actuator"
)

// ReleaseSettings are the command-line settings of a one-off release
// ('forecaster release'): they win over the pools' options and the
// environment.
type ReleaseSettings struct {
	// Credentials is the credentials file named on the command line; a
	// pool without its own credentials_file reads it.
	Credentials string
	// Region and Endpoint, when set, override everything else.
	Region, Endpoint string
}

// ReleaseConfig is the connection of a one-off release outside any
// configuration: base (the environment over the --credentials file,
// LoadConfig), then the settings' Region and Endpoint. The result is
// validated. With a configuration, each pool connects as its own
// options say (BuildReleases).
func ReleaseConfig(base Config, set ReleaseSettings) (Config, error) {
	cfg := base
	if set.Region != "" {
		cfg.Region = set.Region
	}
	if set.Endpoint != "" {
		cfg.Endpoint = set.Endpoint
	}
	return cfg, cfg.Validate()
}

// apply returns pool with the settings in its options, the pool's own
// options otherwise unchanged (a copy): the credentials file for a pool
// without credentials_file, the region and the endpoint over the pool's.
func (set ReleaseSettings) apply(pool actuator.PoolConfig) actuator.PoolConfig {
	if pool.Options[OptCredentialsFile] == "" && set.Credentials != "" {
		pool.Options = withOption(pool.Options, OptCredentialsFile, set.Credentials)
	}
	if set.Region != "" {
		pool.Options = withOption(pool.Options, OptRegion, set.Region)
	}
	if set.Endpoint != "" {
		pool.Options = withOption(pool.Options, OptEndpoint, set.Endpoint)
	}
	return pool
}

// withOption returns a copy of opts with key set.
func withOption(opts map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(opts)+1)
	maps.Copy(out, opts)
	out[key] = value
	return out
}

// Releases is the release path of the volcengine and volcengine-ecs pools
// of a configuration, each pool through its own back-end (its region, its
// credentials): Locate finds the pool an instance belongs to, asking each
// scaling group through its own pool's Actuator, and For is the back-end
// that releases that pool's instances: an ECS pool's ECSPool (which stops
// only its instance_ids), a group pool's Actuator, recycling the group's
// members where its release_mode is recycle (RecycleMembers). A
// configuration of ECS pools only, or of both kinds, releases each
// instance where it belongs.
type Releases struct {
	locate func(ctx context.Context, instanceID string) (string, error)
	by     map[string]actuator.Actuator
}

// NewReleases makes the release path of the volcengine and
// volcengine-ecs pools among pools, each through backend(pool), its
// back-end as NewFactory or NewECSFactory built it; pools of other
// back-ends are left out. A pool whose back-end is missing or of another
// kind is an error naming the pool.
func NewReleases(pools []actuator.PoolConfig, backend func(pool string) actuator.Actuator) (*Releases, error) {
	r := &Releases{by: map[string]actuator.Actuator{}}
	groups := map[string]*Actuator{}
	for _, p := range pools {
		b := backend(p.Name)
		switch p.Backend {
		case ECSName:
			ep, ok := b.(*ECSPool)
			if !ok {
				return nil, fmt.Errorf("pool %q: its %s back-end is %T, not an ECS pool: cannot release its instances", p.Name, ECSName, b)
			}
			r.by[p.Name] = ep
		case Name:
			var a *Actuator
			switch v := b.(type) {
			case *Actuator:
				a = v
			case *renamed:
				a = v.Actuator
			}
			if a == nil {
				return nil, fmt.Errorf("pool %q: its %s back-end is %T, not a scaling group's: cannot release its instances", p.Name, Name, b)
			}
			groups[p.Name] = a
			r.by[p.Name] = RecycleMembers(a, []actuator.PoolConfig{p})
		}
	}
	r.locate = poolLookup(pools, func(pool string) *Actuator { return groups[pool] })
	return r, nil
}

// BuildReleases builds the back-end of each volcengine and volcengine-ecs
// pool among pools for a one-off release ('forecaster release --config'),
// as its factory does (NewFactory, NewECSFactory) with the command line's
// settings applied first (ReleaseSettings), and returns their release
// path and the keys of their credentials, for a redactor. getenv is
// os.Getenv in production; logger may be nil. A pool that cannot connect
// (no region, no key, an option its back-end refuses) is an error naming
// it.
func BuildReleases(ctx context.Context, pools []actuator.PoolConfig, set ReleaseSettings, getenv func(string) string,
	logger *slog.Logger) (*Releases, []string, error) {
	built := map[string]actuator.Actuator{}
	var ours []actuator.PoolConfig
	var keys []string
	for _, p := range pools {
		if p.Backend != Name && p.Backend != ECSName {
			continue
		}
		p = set.apply(p)
		cfg, err := ConfigForPool(p, getenv) // the options checked, named in the error
		if err != nil {
			return nil, keys, err
		}
		keys = append(keys, cfg.AccessKey, cfg.SecretKey.Reveal())
		options, factory := PoolOptions, NewFactory(getenv, logger)
		if p.Backend == ECSName {
			options, factory = ECSPoolOptions, NewECSFactory(getenv, logger)
		}
		opts, _ := options.Decode(p)
		if built[p.Name], err = factory(ctx, p, opts); err != nil {
			return nil, keys, err
		}
		ours = append(ours, p)
	}
	r, err := NewReleases(ours, func(pool string) actuator.Actuator { return built[pool] })
	return r, keys, err
}

// Locate names the pool instanceID belongs to, "" when none: the first
// pool that lists it (an ECS pool's instance_ids, a group pool's
// instances option), else the first group pool whose scaling group it is
// a member of. Its signature is releasehook.Locate's.
func (r *Releases) Locate(ctx context.Context, instanceID string) (string, error) {
	return r.locate(ctx, instanceID)
}

// PoolOf is Locate refusing an instance in none of the pools; source
// names the configuration in the error ('forecaster release --config').
func (r *Releases) PoolOf(ctx context.Context, instanceID, source string) (string, error) {
	pool, err := r.Locate(ctx, instanceID)
	if err != nil {
		return "", err
	}
	if pool == "" {
		return "", fmt.Errorf("instance %s is not in a volcengine pool of %s; refusing to release it", instanceID, source)
	}
	return pool, nil
}

// For is the back-end that releases pool's instances, nil for a pool
// that is not one of the release path's.
func (r *Releases) For(pool string) actuator.Actuator { return r.by[pool] }

// Len is how many pools the release path has.
func (r *Releases) Len() int { return len(r.by) }
