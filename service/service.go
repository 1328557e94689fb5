package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/store"
)

// Deps are the service's collaborators, built by the caller (cmd/forecaster
// or a test) so the service itself opens nothing.
type Deps struct {
	// Store is where demand and utilisation are read.
	Store store.Querier
	// Actuators maps each pool to its (Safe-wrapped) actuator.
	Actuators map[string]*actuator.Safe
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Metrics; nil means none.
	Metrics *Metrics
}

// Service runs the scaling loop over every configured pool.
type Service struct {
	cfg   Config
	deps  Deps
	log   *slog.Logger
	pools []*pool

	mu     sync.Mutex // guards the pools' status
	lastOK time.Time
}

// pool is one pool's live state.
type pool struct {
	cfg       PoolConfig
	plan      planner.Config
	ctl       *control.Controller
	act       *actuator.Safe
	nextRefit time.Time
	status    PoolStatus
}

// PoolStatus is what /api/v1/pools reports about a pool.
type PoolStatus struct {
	Name      string    `json:"name"`
	Backend   string    `json:"backend"`
	At        time.Time `json:"at"`
	Current   int       `json:"current"`
	Desired   int       `json:"desired"`
	Reason    string    `json:"reason"`
	DemandRPS float64   `json:"demand_rps"`
	// Gate is the level the last decision followed (model, profile or
	// reactive: also once a plan has run out without a fresh refit).
	Gate       string           `json:"gate"`
	GateReason string           `json:"gate_reason"`
	Model      string           `json:"model"`
	LastRefit  time.Time        `json:"last_refit"`
	Plan       planner.Schedule `json:"plan"`
	Error      string           `json:"error,omitempty"`
}

// New builds the service; every pool must have an actuator in deps.
func New(cfg Config, deps Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Store == nil {
		return nil, errors.New("service: no store")
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	s := &Service{cfg: cfg, deps: deps, log: deps.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, pc := range cfg.Pools {
		act, ok := deps.Actuators[pc.Name]
		if !ok {
			return nil, fmt.Errorf("service: pool %q has no actuator", pc.Name)
		}
		plan, err := pc.Planner()
		if err != nil {
			return nil, fmt.Errorf("pool %q: %w", pc.Name, err)
		}
		ctl, err := control.New(plan, pc.Settings())
		if err != nil {
			return nil, fmt.Errorf("pool %q: %w", pc.Name, err)
		}
		s.pools = append(s.pools, &pool{cfg: pc, plan: plan, ctl: ctl, act: act,
			status: PoolStatus{Name: pc.Name, Backend: pc.Backend}})
	}
	return s, nil
}

// Run ticks every Interval until ctx ends. A failing pool is logged and
// retried next tick; it never stops the others.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		s.Tick(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick takes one decision for every pool at the service clock's now and
// returns the first failing pool's error (all pools are still attempted;
// each pool's error is in its status until its next successful tick).
func (s *Service) Tick(ctx context.Context) error {
	now := s.deps.Now()
	var first error
	for _, p := range s.pools {
		err := s.tickPool(ctx, p, now)
		s.mu.Lock()
		p.status.At = now
		p.status.Error = ""
		if err != nil {
			p.status.Error = err.Error()
		} else {
			s.lastOK = now
		}
		s.mu.Unlock()
		if err != nil {
			s.log.Warn("pool decision failed", "pool", p.cfg.Name, "err", err)
			s.deps.Metrics.failure(p.cfg.Name)
			if first == nil {
				first = fmt.Errorf("pool %s: %w", p.cfg.Name, err)
			}
		}
	}
	return first
}

// tickPool takes one pool's decision. A failed refit does not stop it: the
// plan in force is followed until it runs out. When the live signals cannot
// be read the pool is held (control.Controller.Hold): the plan and the
// schedule floors may still raise it, nothing lowers it. Every failure is
// returned, so the tick counts as failed and /healthz notices.
func (s *Service) tickPool(ctx context.Context, p *pool, now time.Time) error {
	var errs []error
	if !now.Before(p.nextRefit) {
		if err := s.refit(ctx, p, now); err != nil && !errors.Is(err, control.ErrNoHistory) {
			errs = append(errs, err)
		}
	}
	capa, err := p.act.Capacity(ctx, p.cfg.Name)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("reading capacity: %w", err))...)
	}
	// The reactive rules step from what the pool was last asked for
	// (booting instances included), not from what is up yet.
	current := capa.Desired
	if current == 0 {
		current = capa.Current
	}
	var step planner.Step
	obs, err := s.observe(ctx, p, now, capa.Current)
	holding := err != nil
	if holding {
		errs = append(errs, fmt.Errorf("reading live signals: %w", err))
		step = p.ctl.Hold(now, current, "live signals unavailable")
	} else {
		step = p.ctl.Decide(now, obs, current)
	}
	s.mu.Lock()
	p.status.Current, p.status.Desired, p.status.Reason, p.status.DemandRPS = capa.Current, step.Desired, step.Reason, obs.DemandRPS
	if level := p.ctl.Level(); level != "" {
		p.status.Gate = level // what Decide followed: reactive once a plan runs out
	}
	s.mu.Unlock()
	demand := obs.DemandRPS
	if holding {
		demand = math.NaN() // unknown, not zero
	}
	s.deps.Metrics.decision(p.cfg.Name, step.Desired, capa.Current, demand)
	if holding && step.Desired <= max(current, p.plan.Fleet.MinInstances) {
		// Holding is leaving the pool alone unless the plan or a floor
		// raises it: a back-end that cannot report its size reads as 0
		// here and must not be set to 0, or to min.
		return errors.Join(errs...)
	}
	// Rate limiting is expected (the next tick tries again); an open
	// breaker leaves capacity where it is and is reported as a failure.
	err = p.act.Apply(ctx, p.cfg.Name, float64(step.Desired), step.Reason)
	if err != nil && !errors.Is(err, actuator.ErrRateLimited) {
		errs = append(errs, fmt.Errorf("applying %d: %w", step.Desired, err))
	}
	return errors.Join(errs...)
}

