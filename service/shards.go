package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/election"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
)

// Shards says which replica acts for each pool when several serve
// replicas share the pools: package election's Sharder, with this
// replica's identity and the bucket of each pool.
type Shards interface {
	// Identity is this replica's name among the replicas.
	Identity() string
	// Bucket is the bucket (shard) a pool hashes into.
	Bucket(pool string) int
	// Owns reports whether this replica may act for pool now.
	Owns(pool string) bool
	// Owner is the replica holding pool's bucket, "" when none is known.
	Owner(pool string) string
	// Owned lists the buckets this replica holds now.
	Owned() []int
	// Changes is signalled when this replica gains or loses a bucket.
	Changes() <-chan struct{}
}

// ShardStore keeps each bucket's shared state (election.Store): Put
// writes only while version is still the stored one ("" for none yet) and
// otherwise fails with an error wrapping election.ErrConflict.
type ShardStore interface {
	Get(ctx context.Context, shard int) (data []byte, version string, err error)
	Put(ctx context.Context, shard int, data []byte, version string) error
}

// Follower is a back-end that serves the plan from within this process
// rather than sending it to an outside system: the KEDA external scaler
// (keda.Scaler), whose client, KEDA's operator, may reach any replica
// through its Service. Each actuator memory a replica adopts from the
// shared state, the owner's last change and the schedule it published, is
// put in force on it with Follow, so that a standby answers with the
// owner's decision. Follow calls nothing outside the process.
type Follower interface {
	Follow(pool string, m actuator.Memory) error
}

// ErrStandby is in the chain of a change refused because another replica
// owns the pool (or ownership was lost during the decision).
var ErrStandby = errors.New("standby: pool owned by another replica")

// errStale is in the chain of a change refused because another replica
// wrote the pool's shared state since this one read it.
var errStale = fmt.Errorf("pool state written by another replica since it was read: %w", election.ErrConflict)

// sharedCallTimeout bounds each call to the shard store.
const sharedCallTimeout = 5 * time.Second

// sharedPool is what the replicas share of one pool: what the owner last
// wrote of its actuator memory and reactive clocks, and the mode last set
// through the API on any replica. Each part carries the stamp of its
// write, so that a replica adopts only what another one wrote.
type sharedPool struct {
	Actuator  *actuator.Memory       `json:"actuator,omitempty"`
	Reactive  *planner.ReactiveState `json:"reactive,omitempty"`
	ActStamp  string                 `json:"act_stamp,omitempty"`
	Mode      *state.ModeOverride    `json:"mode,omitempty"`
	ModeStamp string                 `json:"mode_stamp,omitempty"`
}

// sharedState is one bucket's ConfigMap: its pools by name.
type sharedState struct {
	Pools map[string]*sharedPool `json:"pools"`
}

// shardView is what this replica last read of one bucket's state.
type shardView struct {
	mu       sync.Mutex
	known    bool   // version and state are the stored ones, as far as this replica knows
	readTick uint64 // the tick in which they were read
	version  string
	state    sharedState
}

// shared is the service's side of several replicas: ownership and the
// shared state of the buckets.
type shared struct {
	shards Shards
	store  ShardStore // nil: ownership only, no state shared
	writer string     // identity and process start: this process's stamps
	seq    atomic.Uint64
	tick   atomic.Uint64
	log    *slog.Logger

	mu    sync.Mutex
	views map[int]*shardView
}

// newShared wraps deps' shards; nil without them.
func newShared(deps Deps) *shared {
	if deps.Shards == nil {
		return nil
	}
	return &shared{shards: deps.Shards, store: deps.ShardStore, log: deps.Logger, views: map[int]*shardView{},
		writer: deps.Shards.Identity() + "/" + strconv.FormatInt(time.Now().UnixNano(), 36)}
}

// view returns a bucket's view, creating it.
func (sh *shared) view(bucket int) *shardView {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	v, ok := sh.views[bucket]
	if !ok {
		v = &shardView{}
		sh.views[bucket] = v
	}
	return v
}

