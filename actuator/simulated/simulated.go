package simulated

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// Name is the back-end's registered name.
const Name = "simulated"

// Options configure a Fleet.
type Options struct {
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// BootDelay is the time from launch until an instance is ready to
	// serve (a GPU node boots and loads its model: minutes).
	BootDelay time.Duration
}

// Instance is one simulated machine.
type Instance struct {
	ID         string
	Pool       string
	LaunchedAt time.Time
	ReadyAt    time.Time
}

// Fleet is a set of simulated pools. It is safe for concurrent use.
type Fleet struct {
	now       func() time.Time
	bootDelay time.Duration

	mu    sync.Mutex
	pools map[string]*pool
	seq   int
}

type pool struct {
	min, max  int
	desired   int
	instances []Instance // in launch order
	schedule  planner.Schedule
	billed    time.Duration // instance-time of removed instances
	// asOf is when the pool was last reconciled; a scheduled step found
	// due later takes effect at its own time, but never before asOf.
	asOf time.Time
}

var _ actuator.Actuator = (*Fleet)(nil)

// New returns an empty fleet.
func New(opts Options) *Fleet {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Fleet{now: opts.Now, bootDelay: opts.BootDelay, pools: map[string]*pool{}}
}

// AddPool adds a pool with ready instances already running and bounds
// [min, max] (max 0: unbounded). Adding an existing pool resets it.
func (f *Fleet) AddPool(name string, ready, min, max int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	p := &pool{min: min, max: max, desired: ready, asOf: now}
	for range ready {
		p.instances = append(p.instances, f.launch(name, now, now))
	}
	f.pools[name] = p
}

// Name returns "simulated".
func (f *Fleet) Name() string { return Name }

// Capacity reports the pool's instances (booting and ready), desired size
// and bounds. An unknown pool is actuator.ErrRejected.
func (f *Fleet) Capacity(ctx context.Context, name string) (actuator.Capacity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return actuator.Capacity{}, err
	}
	return actuator.Capacity{Current: len(p.instances), Ready: p.ready(f.now()), ReadyKnown: true,
		Desired: p.desired, Min: p.min, Max: p.max}, nil
}

// SetDesired launches or removes instances to reach desired. Values
// outside the pool's bounds are rejected, as a cloud API would.
func (f *Fleet) SetDesired(ctx context.Context, name string, desired int, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return err
	}
	if desired < p.min || (p.max > 0 && desired > p.max) {
		return fmt.Errorf("simulated: pool %q: desired %d outside [%d, %d]: %w", name, desired, p.min, p.max, actuator.ErrRejected)
	}
	p.desired = desired
	f.reconcile(name, p, f.now())
	return nil
}

// PublishSchedule replaces the pool's scheduled steps; each takes effect
// when the clock reaches its time.
func (f *Fleet) PublishSchedule(ctx context.Context, name string, steps planner.Schedule) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return err
	}
	now := f.now()
	p.schedule = slices.Clone(steps)
	p.asOf = later(now, p.asOf) // steps already past take effect now, not back-dated
	f.applyDue(name, p, now)
	return nil
}

// Release removes the instance and lowers its pool's desired size by one
// so it is not replaced. An unknown instance is actuator.ErrRejected.
func (f *Fleet) Release(ctx context.Context, instanceID, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	for _, name := range f.sortedPools() {
		p := f.pools[name]
		f.applyDue(name, p, now)
		for i, in := range p.instances {
			if in.ID == instanceID {
				p.billed += now.Sub(in.LaunchedAt)
				p.instances = slices.Delete(p.instances, i, i+1)
				if p.desired > p.min {
					p.desired--
				}
				f.reconcile(name, p, now)
				return nil
			}
		}
	}
	return fmt.Errorf("simulated: instance %q not found: %w", instanceID, actuator.ErrRejected)
}

// Instances returns the pool's instances in launch order.
func (f *Fleet) Instances(name string) []Instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return nil
	}
	return slices.Clone(p.instances)
}

// Ready counts the pool's instances whose boot delay has passed.
func (f *Fleet) Ready(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return 0
	}
	return p.ready(f.now())
}

// ready counts the instances whose boot delay has passed at now.
func (p *pool) ready(now time.Time) int {
	n := 0
	for _, in := range p.instances {
		if !now.Before(in.ReadyAt) {
			n++
		}
	}
	return n
}

// Billed is the instance-time the pool has used so far (launch to removal,
// or to now for running instances): what the cloud would bill.
func (f *Fleet) Billed(name string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return 0
	}
	now, total := f.now(), p.billed
	for _, in := range p.instances {
		total += now.Sub(in.LaunchedAt)
	}
	return total
}

// Factory returns an actuator.Factory that adds each configured pool to
// this fleet (options: "initial", the ready instances at start) and
// returns the fleet, so the demo can watch every pool in one place.
func (f *Fleet) Factory() actuator.Factory {
	return func(ctx context.Context, cfg actuator.PoolConfig) (actuator.Actuator, error) {
		initial := cfg.Min
		if v, ok := cfg.Options["initial"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < cfg.Min || n > cfg.Max {
				return nil, fmt.Errorf("pool %q: options.initial: want a count in [%d, %d], got %q", cfg.Name, cfg.Min, cfg.Max, v)
			}
			initial = n
		}
		f.AddPool(cfg.Name, initial, cfg.Min, cfg.Max)
		return f, nil
	}
}

// pool looks a pool up after applying the steps that fell due. f.mu held.
func (f *Fleet) pool(name string) (*pool, error) {
	p, ok := f.pools[name]
	if !ok {
		return nil, fmt.Errorf("simulated: pool %q not found: %w", name, actuator.ErrRejected)
	}
	f.applyDue(name, p, f.now())
	return p, nil
}

// applyDue applies, in order, every scheduled step whose time has come,
// each at its own time (or at the pool's last reconcile, if later), so
// instances a step launched and a later step removed are billed for the
// time between them even when nobody looked at the fleet in between.
func (f *Fleet) applyDue(name string, p *pool, now time.Time) {
	for len(p.schedule) > 0 && !p.schedule[0].At.After(now) {
		st := p.schedule[0]
		p.schedule = p.schedule[1:]
		d := max(st.Desired, p.min)
		if p.max > 0 {
			d = min(d, p.max)
		}
		p.desired = d
		f.reconcile(name, p, later(st.At, p.asOf))
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// reconcile launches or removes instances to match desired, removing
// booting instances before ready ones and newest first.
func (f *Fleet) reconcile(name string, p *pool, now time.Time) {
	p.asOf = later(now, p.asOf)
	for len(p.instances) < p.desired {
		p.instances = append(p.instances, f.launch(name, now, now.Add(f.bootDelay)))
	}
	for len(p.instances) > p.desired {
		last := p.instances[len(p.instances)-1]
		p.billed += now.Sub(last.LaunchedAt)
		p.instances = p.instances[:len(p.instances)-1]
	}
}

func (f *Fleet) launch(pool string, at, readyAt time.Time) Instance {
	f.seq++
	return Instance{ID: fmt.Sprintf("sim-%s-%04d", pool, f.seq), Pool: pool, LaunchedAt: at, ReadyAt: readyAt}
}

func (f *Fleet) sortedPools() []string {
	names := make([]string, 0, len(f.pools))
	for n := range f.pools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
