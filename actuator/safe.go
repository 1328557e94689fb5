package actuator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/prewarm/prewarm/internal/backoff"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/redact"
)

// Operation names used in audit records, metrics and logs.
const (
	OpSetDesired      = "set_desired"
	OpCapacity        = "capacity"
	OpPublishSchedule = "publish_schedule"
	OpRelease         = "release"
	OpSetWarm         = "set_warm"
	OpSetSpot         = "set_spot"
)

// RetryPolicy bounds the retries of a back-end call that failed with
// ErrThrottled, ErrTransient or a per-attempt timeout. Delays use
// exponential backoff with full jitter: before retry n (n = 1, 2, ...) Safe
// sleeps a uniformly random time in [0, min(MaxDelay, BaseDelay·2^(n-1))).
type RetryPolicy struct {
	// MaxAttempts is the number of tries in all, first one included.
	// Default 4.
	MaxAttempts int
	// BaseDelay is the backoff ceiling before the first retry. Default 200ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff ceiling. Default 10s.
	MaxDelay time.Duration
	// AttemptTimeout bounds each attempt; an attempt that runs past it is
	// retried like a transient error. Default 30s; negative means none.
	AttemptTimeout time.Duration
}

// BreakerPolicy configures the per-pool circuit breaker.
type BreakerPolicy struct {
	// FailureThreshold is the number of consecutive failed calls (each
	// after its retries) that opens the breaker. Default 5.
	FailureThreshold int
	// CoolOff is how long the breaker stays open before letting one trial
	// call through (half-open). Default 5m.
	CoolOff time.Duration
}

// Alert describes a circuit breaker opening. Safe logs it at Error,
// increments prewarm_actuator_circuit_opened_total and passes it to
// SafetyOptions.OnAlert.
type Alert struct {
	Time                time.Time
	Backend             string
	Pool                string // "" for release calls
	ConsecutiveFailures int
	// LastError is the redacted message of the failure that opened it.
	LastError string
	// RetryAt is when the breaker will let a trial call through.
	RetryAt time.Time
}

// SafetyOptions configures Safe. The zero value of every field but Pools is
// a sensible default.
type SafetyOptions struct {
	// Pools are the pools the wrapped back-end may touch, with their bounds,
	// step limits and rate limits. Calls for any other pool are refused
	// with ErrUnknownPool.
	Pools []PoolConfig
	// MaxSaneDesired refuses (rather than clamps) desired values above it,
	// as a sign of a bug upstream. Default 100000.
	MaxSaneDesired int
	Retry          RetryPolicy
	Breaker        BreakerPolicy
	// Audit receives one JSON line per call (see AuditRecord), each in one
	// Write. Nil: no audit log. In production, an append-only file; wrap a
	// writer shared by several Safe wrappers in NewSyncWriter.
	Audit io.Writer
	// Metrics, from NewMetrics, shared by all Safe wrappers. Nil: none.
	Metrics *Metrics
	// Logger for changes (Info), failures (Warn) and alerts (Error).
	// Nil: slog.Default().
	Logger *slog.Logger
	// OnAlert, if set, is called (synchronously) when a breaker opens.
	OnAlert func(Alert)
	// Redactor replaces the secrets it knows (access keys, tokens) in
	// audit lines, logs and returned errors, should a back-end leak one.
	// Build one per binary from every secret (package redact) and share
	// it. Nil: nothing is redacted.
	Redactor *redact.Redactor
	// Persist, if set, saves a pool's Memory durably. Safe calls it with
	// the change marked pending before it asks the back-end (a Persist
	// error then cancels the change: an action that could not be recorded
	// is not taken), again once the back-end answered, and after a
	// schedule is published. Restore the saved Memory at start, so a
	// restart keeps min_interval and max_step counting from the last
	// change instead of from zero.
	Persist func(pool string, m Memory) error

	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// Sleep waits d or until ctx ends, returning ctx.Err() then. Nil: a
	// timer. Tests inject one that records delays and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1) scaling each backoff. Nil:
	// math/rand/v2.
	Jitter func() float64
	// NewToken makes an idempotency token per logical call. Nil:
	// NewIdempotencyToken.
	NewToken func() string
}

// Safe wraps any Actuator with the rules every back-end shares:
//
//   - never outside [min, max] of the pool's config and of the back-end's
//     own Capacity bounds;
//   - at most max_step instances added or removed per change;
//   - at most one change per min_interval per pool (ErrRateLimited);
//   - no back-end call when nothing changes;
//   - NaN, infinite, negative or absurd desired values refused with
//     ErrInvalidDesired, never applied;
//   - retries with exponential backoff and full jitter on ErrThrottled,
//     ErrTransient and per-attempt timeouts, honouring ctx;
//   - a per-pool circuit breaker that, after repeated failures, leaves
//     capacity where it is, returns ErrCircuitOpen and raises an Alert;
//   - an idempotency token per logical call (IdempotencyToken), reused
//     across retries;
//   - an audit line and metrics for every call.
//
// Safe is itself an Actuator and is safe for concurrent use; changes to one
// pool are serialised.
type Safe struct {
	inner   Actuator
	backend string
	opts    SafetyOptions
	log     *slog.Logger
	audit   *auditLog
	redact  *redact.Redactor
	pools   map[string]*poolState
	release *breaker
}

var _ Actuator = (*Safe)(nil)

// poolState is what Safe remembers about one pool.
type poolState struct {
	cfg       PoolConfig
	configErr error // the pool's configuration is invalid: refuse every call

	mu           sync.Mutex // serialises changes to the pool
	last         Change     // the last change made (At zero: none yet)
	lastSchedule planner.Schedule
	published    bool
	// warm is the warm tier's size last applied (warmSet: one was).
	warm    int
	warmSet bool
	// spot is the spot mix last applied, its fallback spelt out (spotSet:
	// one was).
	spot    planner.Spot
	spotSet bool
	breaker *breaker
}