// stamp returns a new stamp of this process's writes.
func (sh *shared) stamp() string {
	return sh.writer + "/" + strconv.FormatUint(sh.seq.Add(1), 10)
}

// readLocked reads a bucket's state into v. v.mu held.
func (sh *shared) readLocked(ctx context.Context, bucket int, v *shardView) error {
	ctx, cancel := context.WithTimeout(ctx, sharedCallTimeout)
	defer cancel()
	data, version, err := sh.store.Get(ctx, bucket)
	if err != nil {
		return err
	}
	st := sharedState{}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("shard %d state: %w", bucket, err)
		}
	}
	if st.Pools == nil {
		st.Pools = map[string]*sharedPool{}
	}
	v.known, v.readTick, v.version, v.state = true, sh.tick.Load(), version, st
	return nil
}

// entry returns a copy of pool's shared state as last read in this tick,
// reading the bucket when it was not (once per bucket and tick).
func (sh *shared) entry(ctx context.Context, bucket int, pool string) (sharedPool, error) {
	v := sh.view(bucket)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.known || v.readTick != sh.tick.Load() {
		if err := sh.readLocked(ctx, bucket, v); err != nil {
			return sharedPool{}, err
		}
	}
	if e := v.state.Pools[pool]; e != nil {
		return *e, nil
	}
	return sharedPool{}, nil
}

// write changes pool's shared state with modify and writes the bucket,
// compare-and-swap on the version read. With strict, it refuses (errStale)
// when the pool's state was written by another replica since this one
// adopted it (stamps: the pool's stamps as it knows them). It returns the
// stamp written. The version written is not returned by the store, so the
// next write reads the bucket again.
func (sh *shared) write(ctx context.Context, bucket int, pool string, strict bool, stamps sharedPool, modify func(e *sharedPool, stamp string)) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, sharedCallTimeout)
	defer cancel()
	v := sh.view(bucket)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.known {
		if err := sh.readLocked(ctx, bucket, v); err != nil {
			return "", err
		}
	}
	e := v.state.Pools[pool]
	if e == nil {
		e = &sharedPool{}
	}
	if strict && (e.ActStamp != stamps.ActStamp || e.ModeStamp != stamps.ModeStamp) {
		v.known = false
		return "", errStale
	}
	next := *e
	stamp := sh.stamp()
	modify(&next, stamp)
	pools := make(map[string]*sharedPool, len(v.state.Pools)+1)
	for k, p := range v.state.Pools {
		pools[k] = p
	}
	pools[pool] = &next
	data, err := json.Marshal(sharedState{Pools: pools})
	if err != nil {
		return "", err
	}
	err = sh.store.Put(ctx, bucket, data, v.version)
	v.known = false
	if err != nil {
		return "", err
	}
	v.state.Pools = pools
	return stamp, nil
}

// invalidate makes the next use of the buckets read them again.
func (sh *shared) invalidate(buckets []int) {
	for _, b := range buckets {
		v := sh.view(b)
		v.mu.Lock()
		v.known = false
		v.mu.Unlock()
	}
}

// ownerText names pool's owner for a standby's reason.
func (sh *shared) ownerText(pool string) string {
	if o := sh.shards.Owner(pool); o != "" {
		return o
	}
	return "none yet"
}

// standbyReason is the reason a standby shows for its decision.
func (sh *shared) standbyReason(pool, reason string) string {
	return fmt.Sprintf("standby: pool owned by %s; %s", sh.ownerText(pool), reason)
}

// ElectionStatus is a pool's place among the replicas, in /api/v1/pools
// when election is on.
type ElectionStatus struct {
	// Bucket is the shard the pool hashes into.
	Bucket int `json:"bucket"`
	// Owner is the replica that applies the pool's decisions ("" when
	// none is known); Owned says it is this one, Identity.
	Owner    string `json:"owner"`
	Owned    bool   `json:"owned"`
	Identity string `json:"identity"`
}

