package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/internal/cli"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/store"
)

// Deps are the service's collaborators, built by the caller (cmd/forecaster
// or a test) so the service itself opens nothing.
type Deps struct {
	// Store is where demand and utilisation are read.
	Store store.Querier
	// Backend builds a pool's back-end (cmd/forecaster: the actuator
	// registry). The service wraps it in actuator.Safe.
	Backend func(ctx context.Context, pool actuator.PoolConfig) (actuator.Actuator, error)
	// Safety is the template of every pool's actuator.Safe: audit log,
	// metrics, logger, redactor, clock. The service sets Pools and Persist.
	Safety actuator.SafetyOptions
	// State keeps each pool's memory across restarts; nil keeps it in
	// memory only.
	State *state.DB
	// Preview makes every pool compute and apply nothing, whatever its
	// mode (serve --once without --apply), and write no state.
	Preview bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Metrics; nil means none.
	Metrics *Metrics
	// Redactor masks secrets in the error texts the API and logs show;
	// nil masks nothing.
	Redactor *redact.Redactor
	// NewModel builds each pool's forecasting model for its seasonal
	// periods (in steps); nil means the controller's default, model/auto.
	NewModel func(periods []int) model.Forecaster
	// DrainTimeout bounds how long a stopping service waits for the
	// decisions in flight (default 20s, within Kubernetes' 30s grace).
	DrainTimeout time.Duration
	// Shards, when set, shares the pools with other replicas: every
	// replica decides every pool, and only the one that owns a pool's
	// bucket applies its decisions (the others are standbys for it).
	Shards Shards
	// ShardStore, with Shards, keeps each pool's actuator memory,
	// reactive clocks and API mode where every replica reads them, so
	// that they survive a takeover; nil shares ownership only.
	ShardStore ShardStore
}

// Service runs the scaling loop over every configured pool.
type Service struct {
	deps   Deps
	log    *slog.Logger
	shared *shared // nil: this replica decides and applies alone

	tickMu sync.Mutex // one tick or reload at a time

	mu     sync.Mutex // guards what follows and every pool's status
	file   *poolspec.File
	pools  []*pool
	lastOK time.Time // the last tick in which every pool decided
}

// New builds the service over a checked configuration (poolspec.Parse), building
// each pool's back-end and restoring what deps.State remembers of it.
func New(ctx context.Context, file *poolspec.File, deps Deps) (*Service, error) {
	if deps.Store == nil {
		return nil, errors.New("service: no store")
	}
	if deps.Backend == nil {
		return nil, errors.New("service: no back-end factory")
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.DrainTimeout <= 0 {
		deps.DrainTimeout = 20 * time.Second
	}
	if deps.Safety.Now == nil {
		deps.Safety.Now = deps.Now
	}
	if deps.Safety.Logger == nil {
		deps.Safety.Logger = deps.Logger
	}
	if deps.Safety.Redactor == nil {
		deps.Safety.Redactor = deps.Redactor
	}
	if err := file.Validate(nil); err != nil {
		return nil, err
	}
	s := &Service{deps: deps, log: deps.Logger, file: file, shared: newShared(deps)}
	var errs []error
	for _, ps := range file.Pools {
		p, err := s.newPool(ctx, ps)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.restore(p)
		s.pools = append(s.pools, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// Interval returns the decision tick in force.
func (s *Service) Interval() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.file.Interval
}

// Run ticks every interval until ctx ends, then lets the decisions in
// flight finish (within DrainTimeout) and returns. A failing pool is
// logged, shown in its status and retried next tick; it never stops the
// others.
func (s *Service) Run(ctx context.Context) error {
	interval := s.Interval()
	t := time.NewTicker(interval)
	defer t.Stop()
	var gained chan struct{} // nil without election: never ready
	if s.shared != nil {
		gained = make(chan struct{}, 1)
		watch, stop := context.WithCancel(ctx)
		defer stop()
		go s.watchShards(watch, gained)
	}
	for {
		s.Tick(ctx)
		if now := s.Interval(); now != interval {
			interval = now
			t.Reset(interval)
		}
		if !s.waitTick(ctx, t.C, gained) {
			return nil
		}
	}
}

// waitTick waits for the next tick, deciding at once the pools of the
// buckets gained meanwhile; it returns false when ctx ends.
func (s *Service) waitTick(ctx context.Context, tick <-chan time.Time, gained <-chan struct{}) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-gained:
			s.takeOver(ctx)
		}
	}
}

