package election

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// errDeclined is what an acquisition past the replica's share returns to
// client-go, which then tries again a retry period later.
var errDeclined = errors.New("election: this replica holds its share of buckets")

// quota caps how many Leases one replica acquires: take reserves one before
// an acquisition and reports false at the cap; give returns one.
type quota interface {
	take() bool
	give()
}

// guard wraps a Lease lock and knows, better than client-go's own
// IsLeader, whether this replica may act: it holds from the first write that
// names it holder until the renew deadline passes without another, the
// lease is released, another holder is seen or the election stops. The
// clock of a renewal starts when its request is sent, before the API server
// stamps it, so the holder always stops before the others' wait ends.
type guard struct {
	inner         resourcelock.Interface
	renewDeadline time.Duration
	quota         quota         // nil: no cap
	changes       chan struct{} // signalled, without blocking, on every change

	mu        sync.Mutex
	holding   bool
	reserved  bool      // holds a slot of the quota: while holding, and while acquiring
	holder    string    // the holder identity last read or written
	renewedAt time.Time // when the last successful renewal was sent
	expiry    *time.Timer
}

// newGuard wraps a lock; changes gets a signal whenever holding changes.
func newGuard(inner resourcelock.Interface, renewDeadline time.Duration, q quota, changes chan struct{}) *guard {
	return &guard{inner: inner, renewDeadline: renewDeadline, quota: q, changes: changes}
}

// Get reads the Lease; a holder other than this replica ends its hold.
//
// client-go restarts a standby's wait only when the raw record it returns
// changes, and LeaseLock's record keeps renewTime to the second: renewals
// less than a second apart would look alike, and a standby would count the
// lease from the first renewal of a second instead of the last, up to a
// second early. The renewTime to the microsecond, as the Lease stores it, is
// added to the raw record so that every renewal counts.
func (g *guard) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := g.inner.Get(ctx)
	if err != nil {
		return rec, raw, err
	}
	raw = append(raw, rec.RenewTime.UTC().Format(time.RFC3339Nano)...)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holder = rec.HolderIdentity
	if g.holding && rec.HolderIdentity != g.Identity() {
		g.endLocked()
	}
	return rec, raw, nil
}

// lastHolder is the holder identity last read from or written to the Lease.
func (g *guard) lastHolder() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holder
}

// Create creates the Lease, as an acquisition.
func (g *guard) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return g.write(ctx, rec, g.inner.Create)
}

// Update writes the Lease: a renewal or acquisition when it names this
// replica, else a release, which ends the hold before it is sent.
func (g *guard) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return g.write(ctx, rec, g.inner.Update)
}

// write sends a record, keeping the hold and the quota in step with it.
func (g *guard) write(ctx context.Context, rec resourcelock.LeaderElectionRecord,
	send func(context.Context, resourcelock.LeaderElectionRecord) error) error {
	if rec.HolderIdentity != g.Identity() {
		g.stop()
		err := send(ctx, rec)
		if err == nil {
			g.setHolder(rec.HolderIdentity)
		}
		return err
	}
	if !g.reserve() {
		return errDeclined
	}
	sentAt := time.Now()
	if err := send(ctx, rec); err != nil {
		g.unreserveIdle()
		return err
	}
	g.renewed(sentAt)
	return nil
}

// setHolder records the holder identity written to the Lease.
func (g *guard) setHolder(holder string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holder = holder
}

// reserve makes sure this Lease has a slot of the quota, taking one when it
// has none; false when the quota is spent.
func (g *guard) reserve() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reserveLocked()
}

// reserveLocked is reserve with g.mu held.
func (g *guard) reserveLocked() bool {
	if g.reserved {
		return true
	}
	if g.quota != nil && !g.quota.take() {
		return false
	}
	g.reserved = true
	return true
}

// unreserveIdle gives the slot back after a failed write unless the Lease
// is still held.
func (g *guard) unreserveIdle() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.holding {
		g.unreserveLocked()
	}
}

// unreserveLocked gives the slot back; g.mu is held.
func (g *guard) unreserveLocked() {
	if g.reserved && g.quota != nil {
		g.quota.give()
	}
	g.reserved = false
}

// renewed records a successful write sent at sentAt and arms the deadline.
// A hold that ended while the write was in flight resumes only if a slot
// of the quota is still free.
func (g *guard) renewed(sentAt time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holder = g.Identity()
	if !g.reserveLocked() {
		return
	}
	started := !g.holding
	g.holding = true
	g.renewedAt = sentAt
	wait := time.Until(sentAt.Add(g.renewDeadline))
	if g.expiry == nil {
		g.expiry = time.AfterFunc(wait, g.expire)
	} else {
		g.expiry.Reset(wait)
	}
	if started {
		g.signal()
	}
}

// expire ends the hold once the renew deadline has passed since the last
// renewal was sent.
func (g *guard) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holding && time.Since(g.renewedAt) >= g.renewDeadline {
		g.endLocked()
	}
}

// stop ends the hold, if any.
func (g *guard) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holding {
		g.endLocked()
	}
}

// endLocked ends a hold; g.mu is held.
func (g *guard) endLocked() {
	g.holding = false
	if g.expiry != nil {
		g.expiry.Stop()
	}
	g.unreserveLocked()
	g.signal()
}

// signal tells the changes channel, dropping the signal when one is pending.
func (g *guard) signal() {
	select {
	case g.changes <- struct{}{}:
	default:
	}
}

// holds reports whether this replica may act now: it holds the Lease and
// its last renewal was sent less than the renew deadline ago.
func (g *guard) holds() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holding && time.Since(g.renewedAt) < g.renewDeadline
}

// RecordEvent passes events on to the wrapped lock.
func (g *guard) RecordEvent(s string) { g.inner.RecordEvent(s) }

// Identity is the wrapped lock's holder identity.
func (g *guard) Identity() string { return g.inner.Identity() }

// Describe names the wrapped lock.
func (g *guard) Describe() string { return g.inner.Describe() }