// refit reads the demand history and refits the pool's controller. The
// refit time is now rounded down to the forecast step counted from the Unix
// epoch, the grid the store's aggregate windows use (InfluxDB's
// aggregateWindow), so every history value is one whole window. A failed
// read is retried next tick; a refit that fails otherwise waits for the next
// refit time.
func (s *Service) refit(ctx context.Context, p *pool, now time.Time) error {
	set := p.ctl.Settings()
	at := epochFloor(now, set.Step)
	start := at.Add(-time.Duration(set.History/set.Step) * set.Step)
	hist, err := s.readSeries(ctx, p.cfg.Demand, start, at, set.Step, store.Max)
	if err != nil {
		return fmt.Errorf("reading demand history: %w", err)
	}
	began := time.Now()
	r, err := p.ctl.Refit(at, hist)
	p.nextRefit = at.Add(set.RefitEvery)
	if err != nil && !errors.Is(err, control.ErrNoHistory) {
		return err // the refit in force stays
	}
	s.deps.Metrics.refit(p.cfg.Name, time.Since(began), r)
	s.mu.Lock()
	p.status.Gate, p.status.GateReason, p.status.Model, p.status.LastRefit = r.Gate.Level, r.Gate.Reason, r.Model, r.At
	p.status.Plan = p.ctl.Plan(now)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.log.Info("refit", "pool", p.cfg.Name, "model", r.Model, "gate", r.Gate.Level, "reason", r.Gate.Reason)
	if p.cfg.PublishSchedule {
		err := p.act.PublishSchedule(ctx, p.cfg.Name, p.ctl.Plan(now))
		if err != nil && !errors.Is(err, actuator.ErrNotImplemented) {
			return fmt.Errorf("publishing schedule: %w", err)
		}
	}
	return nil
}

// epochFloor rounds t down to a multiple of step counted from the Unix
// epoch. (time.Time.Truncate counts from year 1, which differs for steps
// that do not divide a day, e.g. 7m or 5h.)
func epochFloor(t time.Time, step time.Duration) time.Time {
	ns, d := t.UnixNano(), int64(step)
	return time.Unix(0, ns-((ns%d)+d)%d).In(t.Location())
}