// takeOver decides at once the pools this replica has just come to own
// (their last decision was a standby's), rather than at the next tick: a
// replica that dies leaves its pools undecided for no longer than its
// Leases take to expire and the survivors take to acquire them.
func (s *Service) takeOver(ctx context.Context) {
	n, err := s.tick(ctx, false, func(p *pool) bool {
		return p.status.Outcome == OutcomeStandby && s.shared.shards.Owns(p.spec.Name)
	})
	if n > 0 {
		s.log.Info("pools taken over decided at once", "pools", n, "failed", err != nil)
	}
}

// Tick takes one decision for every pool at the service clock's now, in
// parallel (at most workers at once), each within a deadline of one
// interval, and returns the failing pools' errors joined (each pool's
// error is also in its status until its next successful decision). When
// ctx ends, decisions already started finish and no new one starts.
func (s *Service) Tick(ctx context.Context) error {
	_, err := s.tick(ctx, true, func(*pool) bool { return true })
	return err
}

// tick decides the pools that which selects (called under s.mu) and
// returns how many; only a full tick (every pool) counts as the service's
// tick in its metrics and readiness.
func (s *Service) tick(ctx context.Context, full bool, which func(*pool) bool) (int, error) {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	began := time.Now()
	now := s.deps.Now()
	if s.shared != nil {
		s.shared.tick.Add(1) // each bucket's shared state is read again once in this tick
	}
	s.mu.Lock()
	pools := slices.DeleteFunc(slices.Clone(s.pools), func(p *pool) bool { return !which(p) })
	interval, workers := s.file.Interval, s.file.Workers
	s.mu.Unlock()
	if len(pools) == 0 {
		return 0, nil
	}

	// Decisions do not end with ctx (a SIGTERM): they finish, bounded by
	// their deadline and by DrainTimeout.
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	drained := context.AfterFunc(ctx, func() {
		select {
		case <-time.After(s.deps.DrainTimeout):
			stop()
		case <-work.Done():
		}
	})
	defer drained()

	errs := make([]error, len(pools))
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	skipped := 0
	for i, p := range pools {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			skipped = len(pools) - i
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = s.runDecision(work, p, now, interval)
		}()
	}
	wg.Wait()
	if skipped > 0 {
		s.log.Info("stopping: decisions not started", "pools", skipped)
	}
	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("pool %s: %w", pools[i].spec.Name, err))
		}
	}
	if !full {
		return len(pools), errors.Join(failed...)
	}
	if len(failed) == 0 && skipped == 0 {
		s.mu.Lock()
		s.lastOK = now
		s.mu.Unlock()
		// The wall clock, not the service's: Prometheus compares it with
		// time() (PrewarmServiceDown), also when the demo runs a simulated
		// clock.
		s.deps.Metrics.tickSucceeded(time.Now())
	}
	s.deps.Metrics.tick(time.Since(began))
	return len(pools), errors.Join(failed...)
}

// runDecision runs one pool's decision with a deadline of interval and
// waits for it at most that long (plus a grace for the decision to notice
// its deadline). A decision stuck in a call that ignores its context (a
// back-end SDK, say) is left running and reported; the pool is skipped
// until it returns.
func (s *Service) runDecision(ctx context.Context, p *pool, now time.Time, interval time.Duration) error {
	s.mu.Lock()
	if !p.busySince.IsZero() {
		since := p.busySince
		err := fmt.Errorf("its decision of %s is still running: a store or back-end call does not return", since.Format(time.RFC3339))
		s.fail(p, now, err)
		s.mu.Unlock()
		return err
	}
	p.busySince = now
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, interval)
	done := make(chan error, 1)
	began := time.Now()
	go func() {
		defer cancel()
		err := s.decideGuarded(ctx, p, now, interval)
		s.mu.Lock()
		p.busySince = time.Time{}
		p.status.DecidedIn = Duration(time.Since(began))
		if err != nil {
			s.fail(p, now, err)
		} else {
			p.status.Error, p.status.FailingSince, p.status.LastSuccess = "", time.Time{}, now
		}
		s.mu.Unlock()
		s.recordDecision(p)
		done <- err
	}()
	grace := time.NewTimer(interval + min(interval/10, time.Second) + 50*time.Millisecond)
	defer grace.Stop()
	select {
	case err := <-done:
		return err
	case <-grace.C:
		err := fmt.Errorf("decision did not finish within the interval %s (still waiting on a store or back-end call)", interval)
		s.mu.Lock()
		s.fail(p, now, err)
		s.mu.Unlock()
		return err
	}
}

