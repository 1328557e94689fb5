package volcengine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/volcengine/volcengine-go-sdk/service/ecs"
	"github.com/volcengine/volcengine-go-sdk/volcengine"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// ECSName is the registered name of the back-end whose pool is a fixed
// set of ECS instances (ECSPool) rather than a scaling group: teams that
// keep their GPU instances and start and stop them need no group.
const ECSName = "volcengine-ecs"

// OptInstanceIDs is the ECS pool's instances: a comma-separated list of
// instance IDs, in the order they are started (the last running ones are
// stopped first).
const OptInstanceIDs = "instance_ids"

// maxPoolInstances is how many instances an ECS pool may list: the most
// one DescribeInstances page returns (MaxResults, 1-100) and the most
// InstanceIds it filters on, so one read sees the whole pool.
const maxPoolInstances = 100

// instanceIDRE is what an ECS instance ID looks like ("i-" and letters
// and digits); anything else is a typo the API would answer with nothing.
var instanceIDRE = regexp.MustCompile(`^i-[A-Za-z0-9]{1,62}$`)

// ECSPoolOptions are the options of an ECS pool: the connection options
// it shares with the volcengine back-end (declared once, in PoolOptions)
// and instance_ids. Register them with NewECSFactory under ECSName.
var ECSPoolOptions = append(connectionOptions(), actuator.Option{
	Name: OptInstanceIDs, Kind: actuator.KindList, Required: true, Check: checkInstanceIDs,
	Help: "the pool's ECS instance IDs, comma-separated (1 to 100): started in this order, the last running ones stopped first (StopCharging); the stopped ones are the warm tier",
})

// connectionOptions are the options of PoolOptions that say how to reach
// the OpenAPI (configFor reads them), for the back-ends that share them.
func connectionOptions() actuator.OptionSet {
	var out actuator.OptionSet
	for _, o := range PoolOptions {
		if slices.Contains([]string{OptRegion, OptEndpoint, OptCredentialsFile, OptTimeout}, o.Name) {
			out = append(out, o)
		}
	}
	return out
}

// splitIDs splits instance_ids as the option's kind does (the actuator
// package's list decoding, so the check and the factory see one list).
func splitIDs(text string) []string {
	list := actuator.OptionSet{{Name: OptInstanceIDs, Kind: actuator.KindList}}
	v, _ := list.Decode(actuator.PoolConfig{Options: map[string]string{OptInstanceIDs: text}})
	return v.List(OptInstanceIDs)
}

// checkInstanceIDs is instance_ids' rule: 1 to maxPoolInstances
// well-formed IDs, none twice. The pool spec reports its error as
// pools[N].options.instance_ids.
func checkInstanceIDs(text string) error {
	return checkIDList(splitIDs(text))
}

func checkIDList(ids []string) error {
	switch {
	case len(ids) == 0:
		return errors.New("lists no instance ID: an ECS pool needs at least one")
	case len(ids) > maxPoolInstances:
		return fmt.Errorf("lists %d instance IDs: at most %d (one DescribeInstances page)", len(ids), maxPoolInstances)
	}
	for i, id := range ids {
		if !instanceIDRE.MatchString(id) {
			return fmt.Errorf("%q is not an ECS instance ID (i- followed by letters and digits)", id)
		}
		if slices.Contains(ids[:i], id) {
			return fmt.Errorf("lists %s twice", id)
		}
	}
	return nil
}

// ECSPool is a pool of a fixed set of ECS instances (instance_ids): its
// size is how many of them run. SetDesired starts stopped ones
// (StartInstances) in the order of instance_ids and stops the last
// running ones with StopCharging (Actuator.Stop, with its KeepCharging
// fallback); the stopped ones are the pool's warm tier, their image and
// weights on their disks, so a scale-out is a warm start. It is safe for
// concurrent use; wrap it in actuator.NewSafe as the other back-ends.
type ECSPool struct {
	a    *Actuator
	pool string
	ids  []string
	log  *slog.Logger

	// mu serialises the changes to the pool and guards desired.
	mu sync.Mutex
	// desired is the size SetDesired last asked for, when known.
	desired      int
	desiredKnown bool
}

var (
	_ actuator.Actuator   = (*ECSPool)(nil)
	_ actuator.WarmPooler = (*ECSPool)(nil)
)

// NewECSPool makes the ECS pool named pool of instanceIDs, reached through
// a. Errors name instance_ids.
func NewECSPool(a *Actuator, pool string, instanceIDs []string) (*ECSPool, error) {
	if err := checkIDList(instanceIDs); err != nil {
		return nil, fmt.Errorf("pool %q: options.%s: %w", pool, OptInstanceIDs, err)
	}
	return &ECSPool{a: a, pool: pool, ids: slices.Clone(instanceIDs),
		log: a.opts.Logger.With("backend", ECSName, "region", a.region, "pool", pool)}, nil
}

