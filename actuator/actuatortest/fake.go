package actuatortest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// Call is one recorded call to the Fake.
type Call struct {
	Op       string // actuator.OpCapacity, OpSetDesired, OpPublishSchedule, OpRelease
	Pool     string
	Instance string
	From, To int // SetDesired only
	Steps    planner.Schedule
	Reason   string
	// Token is the idempotency token the call carried, if any.
	Token string
}

// Fake is an in-memory actuator. Set the callbacks before using it; they
// are called without the Fake's lock held, so they may call back into it.
// A nil callback means success.
type Fake struct {
	// OnCapacity runs before Capacity; a non-nil error is returned instead
	// of the pool's capacity (return actuator.ErrNotImplemented to mimic a
	// back-end that cannot report its size).
	OnCapacity func(pool string) error
	// OnScale runs before SetDesired changes the pool from from to to; a
	// non-nil error leaves the pool unchanged and is returned.
	OnScale func(pool string, from, to int) error
	// OnPublish runs before PublishSchedule stores steps.
	OnPublish func(pool string, steps planner.Schedule) error
	// OnRelease runs before Release records the instance as released.
	OnRelease func(instanceID, reason string) error

	name     string
	mu       sync.Mutex
	pools    map[string]*actuator.Capacity
	schedule map[string]planner.Schedule
	released []string
	calls    []Call
}

var _ actuator.Actuator = (*Fake)(nil)

// New returns a Fake registered under name with no pools.
func New(name string) *Fake {
	return &Fake{name: name, pools: map[string]*actuator.Capacity{}, schedule: map[string]planner.Schedule{}}
}

// AddPool adds a pool whose Current and Desired are current and whose
// back-end bounds are [min, max] (max 0: no back-end bound). It returns f
// for chaining.
func (f *Fake) AddPool(pool string, current, min, max int) *Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pools[pool] = &actuator.Capacity{Current: current, Desired: current, Min: min, Max: max}
	return f
}

// Name returns the name given to New.
func (f *Fake) Name() string { return f.name }

// Capacity returns the pool's capacity; an unknown pool is
// actuator.ErrRejected, as a provider would answer.
func (f *Fake) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	f.record(Call{Op: actuator.OpCapacity, Pool: pool, Token: token(ctx)})
	if f.OnCapacity != nil {
		if err := f.OnCapacity(pool); err != nil {
			return actuator.Capacity{}, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.pools[pool]
	if !ok {
		return actuator.Capacity{}, fmt.Errorf("fake: pool %q: %w", pool, actuator.ErrRejected)
	}
	return *c, nil
}

// SetDesired sets the pool's Desired and Current to desired (instances are
// ready at once) unless OnScale fails.
func (f *Fake) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	from := f.Pool(pool).Desired
	f.record(Call{Op: actuator.OpSetDesired, Pool: pool, From: from, To: desired, Reason: reason, Token: token(ctx)})
	if f.OnScale != nil {
		if err := f.OnScale(pool, from, desired); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.pools[pool]
	if !ok {
		c = &actuator.Capacity{}
		f.pools[pool] = c
	}
	c.Current, c.Desired = desired, desired
	return nil
}

// PublishSchedule stores steps unless OnPublish fails.
func (f *Fake) PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error {
	f.record(Call{Op: actuator.OpPublishSchedule, Pool: pool, Steps: slices.Clone(steps), Token: token(ctx)})
	if f.OnPublish != nil {
		if err := f.OnPublish(pool, steps); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.schedule[pool] = slices.Clone(steps)
	return nil
}

// Release records the instance as released unless OnRelease fails.
func (f *Fake) Release(ctx context.Context, instanceID, reason string) error {
	f.record(Call{Op: actuator.OpRelease, Instance: instanceID, Reason: reason, Token: token(ctx)})
	if f.OnRelease != nil {
		if err := f.OnRelease(instanceID, reason); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, instanceID)
	return nil
}

// Pool returns the pool's capacity (zero if unknown) without recording a
// call.
func (f *Fake) Pool(pool string) actuator.Capacity {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.pools[pool]; ok {
		return *c
	}
	return actuator.Capacity{}
}

// Schedule returns the steps last published for pool.
func (f *Fake) Schedule(pool string) planner.Schedule {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.schedule[pool])
}

// Released returns the instances released, in order.
func (f *Fake) Released() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.released)
}

// Calls returns every call made so far, in order.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// CallsOf returns the calls of one operation (e.g. actuator.OpSetDesired).
func (f *Fake) CallsOf(op string) []Call {
	var out []Call
	for _, c := range f.Calls() {
		if c.Op == op {
			out = append(out, c)
		}
	}
	return out
}

func (f *Fake) record(c Call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

func token(ctx context.Context) string {
	t, _ := actuator.IdempotencyToken(ctx)
	return t
}