// decideGuarded runs one pool's decision; a panic in it (a bug, or a
// back-end library's) fails that pool's decision as an internal error,
// with the stack in the log, instead of killing the process and every
// other pool with it.
func (s *Service) decideGuarded(ctx context.Context, p *pool, now time.Time, interval time.Duration) error {
	err := cli.Guard(func() error { return s.decide(ctx, p, now, interval) })
	var ie *cli.InternalError
	if errors.As(err, &ie) && ie.Stack != nil {
		s.log.Error("internal error in a pool decision: please report it", "pool", p.spec.Name,
			"panic", s.deps.Redactor.String(fmt.Sprint(ie.Value)), "stack", string(ie.Stack))
	}
	return err
}

// fail records a failed decision. A decision that got as far as applying
// (or previewing) keeps that outcome, with the error beside it (a pool
// held on its floors while the store is down was still changed); one that
// did not is failed. s.mu held.
func (s *Service) fail(p *pool, now time.Time, err error) {
	msg := s.deps.Redactor.String(err.Error())
	decided := p.status.At.Equal(now) && p.status.Outcome != ""
	p.status.At, p.status.Error = now, msg
	if p.status.FailingSince.IsZero() {
		p.status.FailingSince = now
	}
	if !decided {
		p.status.Outcome = OutcomeFailed
	}
	s.log.Warn("pool decision failed", "pool", p.spec.Name, "err", msg)
	s.deps.Metrics.failure(p.spec.Name, !decided)
}