// electionStatus is pool's ElectionStatus, nil without election.
func (sh *shared) electionStatus(pool string) *ElectionStatus {
	if sh == nil {
		return nil
	}
	return &ElectionStatus{Bucket: sh.shards.Bucket(pool), Owner: sh.shards.Owner(pool), Owned: sh.shards.Owns(pool),
		Identity: sh.shards.Identity()}
}

// watchShards follows the buckets this replica holds until ctx ends: it
// counts the changes, exports the number held, makes a bucket gained or
// lost read again before its next decision, and signals gainedCh when it
// gains one.
func (s *Service) watchShards(ctx context.Context, gainedCh chan<- struct{}) {
	sh := s.shared
	held := map[int]bool{}
	update := func() {
		owned := sh.shards.Owned()
		now := make(map[int]bool, len(owned))
		var gained, lost []int
		for _, b := range owned {
			now[b] = true
			if !held[b] {
				gained = append(gained, b)
			}
		}
		for b := range held {
			if !now[b] {
				lost = append(lost, b)
			}
		}
		held = now
		sh.invalidate(append(gained, lost...))
		s.deps.Metrics.election(sh.shards.Identity(), len(owned), len(gained), len(lost))
		if len(gained) > 0 {
			select {
			case gainedCh <- struct{}{}:
			default: // a take-over is signalled already
			}
		}
		if len(gained)+len(lost) > 0 {
			s.log.Info("buckets changed hands", "identity", sh.shards.Identity(), "gained", gained, "lost", lost, "held", owned)
		}
	}
	update()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.shards.Changes():
			update()
		}
	}
}

// syncShared reads the pool's shared state (once per bucket and tick) and
// adopts what another replica wrote since: the actuator's memory and the
// reactive clocks (the owner's, so that min_interval, max_step and the
// cooldowns count from its last change) and a mode set through the API.
// It runs in the pool's decision, before the decision. An error (the
// state could not be read) fails the decision: the replica decides on,
// but without the others' writes it can neither apply (the write of the
// change would fail) nor follow the owner as a standby.
func (s *Service) syncShared(ctx context.Context, p *pool) error {
	sh := s.shared
	if sh == nil || sh.store == nil {
		return nil
	}
	name := p.spec.Name
	e, err := sh.entry(ctx, sh.shards.Bucket(name), name)
	if err != nil {
		s.log.Warn("shared pool state not read; a change waits until it is", "pool", name, "err", s.deps.Redactor.String(err.Error()))
		return fmt.Errorf("reading the pool's state shared with the other replicas (shard %d): %w", sh.shards.Bucket(name), err)
	}
	s.mu.Lock()
	actNew, modeNew := e.ActStamp != "" && e.ActStamp != p.stamps.ActStamp, e.ModeStamp != "" && e.ModeStamp != p.stamps.ModeStamp
	s.mu.Unlock()
	if actNew {
		s.adoptActuator(p, e)
	}
	if modeNew {
		s.adoptMode(p, e)
	}
	return nil
}

// adoptActuator puts another replica's actuator memory and reactive
// clocks in place of the pool's.
func (s *Service) adoptActuator(p *pool, e sharedPool) {
	name := p.spec.Name
	if m := e.Actuator; m != nil {
		if err := p.act.Restore(name, *m); err != nil {
			s.log.Warn("shared actuator memory not adopted", "pool", name, "reason", err)
			return
		}
		s.follow(p.follow, name, *m)
		if st := s.deps.State; st != nil && !s.deps.Preview {
			_ = st.SaveActuator(name, *m)
		}
	}
	if r := e.Reactive; r != nil {
		pol := p.ctl().Policy()
		pol.Reactive = *r
		if err := p.ctl().RestorePolicy(pol); err != nil {
			s.log.Warn("shared reactive clocks not adopted", "pool", name, "reason", err)
		}
	}
	s.mu.Lock()
	p.stamps.ActStamp = e.ActStamp
	s.mu.Unlock()
	s.log.Info("pool state adopted from the shared store", "pool", name, "written_by", e.ActStamp)
}

