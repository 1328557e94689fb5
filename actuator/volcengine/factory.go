package volcengine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
	"github.com/volcengine/volcengine-go-sdk/volcengine"
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
	// The group's spot mix (its InstancesDistribution), set with every
	// resize when any of them is given and the plan has no spot tier:
	// OptOnDemandBase instances always on demand, OptOnDemandPercentage of
	// those above the base on demand (the rest on spot), OptSpotRemedy to
	// replace a spot instance the cloud is about to reclaim,
	// OptCompensateWithOnDemand to launch on demand when spot is out of
	// stock. With a spot tier (the pool's spot block, SetSpot) the plan
	// sets the mix: these may only repeat it (SetSpot refuses one that
	// contradicts it), and OptSpotRemedy still chooses SpotInstanceRemedy.
	OptOnDemandBase           = "on_demand_base"
	OptOnDemandPercentage     = "on_demand_percentage"
	OptSpotRemedy             = "spot_remedy"
	OptCompensateWithOnDemand = "compensate_with_on_demand"
	// OptReleaseMode says how a release stops a member of the pool's
	// scaling group: ReleaseStop or ReleaseRecycle (RecycleMembers).
	OptReleaseMode = "release_mode"
	// OptSpotReturnAfter is Options.SpotReturnAfter: how long the move of
	// on-demand stand-ins back to spot (SettleSpot) waits after a probe
	// that found the zone still out of spot.
	OptSpotReturnAfter = "spot_return_after"
)

// The values of OptReleaseMode.
const (
	// ReleaseStop stops the instance with StopInstances (Stop), as for
	// any instance.
	ReleaseStop = "stop"
	// ReleaseRecycle removes a member from its group with RemoveInstances
	// in recycle mode (Recycle): the group keeps it stopped and starts it
	// first at its next scale-out.
	ReleaseRecycle = "recycle"
)

// PoolOptions are the pool options the factory reads; register them with
// it (actuator.Registry.Register), so the pool spec refuses any other key.
// Secrets never go here: credentials_file names the file they are in.
var PoolOptions = actuator.OptionSet{
	{Name: OptRegion, Kind: actuator.KindString, Help: "the region (overrides VOLCENGINE_REGION)"},
	{Name: OptEndpoint, Kind: actuator.KindString, Help: "the OpenAPI host or URL (overrides VOLCENGINE_ENDPOINT)"},
	{Name: OptCredentialsFile, Kind: actuator.KindFile, Help: "a credentials file, KEY=VALUE lines or JSON (the environment wins)"},
	{Name: OptScalingGroup, Kind: actuator.KindString, Help: "the scaling group ID (default: the pool's name)"},
	{Name: OptInstances, Kind: actuator.KindList, Help: "instance IDs the release hook may stop besides the group's members"},
	{Name: OptPolicyPrefix, Kind: actuator.KindString, Default: DefaultPolicyPrefix, Help: "the name prefix of prewarm's scheduled policies"},
	{Name: OptTimeout, Kind: actuator.KindDuration, Default: DefaultTimeout.String(), Min: "1ns", Help: "the per-call HTTP timeout"},
	{Name: OptOnDemandBase, Kind: actuator.KindInt, Min: "0", Max: "2000", Help: "instances of the group always on demand (InstancesDistribution.OnDemandBaseCapacity)"},
	{Name: OptOnDemandPercentage, Kind: actuator.KindInt, Min: "0", Max: "100", Help: "percent of the instances above the base on demand, the rest on spot (OnDemandPercentageAboveBaseCapacity)"},
	{Name: OptSpotRemedy, Kind: actuator.KindString, OneOf: []string{"true", "false"}, Help: "replace a spot instance before the cloud reclaims it (SpotInstanceRemedy)"},
	{Name: OptCompensateWithOnDemand, Kind: actuator.KindString, OneOf: []string{"true", "false"}, Help: "launch on demand when spot is out of stock (CompensateWithOnDemand)"},
	{Name: OptReleaseMode, Kind: actuator.KindString, OneOf: []string{ReleaseStop, ReleaseRecycle}, Default: ReleaseStop,
		Help: "how a release stops a member of the group: stop (StopInstances, StopCharging) or recycle (RemoveInstances, RemoveMode=recycle: kept stopped in the group, started first at its next scale-out)"},
	{Name: OptSpotReturnAfter, Kind: actuator.KindDuration, Default: DefaultSpotReturnAfter.String(), Min: "1m", Max: "24h",
		Help: "with a spot block and fallback on_demand: how long to wait before probing for spot again after a probe found the zone still out of stock (and how long a probe's launches may take to serve)"},
}