// applied reports whether a change is remembered, and its size.
func (p *poolState) applied() (int, bool) { return p.last.To, !p.last.At.IsZero() }

// memory returns what p remembers. p.mu held.
func (p *poolState) memory() Memory {
	return Memory{LastChange: p.last, Schedule: slices.Clone(p.lastSchedule), Published: p.published}
}

// Change is one change Safe sent to a pool's back-end, the memory its rate
// limit (min_interval) and step limit (max_step) count from.
type Change struct {
	// At is when the change was decided; min_interval counts from it.
	At time.Time `json:"at"`
	// From is the size the pool was asked to leave (-1: unknown, for a
	// back-end that cannot report its size); To the size asked for.
	From int `json:"from"`
	To   int `json:"to"`
	// RequestID is the change's idempotency token (the audit line's
	// request_id).
	RequestID string `json:"request_id"`
	// Pending marks a change recorded before the back-end answered. A
	// restored pending change counts as made: after a crash mid-call the
	// next change waits out min_interval rather than risk a second one.
	Pending bool `json:"pending,omitempty"`
}

// Memory is what Safe remembers about one pool between calls: its last
// change and the last schedule it published. Persist saves it; Restore
// puts it back after a restart.
type Memory struct {
	// LastChange is the last change made; its At is zero before the first.
	LastChange Change `json:"last_change"`
	// Schedule is the last schedule published (Published: one was).
	Schedule  planner.Schedule `json:"schedule,omitempty"`
	Published bool             `json:"published,omitempty"`
}

