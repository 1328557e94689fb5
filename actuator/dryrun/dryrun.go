package dryrun

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// Name is the back-end's registered name.
const Name = "dryrun"

// DryRun logs calls instead of making them. It is safe for concurrent use.
type DryRun struct {
	log      *slog.Logger
	mu       sync.Mutex
	pools    map[string]*actuator.Capacity
	schedule map[string]planner.Schedule
	released []string
}

var _ actuator.Actuator = (*DryRun)(nil)

// New returns a DryRun logging to log (nil: slog.Default()).
func New(log *slog.Logger) *DryRun {
	if log == nil {
		log = slog.Default()
	}
	return &DryRun{log: log.With("backend", Name), pools: map[string]*actuator.Capacity{},
		schedule: map[string]planner.Schedule{}}
}

// Seed sets a pool's starting size and bounds (max 0: unbounded), as if
// read from a real fleet.
func (d *DryRun) Seed(pool string, current, min, max int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pools[pool] = &actuator.Capacity{Current: current, Desired: current, Min: min, Max: max}
}

// Name returns "dryrun".
func (d *DryRun) Name() string { return Name }

// Capacity returns what the pool was last set to (zero for a pool never
// seen).
func (d *DryRun) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.pools[pool]; ok {
		return *c, nil
	}
	return actuator.Capacity{}, nil
}

// SetDesired logs the change and remembers it.
func (d *DryRun) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	d.mu.Lock()
	c, ok := d.pools[pool]
	if !ok {
		c = &actuator.Capacity{}
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
	{Name: "initial", Kind: actuator.KindInt, Default: "0", Min: "0", Help: "the size the pool starts at"},
}

// Factory returns an actuator.Factory building a DryRun per pool. The
// option "initial" seeds the pool's size; the pool's config bounds become
// the back-end's bounds.
func Factory(log *slog.Logger) actuator.Factory {
	return func(ctx context.Context, cfg actuator.PoolConfig, opts actuator.OptionValues) (actuator.Actuator, error) {
		d := New(log)
		d.Seed(cfg.Name, opts.Int("initial"), cfg.MinInstances, cfg.MaxInstances)
		return d, nil
	}
}
