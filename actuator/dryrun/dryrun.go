package dryrun

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// Name is the back-end's registered name.
const Name = "dryrun"

// DryRun logs calls instead of making them. It is safe for concurrent use.
//
// Its fleet is imaginary: a pool has the size it was last set to, at once
// and all of it ready (instant success), the size Seed gave it, or after
// a restart the last size the service set it to (Resume). A pool
// nothing has sized (a forecast-only or paused pool, which is never set,
// without the option initial) has no size to report: Capacity says so with
// actuator.ErrNotImplemented, as a back-end that cannot report its size
// does, so that the service shows no ready instances and no shortage that
// exist only because nothing was applied.
type DryRun struct {
	log      *slog.Logger
	mu       sync.Mutex
	pools    map[string]*actuator.Capacity
	bounds   map[string][2]int // min and max of pools without a size yet
	schedule map[string]planner.Schedule
	spot     map[string]planner.Spot
	released []string
}

var _ actuator.Actuator = (*DryRun)(nil)

// New returns a DryRun logging to log (nil: slog.Default()).
func New(log *slog.Logger) *DryRun {
	if log == nil {
		log = slog.Default()
	}
	return &DryRun{log: log.With("backend", Name), pools: map[string]*actuator.Capacity{},
		bounds: map[string][2]int{}, schedule: map[string]planner.Schedule{}, spot: map[string]planner.Spot{}}
}

// Seed sets a pool's starting size and bounds (max 0: unbounded), as if
// read from a real fleet.
func (d *DryRun) Seed(pool string, current, min, max int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pools[pool] = &actuator.Capacity{Current: current, Desired: current, Min: min, Max: max}
}

// Resume gives a pool that has no size yet the size size, as if it had
// been set to it: a service restarting on its state file tells it the
// last change it applied, so the pool reads what it was set to, all of it
// ready, instead of no size until the next change. A pool with a size
// keeps it.
func (d *DryRun) Resume(pool string, size int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.pools[pool]; ok || size < 0 {
		return
	}
	b := d.bounds[pool]
	d.pools[pool] = &actuator.Capacity{Current: size, Desired: size, Min: b[0], Max: b[1]}
}

// Name returns "dryrun".
func (d *DryRun) Name() string { return Name }

// Bound gives a pool that has no size yet the back-end's bounds (max 0:
// unbounded), which its first SetDesired keeps.
func (d *DryRun) Bound(pool string, min, max int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bounds[pool] = [2]int{min, max}
}

// Capacity returns what the pool was last set to or seeded with, every
// instance ready. A pool never set nor seeded has no size:
// actuator.ErrNotImplemented (see DryRun).
func (d *DryRun) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.pools[pool]; ok {
		return *c, nil
	}
	return actuator.Capacity{}, fmt.Errorf("%w: dry run: pool %q has not been set to a size yet (nothing applied)", actuator.ErrNotImplemented, pool)
}

// SetDesired logs the change and remembers it.
func (d *DryRun) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	d.mu.Lock()
	c, ok := d.pools[pool]
	if !ok {
		b := d.bounds[pool]
		c = &actuator.Capacity{Min: b[0], Max: b[1]}
		d.pools[pool] = c
	}
	from := c.Desired
	c.Current, c.Desired = desired, desired
	d.mu.Unlock()
	token, _ := actuator.IdempotencyToken(ctx)
	d.log.InfoContext(ctx, "dry run: would set desired capacity", "pool", pool, "from", from, "to", desired,
		"reason", reason, "client_token", token)
	return nil
}

// PublishSchedule logs each step it would publish and remembers them.
func (d *DryRun) PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error {
	d.mu.Lock()
	d.schedule[pool] = append(planner.Schedule(nil), steps...)
	d.mu.Unlock()
	d.log.InfoContext(ctx, "dry run: would publish schedule", "pool", pool, "steps", len(steps))
	for _, st := range steps {
		d.log.InfoContext(ctx, "dry run: scheduled step", "pool", pool, "at", st.At, "desired", st.Desired, "reason", st.Reason)
	}
	return nil
}

// SetWarm logs the warm tier it would keep: a dry run plans with a warm
// tier as the real back-end would.
func (d *DryRun) SetWarm(ctx context.Context, pool string, warm int, reason string) error {
	d.log.InfoContext(ctx, "dry run: would keep stopped instances warm", "pool", pool, "warm", warm, "reason", reason)
	return nil
}

var _ actuator.WarmPooler = (*DryRun)(nil)

// SetSpot logs the spot mix it would set and remembers it: a dry run
// plans with a spot tier as the real back-end would.
func (d *DryRun) SetSpot(ctx context.Context, pool string, spot planner.Spot, reason string) error {
	d.mu.Lock()
	d.spot[pool] = spot
	d.mu.Unlock()
	d.log.InfoContext(ctx, "dry run: would set the spot mix", "pool", pool, "share", spot.Share,
		"base_on_demand", spot.BaseOnDemand, "fallback", spot.Fallback, "reason", reason)
	return nil
}

var _ actuator.SpotMixer = (*DryRun)(nil)

// Spot returns the spot mix last set for pool (ok false: none was).
func (d *DryRun) Spot(pool string) (spot planner.Spot, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	spot, ok = d.spot[pool]
	return spot, ok
}

// Release logs the release it would make and remembers the instance.
func (d *DryRun) Release(ctx context.Context, instanceID, reason string) error {
	d.mu.Lock()
	d.released = append(d.released, instanceID)
	d.mu.Unlock()
	d.log.InfoContext(ctx, "dry run: would release instance", "instance", instanceID, "reason", reason)
	return nil
}

// Schedule returns the steps last "published" for pool.
func (d *DryRun) Schedule(pool string) planner.Schedule {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append(planner.Schedule(nil), d.schedule[pool]...)
}

// Released returns the instances "released", in order.
func (d *DryRun) Released() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.released...)
}

// PoolOptions are the pool options Factory reads; register them with it.
var PoolOptions = actuator.OptionSet{
	{Name: "initial", Kind: actuator.KindInt, Min: "0",
		Help: "the size the imaginary pool starts at (default: none until a decision is applied, so a forecast-only pool reads no ready instances and no shortage)"},
}

// Factory returns an actuator.Factory building a DryRun per pool. The
// option "initial", when set, seeds the pool's size; the pool's config
// bounds become the back-end's bounds.
func Factory(log *slog.Logger) actuator.Factory {
	return func(ctx context.Context, cfg actuator.PoolConfig, opts actuator.OptionValues) (actuator.Actuator, error) {
		d := New(log)
		if opts.Set("initial") {
			d.Seed(cfg.Name, opts.Int("initial"), cfg.MinInstances, cfg.MaxInstances)
		} else {
			d.Bound(cfg.Name, cfg.MinInstances, cfg.MaxInstances)
		}
		return d, nil
	}
}