// follow puts an adopted actuator memory in force on a back-end that
// serves the plan from this process (nil: one that does not).
func (s *Service) follow(f Follower, name string, m actuator.Memory) {
	if f == nil {
		return
	}
	if err := f.Follow(name, m); err != nil {
		s.log.Warn("the owner's plan is not served by this replica's back-end", "pool", name, "reason", err)
	}
}

// ownsOrAlone reports whether this replica may act for pool: it owns the
// pool's bucket, or runs without election.
func (s *Service) ownsOrAlone(pool string) bool {
	return s.shared == nil || s.shared.shards.Owns(pool)
}

// adoptMode puts the mode last set through the API on any replica in
// force, while the configuration still says what it said then.
func (s *Service) adoptMode(p *pool, e sharedPool) {
	name := p.spec.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	p.stamps.ModeStamp = e.ModeStamp
	o := e.Mode
	switch {
	case o == nil:
		p.setMode(p.configMode(), nil)
	case o.ConfigMode == string(p.configMode()) && poolspec.Mode(o.Mode).Valid():
		p.setMode(poolspec.Mode(o.Mode), o)
	default:
		return // the file changed since: its word wins
	}
	if st := s.deps.State; st != nil && !s.deps.Preview {
		if err := st.SaveMode(name, o); err != nil {
			s.log.Warn("shared mode not recorded in the state file", "pool", name, "err", err)
		}
	}
	s.deps.Metrics.mode(name, p.mode)
	s.log.Info("pool mode adopted from the shared store", "pool", name, "mode", p.mode)
}

// persistShared is the shared half of a pool's actuator.Safe Persist
// hook. Before a change (pending) it refuses unless this replica owns the
// pool, then writes the memory and the reactive clocks to the bucket's
// state, refusing the change when another replica wrote since (the next
// decision reads it); it checks ownership again after the write, right
// before the back-end is called. After the change it writes the outcome.
func (s *Service) persistShared(name string, m actuator.Memory) error {
	sh := s.shared
	pending := m.LastChange.Pending
	if pending && !sh.shards.Owns(name) {
		return fmt.Errorf("%w: %s", ErrStandby, sh.ownerText(name))
	}
	if sh.store == nil {
		return nil
	}
	s.mu.Lock()
	p := s.find(name)
	var stamps sharedPool
	if p != nil {
		stamps = p.stamps
	}
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	reactive := p.ctl().Policy().Reactive
	stamp, err := sh.write(context.Background(), sh.shards.Bucket(name), name, pending, stamps, func(e *sharedPool, stamp string) {
		e.Actuator, e.Reactive, e.ActStamp = &m, &reactive, stamp
	})
	if err != nil {
		if errors.Is(err, election.ErrConflict) {
			s.log.Warn("shared pool state changed by another replica: not applied this tick", "pool", name)
		}
		return fmt.Errorf("writing the shared pool state: %w", err)
	}
	s.mu.Lock()
	p.stamps.ActStamp = stamp
	s.mu.Unlock()
	if pending && !sh.shards.Owns(name) {
		return fmt.Errorf("%w: %s (ownership lost during the decision)", ErrStandby, sh.ownerText(name))
	}
	return nil
}

// shareMode writes a mode set through the API to the pool's shared state,
// so that every replica, and the owner above all, puts it in force; it
// retries a few times when another write came first.
func (s *Service) shareMode(name string, o *state.ModeOverride) error {
	sh := s.shared
	if sh == nil || sh.store == nil {
		return nil
	}
	bucket := sh.shards.Bucket(name)
	var err error
	for range 3 {
		var stamp string
		stamp, err = sh.write(context.Background(), bucket, name, false, sharedPool{}, func(e *sharedPool, stamp string) {
			e.Mode, e.ModeStamp = o, stamp
		})
		if err == nil {
			s.mu.Lock()
			if p := s.find(name); p != nil {
				p.stamps.ModeStamp = stamp
			}
			s.mu.Unlock()
			return nil
		}
		if !errors.Is(err, election.ErrConflict) {
			break
		}
	}
	return fmt.Errorf("sharing the mode with the other replicas: %w", err)
}