// distributionOf reads the spot-mix options; nil when none is set, which
// leaves the group's own InstancesDistribution alone.
func distributionOf(opts actuator.OptionValues) *Distribution {
	if !opts.Set(OptOnDemandBase) && !opts.Set(OptOnDemandPercentage) && !opts.Set(OptSpotRemedy) && !opts.Set(OptCompensateWithOnDemand) {
		return nil
	}
	d := &Distribution{}
	if opts.Set(OptOnDemandBase) {
		d.OnDemandBase = volcengine.Int32(int32(opts.Int(OptOnDemandBase)))
	}
	if opts.Set(OptOnDemandPercentage) {
		d.OnDemandPercentage = volcengine.Int32(int32(opts.Int(OptOnDemandPercentage)))
	}
	if opts.Set(OptSpotRemedy) {
		d.SpotRemedy = volcengine.Bool(opts.String(OptSpotRemedy) == "true")
	}
	if opts.Set(OptCompensateWithOnDemand) {
		d.CompensateWithOnDemand = volcengine.Bool(opts.String(OptCompensateWithOnDemand) == "true")
	}
	return d
}

// ConfigForPool builds the Config of one pool: the environment (getenv),
// the credentials file named by the pool's options, then the pool's
// region/endpoint/timeout options, which win. Options the pool's back-end
// refuses (PoolOptions, or ECSPoolOptions for an ECSName pool) are errors,
// each naming its `options.KEY`.
func ConfigForPool(pool actuator.PoolConfig, getenv func(string) string) (Config, error) {
	set := PoolOptions
	if pool.Backend == ECSName {
		set = ECSPoolOptions
	}
	opts, problems := set.Decode(pool)
	if err := actuator.OptionError(pool.Name, problems); err != nil {
		return Config{}, err
	}
	return configFor(pool.Name, opts, getenv)
}

// configFor builds a pool's Config from its decoded options.
func configFor(pool string, opts actuator.OptionValues, getenv func(string) string) (Config, error) {
	cfg, err := LoadConfig(opts.String(OptCredentialsFile), getenv)
	if err != nil {
		return Config{}, fmt.Errorf("pool %q: %w", pool, err)
	}
	if v := opts.String(OptRegion); v != "" {
		cfg.Region = v
	}
	if v := opts.String(OptEndpoint); v != "" {
		cfg.Endpoint = v
	}
	cfg.Timeout = opts.Duration(OptTimeout)
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("pool %q: %w", pool, err)
	}
	return cfg, nil
}