// Memory returns what Safe remembers about pool.
func (s *Safe) Memory(pool string) (Memory, error) {
	p, ok := s.pools[pool]
	if !ok {
		return Memory{}, s.unknownPool(pool)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.memory(), nil
}

// Restore replaces what Safe remembers about pool with m, saved by Persist
// before a restart. A change dated in the future (a clock stepped back
// since) is taken as made now, so it can only delay the next change.
func (s *Safe) Restore(pool string, m Memory) error {
	p, ok := s.pools[pool]
	if !ok {
		return s.unknownPool(pool)
	}
	if m.LastChange.To < 0 || m.LastChange.To > s.opts.MaxSaneDesired {
		return fmt.Errorf("%w: pool %q: restored change to %d is outside [0, %d]", ErrInvalidDesired, pool, m.LastChange.To, s.opts.MaxSaneDesired)
	}
	if now := s.opts.Now(); m.LastChange.At.After(now) {
		m.LastChange.At = now
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last, p.lastSchedule, p.published = m.LastChange, slices.Clone(m.Schedule), m.Published
	return nil
}

// persist saves p's memory when a Persist hook is set. p.mu held.
func (s *Safe) persist(p *poolState) error {
	if s.opts.Persist == nil {
		return nil
	}
	if err := s.opts.Persist(p.cfg.Name, p.memory()); err != nil {
		return fmt.Errorf("%w: pool %q: %w", ErrNotPersisted, p.cfg.Name, err)
	}
	return nil
}

// NewSafe wraps inner with the safety rules configured by opts. A pool whose
// configuration is invalid (see PoolConfig.Validate) or listed twice is
// remembered with its error, and every call for it is refused with that
// error; validate configurations when loading them to fail earlier.
func NewSafe(inner Actuator, opts SafetyOptions) *Safe {
	opts = withDefaults(opts)
	s := &Safe{
		inner:   inner,
		backend: inner.Name(),
		opts:    opts,
		log:     opts.Logger.With("component", "actuator", "backend", inner.Name()),
		audit:   &auditLog{w: opts.Audit},
		redact:  opts.Redactor,
		pools:   map[string]*poolState{},
		release: &breaker{threshold: opts.Breaker.FailureThreshold, coolOff: opts.Breaker.CoolOff},
	}
	for _, cfg := range opts.Pools {
		p := &poolState{cfg: cfg, configErr: cfg.Validate(),
			breaker: &breaker{threshold: opts.Breaker.FailureThreshold, coolOff: opts.Breaker.CoolOff}}
		if _, dup := s.pools[cfg.Name]; dup {
			p.configErr = fmt.Errorf("%w: pool %q: name: configured twice", ErrInvalidConfig, cfg.Name)
		}
		s.pools[cfg.Name] = p
		s.setCircuitMetric(cfg.Name, BreakerClosed)
	}
	return s
}

func withDefaults(o SafetyOptions) SafetyOptions {
	if o.MaxSaneDesired <= 0 {
		o.MaxSaneDesired = 100000
	}
	if o.Retry.MaxAttempts <= 0 {
		o.Retry.MaxAttempts = 4
	}
	if o.Retry.BaseDelay <= 0 {
		o.Retry.BaseDelay = 200 * time.Millisecond
	}
	if o.Retry.MaxDelay <= 0 {
		o.Retry.MaxDelay = 10 * time.Second
	}
	if o.Retry.AttemptTimeout == 0 {
		o.Retry.AttemptTimeout = 30 * time.Second
	}
	if o.Breaker.FailureThreshold <= 0 {
		o.Breaker.FailureThreshold = 5
	}
	if o.Breaker.CoolOff <= 0 {
		o.Breaker.CoolOff = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = backoff.Sleep
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.NewToken == nil {
		o.NewToken = NewIdempotencyToken
	}
	return o
}

// Name returns the wrapped back-end's name.
func (s *Safe) Name() string { return s.backend }

// Unwrap returns the wrapped back-end, e.g. to reach the KEDA scaler's gRPC
// server behind its safety layer.
func (s *Safe) Unwrap() Actuator { return s.inner }

// BreakerState reports the circuit breaker state of pool (BreakerClosed for
// unknown pools). Use "" for the breaker guarding Release.
func (s *Safe) BreakerState(pool string) BreakerState {
	if pool == "" {
		return s.release.current()
	}
	if p, ok := s.pools[pool]; ok {
		return p.breaker.current()
	}
	return BreakerClosed
}

// Capacity reads the pool's size through the retry policy. It is not
// subject to the breaker, so operators can always look. A back-end that
// cannot report its size reads as the zero Capacity; ReadCapacity tells.
func (s *Safe) Capacity(ctx context.Context, pool string) (Capacity, error) {
	c, _, err := s.ReadCapacity(ctx, pool)
	return c, err
}

// ReadCapacity is Capacity saying whether the back-end reported the size
// (known false: it cannot, actuator.ErrNotImplemented, and c is zero),
// with the ready instances of a back-end that counts them apart
// (ReadyCounter).
func (s *Safe) ReadCapacity(ctx context.Context, pool string) (c Capacity, known bool, err error) {
	p, err := s.pool(pool)
	if err != nil {
		s.countCall(OpCapacity, OutcomeRefused)
		return Capacity{}, false, err
	}
	c, known, err = s.readCapacity(ctx, p)
	if rc, ok := s.inner.(ReadyCounter); ok && err == nil && known && !c.ReadyKnown {
		if ready, ok := rc.ReadyInstances(ctx, pool); ok {
			c.Ready, c.ReadyKnown = min(ready, c.Current), true
		}
	}
	outcome := OutcomeOK
	if err != nil {
		outcome = outcomeOf(err)
	}
	s.countCall(OpCapacity, outcome)
	return c, known, s.redact.Error(err)
}

// Apply is SetDesired for fractional planner outputs: it refuses NaN,
// infinities, negatives and values above MaxSaneDesired with
// ErrInvalidDesired (nothing applied, an audit line written), and rounds the
// rest up, so 3.2 GPUs of demand gets 4 instances (a value within 1e-9 of
// an integer is taken as that integer).
func (s *Safe) Apply(ctx context.Context, pool string, desired float64, reason string) error {
	if math.IsNaN(desired) || math.IsInf(desired, 0) || desired < 0 || desired > float64(s.opts.MaxSaneDesired) {
		err := fmt.Errorf("%w: pool %q: desired %v is not a count in [0, %d]; nothing applied",
			ErrInvalidDesired, pool, desired, s.opts.MaxSaneDesired)
		s.refuse(&AuditRecord{Op: OpSetDesired, Pool: pool, Reason: reason}, err)
		return err
	}
	return s.SetDesired(ctx, pool, int(math.Ceil(desired-1e-9)), reason)
}

// SetDesired applies desired to pool within the safety rules; see Safe.
// A value limited by bounds or max_step is applied as limited and returns
// nil (the audit line says which rule limited it); the next call continues
// stepping.
func (s *Safe) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	_, err := s.Resize(ctx, pool, desired, reason)
	return err
}

// Result is what one Resize did or, from Preview, would do.
type Result struct {
	// From is the size stepped from (FromKnown false: the back-end cannot
	// report it and nothing was applied before); To the size after bounds
	// and max_step; LimitedBy the rule that changed the request ("min",
	// "max", "max_step"), "" when none did.
	From      int    `json:"from"`
	FromKnown bool   `json:"from_known"`
	To        int    `json:"to"`
	LimitedBy string `json:"limited_by,omitempty"`
	// Outcome is OutcomeOK (applied), OutcomeNoop (already there),
	// OutcomeRateLimited (min_interval not over: nothing applied until
	// NextChangeAt) or, for a failed call, the audit line's outcome.
	Outcome      string    `json:"outcome"`
	NextChangeAt time.Time `json:"next_change_at,omitzero"`
	// RequestID is the call's idempotency token ("" for a preview).
	RequestID string `json:"request_id,omitempty"`
}

// Resize is SetDesired returning what it did: the sizes, the rule that
// limited the request, and the outcome. A rate-limited change returns its
// Result with an error wrapping ErrRateLimited. Where the pool already
// holds the size asked for (OutcomeNoop), a SpotSettler back-end moves
// the pool's on-demand stand-ins back to spot (settleSpot); its failure is
// returned with the no-op's Result.
func (s *Safe) Resize(ctx context.Context, pool string, desired int, reason string) (Result, error) {
	rec := AuditRecord{Op: OpSetDesired, Pool: pool, Requested: intPtr(desired), Reason: reason}
	if desired < 0 || desired > s.opts.MaxSaneDesired {
		err := fmt.Errorf("%w: pool %q: desired %d is outside [0, %d]; nothing applied",
			ErrInvalidDesired, pool, desired, s.opts.MaxSaneDesired)
		s.refuse(&rec, err)
		return Result{Outcome: OutcomeRefused}, err
	}
	p, err := s.pool(pool)
	if err != nil {
		s.refuse(&rec, err)
		return Result{Outcome: OutcomeRefused}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()

	// The rate limit counts from when a change was decided, not from when
	// its retries ended, so a service ticking every min_interval is not
	// refused every other tick.
	decided := s.opts.Now()
	if !s.admit(p.breaker, pool) {
		return Result{Outcome: OutcomeCircuitOpen}, s.circuitOpen(&rec, pool)
	}
	ctx, rec.RequestID = s.withToken(ctx)

	capacity, known, err := s.readCapacity(ctx, p)
	if err != nil {
		return Result{Outcome: OutcomeError}, s.fail(ctx, &rec, p.breaker, fmt.Errorf("reading pool %q before changing it: %w", pool, err))
	}
	res, err := s.decide(p, capacity, known, desired, decided)
	res.RequestID = rec.RequestID
	if res.FromKnown {
		rec.From = intPtr(res.From)
	}
	switch {
	case err != nil && errors.Is(err, ErrRateLimited):
		p.breaker.abandon()
		rec.To, rec.LimitedBy = intPtr(res.To), res.LimitedBy
		s.finish(&rec, OutcomeRateLimited, err)
		return res, err
	case err != nil:
		p.breaker.abandon()
		s.refuse(&rec, err)
		return res, err
	}
	rec.To, rec.LimitedBy = intPtr(res.To), res.LimitedBy
	if res.Outcome == OutcomeNoop {
		s.succeed(p.breaker, pool)
		s.finish(&rec, OutcomeNoop, nil)
		s.log.Debug("pool already at desired size", "pool", pool, "desired", res.To)
		return res, s.settleSpot(ctx, p)
	}

	if err := s.audit.unavailable(); err != nil {
		return s.holdUnaudited(&rec, p, res, err)
	}
	// Write ahead: the change is on record before the back-end hears of
	// it, so a crash mid-call cannot let a restart repeat it at once.
	before := p.last
	from := res.From
	if !res.FromKnown {
		from = -1
	}
	p.last = Change{At: decided, From: from, To: res.To, RequestID: rec.RequestID, Pending: true}
	if err := s.persist(p); err != nil {
		p.last = before
		p.breaker.abandon()
		res.Outcome = OutcomeRefused
		s.refuse(&rec, err)
		return res, err
	}
	ctx, slot := withRequestIDSlot(ctx)
	rec.Attempts, err = s.retry(ctx, OpSetDesired, func(ctx context.Context) error {
		return s.inner.SetDesired(ctx, pool, res.To, reason)
	})
	rec.ProviderRequestID = slot.get()
	if err != nil {
		p.last = before
		if perr := s.persist(p); perr != nil {
			s.log.Error("could not record that a change failed; the next one may wait for min_interval", "pool", pool, "error", s.redact.String(perr.Error()))
		}
		res.Outcome = OutcomeError
		return res, s.fail(ctx, &rec, p.breaker, fmt.Errorf("setting pool %q to %d: %w", pool, res.To, err))
	}
	p.last.Pending = false
	if err := s.persist(p); err != nil {
		s.log.Error("change applied but not confirmed on record; a restart counts it as made", "pool", pool, "error", s.redact.String(err.Error()))
	}
	s.succeed(p.breaker, pool)
	if m := s.opts.Metrics; m != nil {
		m.desired.WithLabelValues(s.backend, pool).Set(float64(res.To))
	}
	res.Outcome = OutcomeOK
	s.finish(&rec, OutcomeOK, nil)
	s.log.Info("pool resized", "pool", pool, "from", res.From, "to", res.To, "requested", desired,
		"limited_by", res.LimitedBy, "reason", s.redact.String(reason), "request_id", rec.RequestID)
	return res, nil
}

// Preview returns what Resize would do with desired for a pool whose
// back-end reported c (known false: it cannot report its size), without
// calling the back-end or writing an audit line: the forecast-only mode's
// "would set". Its Outcome is OutcomeOK for a change that would be made.
func (s *Safe) Preview(pool string, c Capacity, known bool, desired int) (Result, error) {
	if desired < 0 || desired > s.opts.MaxSaneDesired {
		return Result{Outcome: OutcomeRefused}, fmt.Errorf("%w: pool %q: desired %d is outside [0, %d]",
			ErrInvalidDesired, pool, desired, s.opts.MaxSaneDesired)
	}
	p, err := s.pool(pool)
	if err != nil {
		return Result{Outcome: OutcomeRefused}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	res, err := s.decide(p, c, known, desired, s.opts.Now())
	if err != nil && errors.Is(err, ErrRateLimited) {
		return res, nil
	}
	return res, err
}

// decide applies the bounds, max_step and min_interval to desired for a
// pool that reported c at now. p.mu held.
func (s *Safe) decide(p *poolState, c Capacity, known bool, desired int, now time.Time) (Result, error) {
	// The size to step from: the back-end's, or, for a back-end that cannot
	// report it, the last one Safe applied.
	res := Result{From: c.Desired, FromKnown: known}
	if last, ok := p.applied(); !known && ok {
		res.From, res.FromKnown = last, true
	}
	target, limitedBy, err := s.limit(p.cfg, c, res.From, res.FromKnown, desired)
	if err != nil {
		res.Outcome = OutcomeRefused
		return res, err
	}
	res.To, res.LimitedBy = target, limitedBy
	if res.FromKnown && target == res.From {
		res.Outcome = OutcomeNoop
		return res, nil
	}
	if since := now.Sub(p.last.At); p.cfg.MinInterval > 0 && !p.last.At.IsZero() && since < p.cfg.MinInterval {
		res.Outcome, res.NextChangeAt = OutcomeRateLimited, p.last.At.Add(p.cfg.MinInterval)
		return res, fmt.Errorf("%w: pool %q changed %s ago, min_interval is %s; %d → %d not applied",
			ErrRateLimited, p.cfg.Name, since.Round(time.Millisecond), p.cfg.MinInterval, res.From, target)
	}
	res.Outcome = OutcomeOK
	return res, nil
}

// limit applies the bounds (config and back-end) and the step limit. When
// fromKnown is false there is no step limit to apply.
func (s *Safe) limit(cfg PoolConfig, c Capacity, from int, fromKnown bool, desired int) (target int, limitedBy string, err error) {
	lo, hi := cfg.MinInstances, cfg.MaxInstances
	if c.Min > lo {
		lo = c.Min
	}
	if c.Max > 0 && c.Max < hi {
		hi = c.Max
	}
	if lo > hi {
		return 0, "", fmt.Errorf("%w: pool %q: bounds conflict: config [%d, %d], back-end [%d, %d]; nothing applied",
			ErrInvalidConfig, cfg.Name, cfg.MinInstances, cfg.MaxInstances, c.Min, c.Max)
	}
	target = desired
	if cfg.MaxStep > 0 && fromKnown {
		switch {
		case target > from+cfg.MaxStep:
			target, limitedBy = from+cfg.MaxStep, "max_step"
		case target < from-cfg.MaxStep:
			target, limitedBy = from-cfg.MaxStep, "max_step"
		}
	}
	// Bounds win over the step limit: a pool found outside them is brought
	// back at once.
	switch {
	case target > hi:
		target, limitedBy = hi, "max"
	case target < lo:
		target, limitedBy = lo, "min"
	}
	return target, limitedBy, nil
}

// PublishSchedule hands future steps to the back-end after checking them:
// steps must be in time order with non-zero times and sane sizes (else
// ErrInvalidDesired); each step is clamped to the pool's bounds and limited
// to max_step from the one before (the first from the pool's current
// desired size). Publishing the same schedule twice calls the back-end
// once. min_interval is not enforced between steps: the planner's step
// spacing governs them.
func (s *Safe) PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error {
	rec := AuditRecord{Op: OpPublishSchedule, Pool: pool, Steps: len(steps)}
	p, err := s.pool(pool)
	if err == nil {
		err = s.checkSteps(pool, steps)
	}
	if err != nil {
		s.refuse(&rec, err)
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !s.admit(p.breaker, pool) {
		return s.circuitOpen(&rec, pool)
	}
	ctx, rec.RequestID = s.withToken(ctx)
	capacity, known, err := s.readCapacity(ctx, p)
	if err != nil {
		return s.fail(ctx, &rec, p.breaker, fmt.Errorf("reading pool %q before publishing its schedule: %w", pool, err))
	}
	prev, prevKnown := capacity.Desired, known
	if last, ok := p.applied(); !known && ok {
		prev, prevKnown = last, true
	}
	limited := make(planner.Schedule, len(steps))
	for i, st := range steps {
		target, limitedBy, err := s.limit(p.cfg, capacity, prev, prevKnown, st.Desired)
		if err != nil {
			p.breaker.abandon()
			s.refuse(&rec, err)
			return err
		}
		if limitedBy != "" {
			st.Reason += fmt.Sprintf(" (limited by %s: %d → %d)", limitedBy, st.Desired, target)
			rec.LimitedBy = limitedBy
		}
		st.Desired = target
		limited[i] = st
		prev, prevKnown = target, true
	}
	if p.published && slices.EqualFunc(limited, p.lastSchedule, stepsEqual) {
		s.succeed(p.breaker, pool)
		s.finish(&rec, OutcomeNoop, nil)
		return nil
	}
	ctx, slot := withRequestIDSlot(ctx)
	rec.Attempts, err = s.retry(ctx, OpPublishSchedule, func(ctx context.Context) error {
		return s.inner.PublishSchedule(ctx, pool, limited)
	})
	rec.ProviderRequestID = slot.get()
	if errors.Is(err, ErrNotImplemented) {
		p.breaker.abandon()
		s.finish(&rec, OutcomeNotImplemented, err)
		return s.redact.Error(err)
	}
	if err != nil {
		return s.fail(ctx, &rec, p.breaker, fmt.Errorf("publishing %d steps for pool %q: %w", len(limited), pool, err))
	}
	p.lastSchedule, p.published = limited, true
	if err := s.persist(p); err != nil {
		s.log.Warn("schedule published but not recorded; a restart publishes it again", "pool", pool, "error", s.redact.String(err.Error()))
	}
	s.succeed(p.breaker, pool)
	s.finish(&rec, OutcomeOK, nil)
	s.log.Info("schedule published", "pool", pool, "steps", len(limited), "request_id", rec.RequestID)
	return nil
}

// SetWarm asks the pool's back-end to keep warm stopped instances
// (WarmPooler), within [0, the pool's max]; a back-end without a warm
// tier returns ErrNotImplemented. It is audited, retried and guarded by
// the pool's circuit breaker like a resize, and a repeat of the size last
// applied is a no-op that calls nothing, except on a WarmSettler: there
// it settles the tier (SettleWarm) under the same breaker and retries,
// audited when the settling changed the pool or failed.
func (s *Safe) SetWarm(ctx context.Context, pool string, warm int, reason string) error {
	rec := AuditRecord{Op: OpSetWarm, Pool: pool, Requested: intPtr(warm), Reason: reason}
	wp, ok := s.inner.(WarmPooler)
	var settle func(context.Context) (bool, error)
	if ws, ok := s.inner.(WarmSettler); ok {
		settle = func(ctx context.Context) (bool, error) { return ws.SettleWarm(ctx, pool) }
	}
	return s.setTier(ctx, &rec, tierCall{
		check: func(p *poolState) error {
			if warm < 0 || warm > max(p.cfg.Limits.MaxInstances, 0) {
				return fmt.Errorf("%w: pool %q: warm %d is outside [0, max %d]; nothing applied",
					ErrInvalidDesired, pool, warm, p.cfg.Limits.MaxInstances)
			}
			return nil
		},
		missing: lacking(ok, "keeps no warm tier"),
		applied: func(p *poolState) bool { return p.warmSet && p.warm == warm },
		call:    func(ctx context.Context) error { return wp.SetWarm(ctx, pool, warm, reason) },
		settle:  settle,
		done:    func(p *poolState) { p.warm, p.warmSet, rec.To = warm, true, intPtr(warm) },
		what:    fmt.Sprintf("keeping %d warm", warm),
	})
}

// SetSpot sets the pool's spot mix on its back-end (SpotMixer): spot.Share
// of the instances above spot.BaseOnDemand on spot, lost spot capacity
// replaced on demand unless spot.Fallback is planner.SpotFallbackNone. A
// share outside [0, 1], a base outside [0, the pool's max] or an unknown
// fallback is refused with ErrInvalidDesired, and a back-end that runs no
// spot mix returns ErrNotImplemented. It is audited, retried and guarded
// by the pool's circuit breaker like a resize, and a repeat of the mix
// last applied (an unset fallback being on demand) is a no-op that calls
// nothing.
func (s *Safe) SetSpot(ctx context.Context, pool string, spot planner.Spot, reason string) error {
	spot = spot.Normal()
	// The audit record states the mix in its reason, as the keys say it.
	rec := AuditRecord{Op: OpSetSpot, Pool: pool, Reason: fmt.Sprintf("spot.share %v, spot.base_on_demand %d, spot.fallback %s: %s",
		spot.Share, spot.BaseOnDemand, spot.Fallback, reason)}
	sm, ok := s.inner.(SpotMixer)
	return s.setTier(ctx, &rec, tierCall{
		check:   func(p *poolState) error { return checkSpot(pool, spot, p.cfg.Limits.MaxInstances) },
		missing: lacking(ok, "runs no spot mix"),
		applied: func(p *poolState) bool { return p.spotSet && p.spot == spot },
		call:    func(ctx context.Context) error { return sm.SetSpot(ctx, pool, spot, reason) },
		done:    func(p *poolState) { p.spot, p.spotSet = spot, true },
		what:    fmt.Sprintf("running %v of the instances above %d on spot", spot.Share, spot.BaseOnDemand),
	})
}

// settleSpot keeps the spot mix of a pool that holds the size asked for
// (Resize found nothing to change), p.mu held: a SpotSettler moves the
// on-demand instances that stood in for spot back to spot (SettleSpot)
// once a spot mix was applied (SetSpot); the back-end does so where that
// mix has a spot tier with the on-demand fallback, and finishes a move it
// began before the mix changed. Nothing is called for a pool never given
// a spot mix. Like the tiers' settling (settleTier): through the pool's
// circuit breaker with retries, audited as a set_spot settling only when
// it changed the pool or failed, a failure being the resize's error.
func (s *Safe) settleSpot(ctx context.Context, p *poolState) error {
	ss, ok := s.inner.(SpotSettler)
	if !ok || !p.spotSet {
		return nil
	}
	spot, pool := p.spot, p.cfg.Name
	rec := AuditRecord{Op: OpSetSpot, Pool: pool, Reason: fmt.Sprintf("spot.share %v, spot.base_on_demand %d, spot.fallback %s: moving on-demand stand-ins back to spot",
		spot.Share, spot.BaseOnDemand, spot.Fallback)}
	return s.settleTier(ctx, &rec, p, tierCall{
		settle: func(ctx context.Context) (bool, error) { return ss.SettleSpot(ctx, pool) },
		done:   func(*poolState) {},
		what:   fmt.Sprintf("running %v of the instances above %d on spot", spot.Share, spot.BaseOnDemand),
	})
}

// checkSpot refuses a spot mix no back-end should be given, naming the
// pool spec's keys (planner.Spot.Check).
func checkSpot(pool string, spot planner.Spot, maxInstances int) error {
	if err := spot.Check(maxInstances); err != nil {
		return fmt.Errorf("%w: pool %q: %v; nothing applied", ErrInvalidDesired, pool, err)
	}
	return nil
}

// tierCall is one call that sets a tier of a pool beside its size
// (SetWarm, SetSpot): check refuses what no back-end should be given,
// missing says what the back-end lacks to take it ("" when it can),
// applied reports whether the back-end already has it, call makes it,
// settle (nil: none) keeps it where it is already applied and reports
// whether that changed the pool, done records it made, and what words it
// for errors.
type tierCall struct {
	check   func(*poolState) error
	missing string
	applied func(*poolState) bool
	call    func(context.Context) error
	settle  func(context.Context) (bool, error)
	done    func(*poolState)
	what    string
}

// lacking is a tierCall's missing: what, unless the back-end has the
// tier's interface (ok).
func lacking(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

// setTier makes c for rec's pool under the pool's lock, audited as rec:
// refused when c.check says so, ErrNotImplemented when the back-end lacks
// it, nothing when the back-end already has it (or c.settle, see
// settleTier), else through the pool's circuit breaker with retries and
// an idempotency token.
func (s *Safe) setTier(ctx context.Context, rec *AuditRecord, c tierCall) error {
	p, err := s.pool(rec.Pool)
	if err == nil {
		err = c.check(p)
	}
	if err != nil {
		s.refuse(rec, err)
		return err
	}
	if c.missing != "" {
		err := fmt.Errorf("pool %q: back-end %s %s: %w", rec.Pool, s.backend, c.missing, ErrNotImplemented)
		s.finish(rec, OutcomeNotImplemented, err)
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.applied(p) {
		return s.settleTier(ctx, rec, p, c)
	}
	if !s.admit(p.breaker, rec.Pool) {
		return s.circuitOpen(rec, rec.Pool)
	}
	ctx, rec.RequestID = s.withToken(ctx)
	ctx, slot := withRequestIDSlot(ctx)
	rec.Attempts, err = s.retry(ctx, rec.Op, c.call)
	rec.ProviderRequestID = slot.get()
	if err != nil {
		return s.fail(ctx, rec, p.breaker, fmt.Errorf("%s in pool %q: %w", c.what, rec.Pool, err))
	}
	c.done(p)
	s.succeed(p.breaker, rec.Pool)
	s.finish(rec, OutcomeOK, nil)
	return nil
}

// settleTier keeps a tier the back-end already has (c.settle; nothing
// when nil) for rec's pool, p.mu held: through the pool's circuit breaker
// (an open one leaves it to a later call, as it does every change) with
// retries, audited as rec only when the settling changed the pool or
// failed.
func (s *Safe) settleTier(ctx context.Context, rec *AuditRecord, p *poolState, c tierCall) error {
	if c.settle == nil || !s.admit(p.breaker, rec.Pool) {
		return nil
	}
	ctx, rec.RequestID = s.withToken(ctx)
	ctx, slot := withRequestIDSlot(ctx)
	changed := false
	var err error
	rec.Attempts, err = s.retry(ctx, rec.Op, func(ctx context.Context) error {
		ch, err := c.settle(ctx)
		changed = changed || ch
		return err
	})
	rec.ProviderRequestID = slot.get()
	rec.Reason = "settling what was applied: " + rec.Reason
	if err != nil {
		return s.fail(ctx, rec, p.breaker, fmt.Errorf("%s in pool %q (settling): %w", c.what, rec.Pool, err))
	}
	s.succeed(p.breaker, rec.Pool)
	if changed {
		c.done(p)
		s.finish(rec, OutcomeOK, nil)
	}
	return nil
}

func (s *Safe) checkSteps(pool string, steps planner.Schedule) error {
	for i, st := range steps {
		switch {
		case st.At.IsZero():
			return fmt.Errorf("%w: pool %q: schedule step %d has no time", ErrInvalidDesired, pool, i)
		case i > 0 && !st.At.After(steps[i-1].At):
			return fmt.Errorf("%w: pool %q: schedule step %d (%s) is not after step %d (%s)",
				ErrInvalidDesired, pool, i, st.At.Format(time.RFC3339), i-1, steps[i-1].At.Format(time.RFC3339))
		case st.Desired < 0 || st.Desired > s.opts.MaxSaneDesired:
			return fmt.Errorf("%w: pool %q: schedule step %d desires %d, outside [0, %d]",
				ErrInvalidDesired, pool, i, st.Desired, s.opts.MaxSaneDesired)
		}
	}
	return nil
}

func stepsEqual(a, b planner.Step) bool {
	return a.At.Equal(b.At) && a.Desired == b.Desired && a.Reason == b.Reason
}

// Release passes a release to the back-end with retries, an idempotency
// token, an audit line and its own circuit breaker (not tied to a pool:
// checking that the instance belongs to a configured pool is the caller's
// job, e.g. the release hook's).
func (s *Safe) Release(ctx context.Context, instanceID, reason string) error {
	rec := AuditRecord{Op: OpRelease, Instance: instanceID, Reason: reason}
	if instanceID == "" {
		err := fmt.Errorf("%w: release: empty instance ID", ErrInvalidDesired)
		s.refuse(&rec, err)
		return err
	}
	if !s.admit(s.release, "") {
		return s.circuitOpen(&rec, "")
	}
	ctx, rec.RequestID = s.withToken(ctx)
	ctx, slot := withRequestIDSlot(ctx)
	var err error
	rec.Attempts, err = s.retry(ctx, OpRelease, func(ctx context.Context) error {
		return s.inner.Release(ctx, instanceID, reason)
	})
	rec.ProviderRequestID = slot.get()
	if errors.Is(err, ErrNotImplemented) {
		s.release.abandon()
		s.finish(&rec, OutcomeNotImplemented, err)
		return s.redact.Error(err)
	}
	if err != nil {
		return s.fail(ctx, &rec, s.release, fmt.Errorf("releasing instance %q: %w", instanceID, err))
	}
	s.succeed(s.release, "")
	s.finish(&rec, OutcomeOK, nil)
	s.log.Info("instance released", "instance", instanceID, "reason", s.redact.String(reason), "request_id", rec.RequestID)
	return nil
}

// pool looks up a configured pool.
func (s *Safe) pool(name string) (*poolState, error) {
	p, ok := s.pools[name]
	if !ok {
		return nil, s.unknownPool(name)
	}
	return p, p.configErr
}

func (s *Safe) unknownPool(name string) error {
	return fmt.Errorf("%w: %q is not among the pools configured for back-end %s (configured: %v)",
		ErrUnknownPool, name, s.backend, sortedKeys(s.pools))
}

// readCapacity reads the pool through the retry policy. known is false when
// the back-end cannot report capacity (ErrNotImplemented).
func (s *Safe) readCapacity(ctx context.Context, p *poolState) (c Capacity, known bool, err error) {
	_, err = s.retry(ctx, OpCapacity, func(ctx context.Context) error {
		var err error
		c, err = s.inner.Capacity(ctx, p.cfg.Name)
		return err
	})
	if errors.Is(err, ErrNotImplemented) {
		return Capacity{}, false, nil
	}
	if err != nil {
		return Capacity{}, false, err
	}
	if m := s.opts.Metrics; m != nil {
		m.current.WithLabelValues(s.backend, p.cfg.Name).Set(float64(c.Current))
		m.desired.WithLabelValues(s.backend, p.cfg.Name).Set(float64(c.Desired))
	}
	return c, true, nil
}

// retry runs call until it succeeds, fails with a non-retryable error, the
// attempts run out or ctx ends. It returns the number of attempts made.
func (s *Safe) retry(ctx context.Context, op string, call func(context.Context) error) (attempts int, err error) {
	pol := s.opts.Retry
	delays := backoff.Policy{Base: pol.BaseDelay, Max: pol.MaxDelay, Jitter: s.opts.Jitter}
	for attempt := 1; ; attempt++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if pol.AttemptTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, pol.AttemptTimeout)
		}
		start := time.Now()
		err = call(actx)
		// An attempt that ran past its own timeout is retried like a
		// transient failure even when the back-end's error does not wrap
		// context.DeadlineExceeded (SDKs often flatten it into a string).
		if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) &&
			!Retryable(err) && !errors.Is(err, ErrRejected) && !errors.Is(err, ErrNotImplemented) {
			err = fmt.Errorf("attempt timed out after %s: %w (%w)", pol.AttemptTimeout, ErrTransient, err)
		}
		cancel()
		if m := s.opts.Metrics; m != nil {
			m.latency.WithLabelValues(s.backend, op).Observe(time.Since(start).Seconds())
		}
		switch {
		case err == nil:
			return attempt, nil
		case ctx.Err() != nil:
			return attempt, fmt.Errorf("%w (gave up after %d attempts: %w)", ctx.Err(), attempt, err)
		case !Retryable(err):
			return attempt, err
		case attempt >= pol.MaxAttempts:
			return attempt, fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		delay := delays.Delay(attempt)
		s.log.Warn("retrying back-end call", "op", op, "attempt", attempt, "delay", delay, "error", s.redact.String(err.Error()))
		if m := s.opts.Metrics; m != nil {
			m.retries.WithLabelValues(s.backend, op).Inc()
		}
		if serr := s.opts.Sleep(ctx, delay); serr != nil {
			return attempt, fmt.Errorf("%w (gave up after %d attempts: %w)", serr, attempt, err)
		}
	}
}

// Retryable reports whether err is worth retrying: throttling, a transient
// provider failure or a timeout.
func Retryable(err error) bool {
	return errors.Is(err, ErrThrottled) || errors.Is(err, ErrTransient) || errors.Is(err, context.DeadlineExceeded)
}

// withToken returns ctx carrying an idempotency token, keeping the
// caller's if it set one.
func (s *Safe) withToken(ctx context.Context) (context.Context, string) {
	if t, ok := IdempotencyToken(ctx); ok {
		return ctx, t
	}
	t := s.opts.NewToken()
	return WithIdempotencyToken(ctx, t), t
}

// refuse records a call refused before it reached the back-end, keeping
// what rec already knows (requested size, request ID, ...).
func (s *Safe) refuse(rec *AuditRecord, err error) {
	s.finish(rec, OutcomeRefused, err)
	s.log.Warn("actuator call refused", "op", rec.Op, "pool", rec.Pool, "error", s.redact.String(err.Error()))
}

// circuitOpen records and returns a call refused by an open breaker.
func (s *Safe) circuitOpen(rec *AuditRecord, pool string) error {
	err := fmt.Errorf("%w: back-end %s, pool %q: capacity left unchanged", ErrCircuitOpen, s.backend, pool)
	s.finish(rec, OutcomeCircuitOpen, err)
	return err
}

// fail records a failed call, feeds the breaker and raises an alert when it
// opens. Failures caused by the caller's own context ending do not count.
func (s *Safe) fail(ctx context.Context, rec *AuditRecord, b *breaker, err error) error {
	err = s.redact.Error(err)
	s.finish(rec, OutcomeError, err)
	if ctx.Err() != nil {
		b.abandon()
		return err
	}
	opened, failures := b.failure(s.opts.Now())
	s.log.Warn("actuator call failed", "op", rec.Op, "pool", rec.Pool, "consecutive_failures", failures,
		"request_id", rec.RequestID, "error", err.Error())
	if opened {
		now := s.opts.Now()
		alert := Alert{Time: now, Backend: s.backend, Pool: rec.Pool, ConsecutiveFailures: failures,
			LastError: err.Error(), RetryAt: now.Add(s.opts.Breaker.CoolOff)}
		s.log.Error("circuit breaker open: actuator calls suspended, capacity left unchanged",
			"pool", rec.Pool, "consecutive_failures", failures, "retry_at", alert.RetryAt, "error", alert.LastError)
		s.setCircuitMetric(rec.Pool, BreakerOpen)
		if m := s.opts.Metrics; m != nil {
			m.circuitOpens.WithLabelValues(s.backend, rec.Pool).Inc()
		}
		if s.opts.OnAlert != nil {
			s.opts.OnAlert(alert)
		}
	}
	return err
}

// admit asks the breaker whether a call may proceed, publishing a move to
// half-open.
func (s *Safe) admit(b *breaker, pool string) bool {
	ok := b.allow(s.opts.Now())
	if ok && b.current() == BreakerHalfOpen {
		s.setCircuitMetric(pool, BreakerHalfOpen)
		s.log.Info("circuit breaker half-open: trying one call", "pool", pool)
	}
	return ok
}

// succeed feeds a success to the breaker, logging a recovery.
func (s *Safe) succeed(b *breaker, pool string) {
	if b.success() {
		s.log.Info("circuit breaker closed: actuator calls resumed", "pool", pool)
	}
	s.setCircuitMetric(pool, BreakerClosed)
}

func (s *Safe) setCircuitMetric(pool string, st BreakerState) {
	if m := s.opts.Metrics; m != nil {
		m.circuitState.WithLabelValues(s.backend, pool).Set(float64(st))
	}
}

// holdUnaudited refuses a resize while the audit log fails (auditErr):
// nothing is applied, and the refusal's own record tries the audit log
// again. p.mu held.
func (s *Safe) holdUnaudited(rec *AuditRecord, p *poolState, res Result, auditErr error) (Result, error) {
	p.breaker.abandon()
	res.Outcome = OutcomeAuditUnavailable
	err := fmt.Errorf("%w: pool %q: change to %d not applied: %w", ErrAuditUnavailable, p.cfg.Name, res.To, auditErr)
	s.finish(rec, OutcomeAuditUnavailable, err)
	return res, err
}

// finish completes rec, writes it to the audit log and counts the call.
func (s *Safe) finish(rec *AuditRecord, outcome string, err error) {
	rec.Time = s.opts.Now().UTC()
	rec.Backend = s.backend
	rec.Outcome = outcome
	rec.Reason = s.redact.String(rec.Reason)
	if err != nil {
		rec.Error = s.redact.String(err.Error())
	}
	if werr := s.audit.write(*rec); werr != nil {
		line, _ := json.Marshal(rec)
		s.log.Error("audit log write failed: the record is in this line; resizes are held until the audit log takes one",
			"error", werr, "record", string(line))
	}
	s.countCall(rec.Op, outcome)
}

func (s *Safe) countCall(op, outcome string) {
	if m := s.opts.Metrics; m != nil {
		m.calls.WithLabelValues(s.backend, op, outcome).Inc()
	}
}

// outcomeOf maps an error to an outcome label.
func outcomeOf(err error) string {
	switch {
	case errors.Is(err, ErrCircuitOpen):
		return OutcomeCircuitOpen
	case errors.Is(err, ErrNotImplemented):
		return OutcomeNotImplemented
	case errors.Is(err, ErrRateLimited):
		return OutcomeRateLimited
	case errors.Is(err, ErrInvalidDesired), errors.Is(err, ErrUnknownPool), errors.Is(err, ErrInvalidConfig):
		return OutcomeRefused
	}
	return OutcomeError
}
