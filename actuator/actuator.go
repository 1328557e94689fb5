package actuator

import (
	"context"
	"errors"

	"github.com/prewarm/prewarm/planner"
)

// Capacity is a pool's size as the back-end reports it.
type Capacity struct {
	// Current is the number of instances that exist (booting or ready).
	Current int
	// Ready is how many of them serve, when ReadyKnown; a back-end that
	// cannot tell booting from ready instances leaves both zero, and all
	// of Current then count as ready.
	Ready      int
	ReadyKnown bool
	// Stopped is how many stopped instances of the pool's warm tier the
	// back-end holds, when StoppedKnown: a scale-out starts them first, in
	// a warm start rather than a cold boot, so the start times of each
	// are learned apart. Back-ends without a warm tier, or that cannot
	// count it, leave both zero.
	Stopped      int
	StoppedKnown bool
	// Desired is the size the back-end is currently asked to reach.
	Desired int
	// Min and Max bound Desired as configured on the back-end itself.
	Min, Max int
}

// ReadyCounter is implemented by back-ends that tell ready instances from
// booting ones with a read of their own (a second API call beside
// Capacity's). Safe.ReadCapacity, the decision's read, asks it, so that
// serve measures the fleet's start times; the reads before a change,
// which need only the size, do not. ok is false when the count cannot be
// read: readiness then stays unknown, which is not an error.
type ReadyCounter interface {
	ReadyInstances(ctx context.Context, pool string) (ready int, ok bool)
}

// WarmPooler is implemented by back-ends that keep a warm tier: stopped
// instances, their image and weights on disk, that start in a fraction of
// a cold boot (planner.Fleet.WarmStart) and are billed for their disks
// while stopped. SetWarm asks the pool to keep warm of them beside its
// desired size; a scale-out starts them first. Safe.SetWarm calls it.
type WarmPooler interface {
	SetWarm(ctx context.Context, pool string, warm int, reason string) error
}

// Tiers are the capacity tiers a back-end runs beside on demand: Warm, a
// warm tier of stopped instances (WarmPooler); Spot, a spot mix
// (SpotMixer).
type Tiers struct {
	Warm, Spot bool
}

// TiersOf reports the tiers a built back-end runs, by the interfaces it
// implements.
func TiersOf(a Actuator) Tiers {
	_, warm := a.(WarmPooler)
	_, spot := a.(SpotMixer)
	return Tiers{Warm: warm, Spot: spot}
}

// WarmSettler is implemented by WarmPoolers whose warm tier takes more
// than one call to reach the size SetWarm asked for (volcengine: launches
// that must boot before they are stopped), and that a scale-out drains
// (it starts the stopped instances first). SettleWarm moves the tier one
// step towards the size last asked for and reports whether it changed the
// pool. Safe.SetWarm, which the service calls at every decision of a pool
// with a warm tier, calls it where the size asked repeats the one applied,
// so that the tier is kept on the write path: the back-end's Capacity
// only reads.
type WarmSettler interface {
	SettleWarm(ctx context.Context, pool string) (changed bool, err error)
}

// SpotMixer is implemented by back-ends that run part of a pool on spot
// capacity (planner.Spot): the instances above spot.BaseOnDemand are
// spot.Share on spot, and lost spot capacity is replaced on demand when
// spot.OnDemandFallback(). SetSpot sets that mix on the pool; the pool's
// size stays as SetDesired asked.
type SpotMixer interface {
	SetSpot(ctx context.Context, pool string, spot planner.Spot, reason string) error
}

// SpotSettler is implemented by SpotMixers whose pool keeps the on-demand
// instances that stood in for spot during a stock-out (the on-demand
// fallback) once spot is back, unless told to move them (volcengine: a
// scaling group's CompensateWithOnDemand launches them and nothing
// replaces them later). SettleSpot moves the pool one step towards the
// mix SetSpot set and reports whether it changed the pool. Safe.Resize,
// which the service calls at every decision of an active pool, calls it
// where the pool already holds the size asked for and a spot mix was
// applied (Safe.SetSpot), so that the stand-ins are moved on the write
// path: the back-end's Capacity only reads. A back-end changes nothing
// unless the mix has a spot tier with the on-demand fallback, or it
// finishes a move begun before the mix changed.
type SpotSettler interface {
	SettleSpot(ctx context.Context, pool string) (changed bool, err error)
}

// Actuator applies capacity to one kind of fleet. A pool is the back-end's
// unit of scaling: a scaling group ID, a Deployment, a set of instances.
type Actuator interface {
	// Name is the registered back-end name ("volcengine", "keda", ...).
	// Required.
	Name() string
	// Capacity reads the pool's current size and bounds. Required.
	Capacity(ctx context.Context, pool string) (Capacity, error)
	// SetDesired asks for desired instances in the pool, recording reason
	// where the back-end can. Required.
	SetDesired(ctx context.Context, pool string, desired int, reason string) error
	// PublishSchedule hands future steps to a back-end that can act on them
	// itself (scheduled scaling policies), replacing what prewarm published
	// before. Optional: may return ErrNotImplemented.
	PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error
	// Release stops or removes one instance (an idle GPU, a finished
	// training job). Optional: may return ErrNotImplemented.
	Release(ctx context.Context, instanceID, reason string) error
}

// ErrNotImplemented is returned by optional methods a back-end lacks.
var ErrNotImplemented = errors.New("not implemented by this actuator")

// Errors back-ends wrap so the shared safety layer can decide what to do.
// Wrap them with %w together with the provider's own message and request ID.
var (
	// ErrThrottled: the provider asked us to slow down; retry after a backoff.
	ErrThrottled = errors.New("throttled by the provider")
	// ErrTransient: a timeout, connection failure or 5xx; retrying may work.
	ErrTransient = errors.New("transient provider failure")
	// ErrRejected: the provider refused the request itself (bad parameter,
	// permission, unknown pool or instance); retrying will not help.
	ErrRejected = errors.New("rejected by the provider")
	// ErrCircuitOpen: too many recent failures; calls are suspended and
	// capacity is left where it is.
	ErrCircuitOpen = errors.New("circuit breaker open: calls suspended after repeated failures")
)