// NewECSFactory returns the actuator.Factory to register under ECSName
// with ECSPoolOptions. getenv is os.Getenv in production; logger may be
// nil. Credentials and region come as for the volcengine back-end.
func NewECSFactory(getenv func(string) string, logger *slog.Logger) actuator.Factory {
	return func(ctx context.Context, pool actuator.PoolConfig, opts actuator.OptionValues) (actuator.Actuator, error) {
		cfg, err := configFor(pool.Name, opts, getenv)
		if err != nil {
			return nil, err
		}
		a, err := New(cfg, Options{Logger: logger})
		if err != nil {
			return nil, err
		}
		ids := opts.List(OptInstanceIDs)
		if pool.Limits.MaxInstances > len(ids) {
			// The plans and the warm tier would ask for instances the pool
			// does not have, refused at every decision.
			return nil, fmt.Errorf("pool %q: max %d is more than the %d instances options.%s lists: an ECS pool cannot grow past them; lower max or list more instances",
				pool.Name, pool.Limits.MaxInstances, len(ids), OptInstanceIDs)
		}
		return NewECSPool(a, pool.Name, ids)
	}
}

// Name implements actuator.Actuator.
func (p *ECSPool) Name() string { return ECSName }

// InstanceIDs returns the pool's instances in the order of instance_ids.
func (p *ECSPool) InstanceIDs() []string { return slices.Clone(p.ids) }

// ecsUp are the ECS statuses of an instance that runs or is on its way to
// (counted in Current); of them only RUNNING serves.
var ecsUp = []string{"RUNNING", "STARTING", "CREATING", "REBOOTING"}

// poolState is the pool's instances by status, each list in the order of
// instance_ids.
type poolState struct {
	up, stopped []string
	ready       int
}

// read describes the pool's instances (DescribeInstances filtered by
// instance_ids, all pages) and sorts them by status. An ID the API does
// not return (released, or in another region) is an error naming
// instance_ids: the pool's bounds would be wrong.
func (p *ECSPool) read(ctx context.Context) (poolState, error) {
	status := map[string]string{}
	var next *string
	for page := 0; page < maxPages; page++ {
		req, out := p.a.ecs.DescribeInstancesRequest(&ecs.DescribeInstancesInput{
			InstanceIds: volcengine.StringSlice(p.ids),
			MaxResults:  volcengine.Int32(maxPoolInstances),
			NextToken:   next,
		})
		if _, err := p.a.send(ctx, "DescribeInstances", req); err != nil {
			return poolState{}, fmt.Errorf("pool %s: reading its instances: %w", p.pool, err)
		}
		for _, in := range out.Instances {
			if in != nil {
				status[volcengine.StringValue(in.InstanceId)] = volcengine.StringValue(in.Status)
			}
		}
		next = out.NextToken
		if len(out.Instances) == 0 || volcengine.StringValue(next) == "" {
			break
		}
	}
	var st poolState
	var missing []string
	for _, id := range p.ids {
		s, ok := status[id]
		switch {
		case !ok:
			missing = append(missing, id)
		case s == "STOPPED":
			st.stopped = append(st.stopped, id)
		case slices.Contains(ecsUp, s):
			st.up = append(st.up, id)
			if s == "RUNNING" {
				st.ready++
			}
		}
	}
	if len(missing) > 0 {
		return poolState{}, fmt.Errorf("volcengine: %w: pool %s: options.%s lists %s, which DescribeInstances does not return in region %s (released, in another region, or not readable with these credentials?)",
			actuator.ErrRejected, p.pool, OptInstanceIDs, strings.Join(missing, ", "), p.a.region)
	}
	return st, nil
}