// observe reads the live signals of the last interval: demand, utilisation
// (measured, or derived from demand and the instances that exist, booting
// ones included, as the actuators cannot tell them apart) and queue. No
// demand sample in the interval is an error, not zero demand: a silent
// collector must not read as an idle pool and scale it in.
func (s *Service) observe(ctx context.Context, p *pool, now time.Time, instances int) (planner.Observation, error) {
	span := s.cfg.Interval
	obs := planner.Observation{At: now, Span: span}
	demand, n, err := s.latest(ctx, p.cfg.Demand, now, span)
	if err != nil {
		return obs, err
	}
	if n == 0 {
		return obs, fmt.Errorf("no %s sample in the last %v: is the collector writing it?", p.cfg.Demand, span)
	}
	obs.DemandRPS = demand
	if p.cfg.Queue != nil {
		if obs.Queue, _, err = s.latest(ctx, *p.cfg.Queue, now, span); err != nil {
			return obs, err
		}
	}
	if p.cfg.Utilisation != nil {
		total, n, err := s.latest(ctx, *p.cfg.Utilisation, now, span)
		if err != nil {
			return obs, err
		}
		if n > 0 { // the mean over the GPUs (tag sets), percent to a share
			obs.Utilisation = math.Min(1, total/float64(n)/100)
			if obs.Queue > 0 {
				obs.Utilisation = 1
			}
			return obs, nil
		}
		// No utilisation sample: derive it as if none were configured.
	}
	switch capacity := float64(instances) * p.plan.Fleet.RPS(); {
	case obs.Queue > 0 || (capacity == 0 && demand > 0):
		obs.Utilisation = 1
	case capacity > 0:
		obs.Utilisation = math.Min(1, demand/capacity)
	}
	return obs, nil
}

// latest reads ref over [now−span, now]: each tag set's raw points folded by
// ref.Aggregate (default mean), summed over the n tag sets that had points.
func (s *Service) latest(ctx context.Context, ref SeriesRef, now time.Time, span time.Duration) (total float64, n int, err error) {
	series, err := s.deps.Store.Query(ctx, store.Query{Measurement: ref.Measurement, Match: ref.Match,
		Start: now.Add(-span), End: now.Add(time.Nanosecond)})
	if err != nil {
		return 0, 0, err
	}
	for _, ser := range series {
		if v, ok := fold(ser.Samples, ref.Aggregate); ok {
			total += v
			n++
		}
	}
	return total, n, nil
}

// fold combines raw samples as agg does (default mean).
func fold(samples []store.Sample, agg store.Aggregate) (float64, bool) {
	if len(samples) == 0 {
		return 0, false
	}
	v := samples[0].Value
	for _, smp := range samples[1:] {
		switch agg {
		case store.Max:
			v = math.Max(v, smp.Value)
		case store.Min:
			v = math.Min(v, smp.Value)
		case store.Last:
			v = smp.Value
		default: // mean, sum
			v += smp.Value
		}
	}
	switch agg {
	case store.Count:
		return float64(len(samples)), true
	case "", store.Mean:
		return v / float64(len(samples)), true
	}
	return v, true
}

// readSeries queries ref over [start, end) in windows of step (start and
// end on the epoch-aligned grid) and sums the tag sets per window; a window
// no tag set had a point in is NaN (missing). agg is the default when ref
// sets no aggregate.
func (s *Service) readSeries(ctx context.Context, ref SeriesRef, start, end time.Time, step time.Duration, agg store.Aggregate) ([]float64, error) {
	if ref.Aggregate != "" {
		agg = ref.Aggregate
	}
	n := int(end.Sub(start) / step)
	series, err := s.deps.Store.Query(ctx, store.Query{Measurement: ref.Measurement, Match: ref.Match,
		Start: start, End: end, Step: step, Aggregate: agg})
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	for _, ser := range series {
		for _, smp := range ser.Samples {
			i := int(smp.Time.Sub(start) / step)
			if smp.Time.Before(start) || i >= n || math.IsNaN(smp.Value) {
				continue
			}
			if math.IsNaN(out[i]) {
				out[i] = 0
			}
			out[i] += smp.Value
		}
	}
	return out, nil
}

// Status returns every pool's latest state.
func (s *Service) Status() []PoolStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PoolStatus, len(s.pools))
	for i, p := range s.pools {
		out[i] = p.status
	}
	return out
}