// Reload replaces the configuration with file (already checked by
// poolspec.Parse) without a restart: new pools are built, removed pools are
// dropped, and a changed pool keeps its memory (the controller's, when its
// forecast grid allows, and the actuator's), taking the new settings at
// its next decision. When a new or changed pool cannot be built (a
// back-end's factory refuses its options), nothing changes and the error
// says why. Every pool refits at its next decision, so that history
// written to the store since (an import) is used at once. The listen
// address, audit log and state file take effect only at a restart.
func (s *Service) Reload(ctx context.Context, file *poolspec.File) error {
	if err := file.Validate(nil); err != nil {
		return err
	}
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	s.mu.Lock()
	old := map[string]*pool{}
	specs := map[*pool]poolspec.Pool{}
	inners := map[*pool]actuator.Actuator{}
	for _, p := range s.pools {
		old[p.spec.Name], specs[p], inners[p] = p, p.spec, p.inner
	}
	cur := s.file
	s.mu.Unlock()

	var next []*pool
	pending := map[*pool]*pool{}
	var errs []error
	for _, ps := range file.Pools {
		p, ok := old[ps.Name]
		switch {
		case ok && specs[p].Equal(ps):
			next = append(next, p)
		case ok:
			np, err := s.rebuild(ctx, specs[p], ps, inners[p])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			pending[p] = np
			next = append(next, p)
		default:
			np, err := s.newPool(ctx, ps)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s.restore(np)
			next = append(next, np)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, setting := range []struct{ name, was, now string }{{"listen", cur.Listen, file.Listen},
		{"audit_log", cur.AuditLog, file.AuditLog}, {"state_file", cur.StatePath(), file.StatePath()},
		{"election", fmt.Sprintf("%+v", cur.Election), fmt.Sprintf("%+v", file.Election)}} {
		if setting.was != setting.now {
			s.log.Warn("setting changed; it takes effect at the next restart", "key", setting.name, "running", setting.was, "new", setting.now)
		}
	}
	kept := map[string]bool{}
	for _, p := range next {
		kept[p.spec.Name] = true
	}
	for name, p := range old {
		if !kept[name] {
			s.retireWarmTier(ctx, p)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, np := range pending {
		p.pending = np
	}
	for name := range old {
		if !kept[name] {
			s.deps.Metrics.forget(name)
		}
	}
	// A reload is also how an operator says "the history changed" (after
	// 'forecaster import', say): every pool refits at its next decision,
	// whatever its refit schedule, so history written since is used at once.
	for _, p := range next {
		p.nextRefit = time.Time{}
	}
	s.file, s.pools = file, next
	s.log.Info("configuration reloaded; every pool refits at its next decision", "pools", len(next), "changed", len(pending))
	return nil
}

// retireWarmTier empties the warm tier of a pool dropped from the
// configuration (its stopped instances or placeholder pods would
// otherwise be kept, and billed, for nobody), when the pool applied its
// decisions here.
func (s *Service) retireWarmTier(ctx context.Context, p *pool) {
	s.mu.Lock()
	mode := p.mode
	s.mu.Unlock()
	if mine, _ := s.ActsFor(p.spec.Name); !p.plan.Fleet.WarmTier() || s.deps.Preview || mode != poolspec.ModeActive || !mine {
		return
	}
	if err := p.act.SetWarm(ctx, p.spec.Name, 0, "pool removed from the configuration"); err != nil {
		s.log.Error("pool removed from the configuration, but its warm tier could not be emptied; empty it by hand",
			"pool", p.spec.Name, "err", err)
		return
	}
	s.log.Info("pool removed from the configuration: its warm tier is emptied", "pool", p.spec.Name)
}

// ErrUnknownPool is returned for a pool the configuration does not have.
var ErrUnknownPool = errors.New("no such pool")

// SetMode sets a pool's mode at run time (POST /api/v1/pools/NAME/mode),
// recording it in the state file first, so that it survives restarts while
// the configuration still says what it said. by names who set it, for the
// log and the status.
func (s *Service) SetMode(name string, mode poolspec.Mode, by string) (PoolStatus, error) {
	if !mode.Valid() {
		return PoolStatus{}, fmt.Errorf("mode %q: want one of %v", mode, poolspec.Modes())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(name)
	if p == nil {
		return PoolStatus{}, fmt.Errorf("%w %q", ErrUnknownPool, name)
	}
	o := &state.ModeOverride{Mode: string(mode), ConfigMode: string(p.configMode()), At: s.deps.Now().UTC(), By: by}
	if mode == p.configMode() {
		o = nil // back to what the file says
	}
	if s.shared != nil && !s.deps.Preview {
		// Written where every replica reads it, outside s.mu (an API
		// call): the owner puts it in force at its next decision.
		s.mu.Unlock()
		err := s.shareMode(name, o)
		s.mu.Lock()
		if err != nil {
			return PoolStatus{}, err
		}
		if p = s.find(name); p == nil {
			return PoolStatus{}, fmt.Errorf("%w %q", ErrUnknownPool, name)
		}
	}
	if st := s.deps.State; st != nil && !s.deps.Preview {
		if err := st.SaveMode(name, o); err != nil {
			return PoolStatus{}, fmt.Errorf("recording the mode: %w", err)
		}
	}
	was := p.mode
	p.setMode(mode, o)
	s.deps.Metrics.mode(name, mode)
	s.log.Info("pool mode changed", "pool", name, "from", was, "to", mode, "by", by)
	st := p.status
	st.Election = s.shared.electionStatus(name)
	return st, nil
}

func (s *Service) find(name string) *pool {
	for _, p := range s.pools {
		if p.spec.Name == name {
			return p
		}
	}
	return nil
}

// Status returns every pool's latest state, in configuration order.
func (s *Service) Status() []PoolStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PoolStatus, len(s.pools))
	now := s.deps.Now()
	for i, p := range s.pools {
		out[i] = p.snapshot(now)
		out[i].Election = s.shared.electionStatus(p.spec.Name)
	}
	return out
}

// PoolStatus returns one pool's latest state.
func (s *Service) PoolStatus(name string) (PoolStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(name); p != nil {
		st := p.snapshot(s.deps.Now())
		st.Election = s.shared.electionStatus(name)
		return st, true
	}
	return PoolStatus{}, false
}