// NewFactory returns the actuator.Factory to register under Name. getenv
// is os.Getenv in production; logger may be nil.
//
//	reg.Register(volcengine.Name, volcengine.NewFactory(os.Getenv, logger), volcengine.PoolOptions)
//
// The pool's scaling group is its name unless the scaling_group option
// says otherwise; the returned Actuator then translates the pool name.
func NewFactory(getenv func(string) string, logger *slog.Logger) actuator.Factory {
	return func(ctx context.Context, pool actuator.PoolConfig, opts actuator.OptionValues) (actuator.Actuator, error) {
		cfg, err := configFor(pool.Name, opts, getenv)
		if err != nil {
			return nil, err
		}
		a, err := New(cfg, Options{Logger: logger, PolicyPrefix: opts.String(OptPolicyPrefix), Distribution: distributionOf(opts),
			SpotReturnAfter: opts.Duration(OptSpotReturnAfter)})
		if err != nil {
			return nil, err
		}
		if g := opts.String(OptScalingGroup); g != "" && g != pool.Name {
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

var (
	_ actuator.WarmPooler  = (*renamed)(nil)
	_ actuator.WarmSettler = (*renamed)(nil)
	_ actuator.SpotMixer   = (*renamed)(nil)
	_ actuator.SpotSettler = (*renamed)(nil)
)

func (r *renamed) id(pool string) string {
	if pool == r.pool {
		return r.group
	}
	return pool
}

func (r *renamed) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	return r.Actuator.Capacity(ctx, r.id(pool))
}

func (r *renamed) ReadyInstances(ctx context.Context, pool string) (int, bool) {
	return r.Actuator.ReadyInstances(ctx, r.id(pool))
}

func (r *renamed) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	return r.Actuator.SetDesired(ctx, r.id(pool), desired, reason)
}

func (r *renamed) SetWarm(ctx context.Context, pool string, warm int, reason string) error {
	return r.Actuator.SetWarm(ctx, r.id(pool), warm, reason)
}

func (r *renamed) SettleWarm(ctx context.Context, pool string) (bool, error) {
	return r.Actuator.SettleWarm(ctx, r.id(pool))
}

func (r *renamed) SetSpot(ctx context.Context, pool string, spot planner.Spot, reason string) error {
	return r.Actuator.SetSpot(ctx, r.id(pool), spot, reason)
}

func (r *renamed) SettleSpot(ctx context.Context, pool string) (bool, error) {
	return r.Actuator.SettleSpot(ctx, r.id(pool))
}

func (r *renamed) PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error {
	return r.Actuator.PublishSchedule(ctx, r.id(pool), steps)
}

// poolLookup returns the pool lookup of the volcengine and volcengine-ecs
// pools among pools: an instance belongs to the first pool that lists it
// in its instances option (an ECS pool: its instance_ids), or whose
// scaling group it is a member of (DescribeScalingInstances through
// act(pool), the Actuator that reaches the pool's group); "" when none.
// Pools of other back-ends are ignored.
func poolLookup(pools []actuator.PoolConfig, act func(pool string) *Actuator) func(ctx context.Context, instanceID string) (string, error) {
	type member struct {
		pool, group string
		a           *Actuator
	}
	listed := map[string]string{}
	var groups []member
	list := func(ids []string, pool string) {
		for _, id := range ids {
			if _, ok := listed[id]; !ok {
				listed[id] = pool
			}
		}
	}
	for _, p := range pools {
		switch p.Backend {
		case ECSName:
			// An ECS pool is its instance_ids: each of them is its member.
			opts, _ := ECSPoolOptions.Decode(p) // the pool spec has reported any problem
			list(opts.List(OptInstanceIDs), p.Name)
		case Name:
			opts, _ := PoolOptions.Decode(p) // the pool spec has reported any problem
			list(opts.List(OptInstances), p.Name)
			g := opts.String(OptScalingGroup)
			if g == "" {
				g = p.Name
			}
			groups = append(groups, member{pool: p.Name, group: g, a: act(p.Name)})
		}
	}
	return func(ctx context.Context, instanceID string) (string, error) {
		if pool, ok := listed[instanceID]; ok {
			return pool, nil
		}
		for _, m := range groups {
			in, err := m.a.InScalingGroup(ctx, m.group, instanceID)
			if err != nil {
				return "", fmt.Errorf("checking whether %s is in scaling group %s: %w", instanceID, m.group, err)
			}
			if in {
				return m.pool, nil
			}
		}
		return "", nil
	}
}