// setKey is a short digest of a set of instance IDs, to tell apart the
// requests of one logical call that act on different instances.
func setKey(ids []string) string {
	h := fnv.New32a()
	for _, id := range ids {
		h.Write([]byte(id + ","))
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// Capacity implements actuator.Actuator: Current is the instances running
// or starting, Ready the RUNNING ones, Stopped the STOPPED ones (the warm
// tier), Max the number of instance_ids. Instances stopping, or in any
// other status, count in none of them.
func (p *ECSPool) Capacity(ctx context.Context, _ string) (actuator.Capacity, error) {
	st, err := p.read(ctx)
	if err != nil {
		return actuator.Capacity{}, err
	}
	return actuator.Capacity{
		Current: len(st.up), Ready: st.ready, ReadyKnown: true,
		Stopped: len(st.stopped), StoppedKnown: true,
		Desired: len(st.up), Min: 0, Max: len(p.ids),
	}, nil
}

// SetDesired implements actuator.Actuator. Above the running instances it
// starts the first stopped ones of instance_ids (one StartInstances);
// below, it stops the last running ones, one StopInstances each, with
// StopCharging and Stop's KeepCharging fallback. More than instance_ids
// lists is refused. When too few instances are stopped to start (some are
// still stopping) it starts those it can and returns an error wrapping
// actuator.ErrTransient, so a retry finishes the job.
func (p *ECSPool) SetDesired(ctx context.Context, _ string, desired int, reason string) error {
	switch {
	case desired < 0:
		return fmt.Errorf("volcengine: %w: pool %s: desired size %d is negative", actuator.ErrRejected, p.pool, desired)
	case desired > len(p.ids):
		return fmt.Errorf("volcengine: %w: pool %s: %d instances asked for, but options.%s lists %d; add instance IDs to it to grow the pool",
			actuator.ErrRejected, p.pool, desired, OptInstanceIDs, len(p.ids))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.desired, p.desiredKnown = desired, true
	st, err := p.read(ctx)
	if err != nil {
		return err
	}
	switch {
	case desired > len(st.up):
		need := desired - len(st.up)
		start := st.stopped[:min(need, len(st.stopped))]
		// A retry of the call may find other instances to start (some
		// were still stopping): its request gets a token of its own.
		if err := p.a.Start(actuator.WithIdempotencyToken(ctx, token(ctx, setKey(start))), start...); err != nil {
			return fmt.Errorf("pool %s: starting %s: %w", p.pool, strings.Join(start, ", "), err)
		}
		if len(start) < need {
			return fmt.Errorf("volcengine: %w: pool %s: %d more instances asked for, but only %d are stopped and can start (the others are stopping or in another status)",
				actuator.ErrTransient, p.pool, need, len(start))
		}
	case desired < len(st.up):
		for _, id := range slices.Backward(st.up[desired:]) {
			// One logical call stops several instances: each request gets
			// its own client token, the same on every retry of the call.
			if _, err := p.a.Stop(actuator.WithIdempotencyToken(ctx, token(ctx, id)), id, reason); err != nil {
				return fmt.Errorf("pool %s: stopping %s: %w", p.pool, id, err)
			}
		}
	default:
		return nil
	}
	p.log.InfoContext(ctx, "ECS pool resized", "from", len(st.up), "to", desired, "reason", reason)
	return nil
}

// SetWarm implements actuator.WarmPooler. An ECS pool's warm tier is its
// stopped instances: of N instance_ids, N minus the desired size stay
// stopped, so nothing is to be done, and warm is refused (wrapping
// actuator.ErrRejected, saying how many more instance IDs it needs) when
// N minus the desired size falls short of it. Before any SetDesired the
// desired size is the running instances.
func (p *ECSPool) SetWarm(ctx context.Context, pool string, warm int, reason string) error {
	if warm < 0 {
		return fmt.Errorf("volcengine: %w: pool %s: warm tier %d is negative", actuator.ErrRejected, p.pool, warm)
	}
	p.mu.Lock()
	desired, known := p.desired, p.desiredKnown
	p.mu.Unlock()
	if !known {
		c, err := p.Capacity(ctx, pool)
		if err != nil {
			return err
		}
		desired = c.Current
	}
	if spare := len(p.ids) - desired; warm > spare {
		return fmt.Errorf("volcengine: %w: pool %s: a warm tier of %d stopped instances beside %d serving needs %d more instance IDs in options.%s (it lists %d): an ECS pool's warm tier is its stopped instances",
			actuator.ErrRejected, p.pool, warm, desired, warm-spare, OptInstanceIDs, len(p.ids))
	}
	p.log.DebugContext(ctx, "ECS pool warm tier: its stopped instances", "warm", warm, "desired", desired, "instances", len(p.ids), "reason", reason)
	return nil
}

// PublishSchedule implements actuator.Actuator: an ECS pool has no
// scheduled policies to hand steps to.
func (p *ECSPool) PublishSchedule(context.Context, string, planner.Schedule) error {
	return actuator.ErrNotImplemented
}

// Release implements actuator.Actuator: it stops one of the pool's
// instances as the volcengine back-end does (Actuator.Release, with
// StopCharging), and refuses any other instance.
func (p *ECSPool) Release(ctx context.Context, instanceID, reason string) error {
	if !slices.Contains(p.ids, instanceID) {
		return fmt.Errorf("volcengine: %w: instance %s is not in pool %s's options.%s", actuator.ErrRejected, instanceID, p.pool, OptInstanceIDs)
	}
	return p.a.Release(ctx, instanceID, reason)
}
