package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/tune"
)

// pool is one pool's live state. The decision goroutine owns tuner, act,
// nextRefit and saved; the fields marked s.mu are shared with the API.
type pool struct {
	spec poolspec.Pool
	plan planner.Config
	// tuner replays the pool's candidate policies and picks one (its
	// live controller: ctl).
	tuner *tune.Tuner
	act   *actuator.Safe
	// follow is act's back-end when it serves the plan from this process
	// (Follower), nil otherwise.
	follow Follower
	// inner is act's back-end, unwrapped: a dry-run one is told the
	// restored last change (resumer). Written under s.mu (takePending), so
	// that a reload may read it there.
	inner actuator.Actuator
	// spotApplied is the spot mix act last applied for the pool's spot:
	// block (nil: none since act was built).
	spotApplied *planner.Spot

	nextRefit time.Time
	// starts learns the fleet's start times from the decisions;
	// startsSaved is its Recorded count when last saved; startsSplit
	// tells whether the last decision's read told warm starts from cold
	// boots (a warm tier whose stopped instances the back-end counts).
	starts      control.StartTimes
	startsSaved int
	startsSplit bool
	// startsRefused are the boot_delay and warm_start last measured that
	// could not be put in force, so that the refusal is logged once.
	startsRefused [2]time.Duration
	// earlyRefitAfter is when a pool that warms up may next refit before
	// its refit time: one early try a forecast step, so that a refit that
	// fails on the new history is not retried at every decision.
	earlyRefitAfter time.Time
	saved           controllerMark // what the state file holds of ctl
	savedAt         time.Time      // when it was saved (the tick's now)
	refitsUnsaved   int            // refits since it was saved
	lastSeen        time.Time      // the previous decision, for the billing counters
	paused          bool           // the last decision was paused
	decisions       decisionLog    // the history recorded in the state file

	// stamps are the writes of the shared state this replica adopted or
	// made (ActStamp, ModeStamp); guarded by s.mu.
	stamps sharedPool

	// Guarded by s.mu.
	mode      poolspec.Mode
	override  *state.ModeOverride // the API's mode, nil: the file's
	busySince time.Time           // a decision in flight started at its tick's now
	pending   *pool               // a reloaded configuration, taken at the next decision
	status    PoolStatus
	samples   sampleRing // the last day's decisions, for the charts
	views     views      // the refit in force, for the API
}

// ctl is the pool's live controller: the one its tuner's choice steers.
func (p *pool) ctl() *control.Controller { return p.tuner.Live() }

// controllerMark is what the saving rules compare (saveController): the
// gate level, the reactive rules' memory and the tuner's candidate.
type controllerMark struct {
	level, candidate string
	reactive         planner.ReactiveState
}

// reactiveEqual reports whether the reactive rules' memory is the same.
func (a controllerMark) reactiveEqual(b controllerMark) bool {
	ra, rb := a.reactive, b.reactive
	return ra.Desired == rb.Desired && ra.HighSince.Equal(rb.HighSince) && ra.QueueSince.Equal(rb.QueueSince) &&
		ra.LowSince.Equal(rb.LowSince) && ra.LastOut.Equal(rb.LastOut) && ra.LastAction.Equal(rb.LastAction)
}

// newController builds a pool's planner configuration and its tuner
// around the live controller.
func (s *Service) newController(ps poolspec.Pool) (planner.Config, *tune.Tuner, error) {
	plan, err := ps.Planner()
	if err != nil {
		return plan, nil, fmt.Errorf("pool %q: %w", ps.Name, err)
	}
	set := ps.Settings()
	set.NewModel = s.deps.NewModel
	ctl, err := control.New(plan, set)
	if err != nil {
		return plan, nil, fmt.Errorf("pool %q: %w", ps.Name, err)
	}
	tuner, err := tune.New(ctl, ps.Tuning(s.Interval()))
	if err != nil {
		return plan, nil, fmt.Errorf("pool %q: %w", ps.Name, err)
	}
	return plan, tuner, nil
}

// newPool builds a pool's planner, controller and back-end.
func (s *Service) newPool(ctx context.Context, ps poolspec.Pool) (*pool, error) {
	plan, tuner, err := s.newController(ps)
	if err != nil {
		return nil, err
	}
	act, follow, inner, err := s.newSafe(ctx, ps)
	if err != nil {
		return nil, err
	}
	if err := checkTiers(ps, plan, actuator.TiersOf(inner)); err != nil {
		return nil, err
	}
	p := &pool{spec: ps, plan: plan, tuner: tuner, act: act, follow: follow, inner: inner, mode: ps.Mode}
	p.starts.Expect(plan.Fleet.BootDelay, plan.Fleet.WarmStart)
	p.status = PoolStatus{Name: ps.Name, Backend: ps.Backend, Mode: ps.Mode, ModeSource: "config", Limits: ps.Fleet.Limits, WarmStart: ps.Fleet.WarmStart,
		Planned: NaN(), ForecastMASE: NaN(), DemandRPS: NaN(), Forecast: ForecastBounds{NaN(), NaN(), NaN()},
		Cost: Cost{PricePerHour: plan.Prices.OnDemandPerHour, ByTier: pricedByTier(plan)}}
	p.status.setSpot(plan)
	p.views = buildViews(ps.Name, tuner.Live(), plan)
	p.status.setCharge(tuner.Live().InCharge())
	s.deps.Metrics.mode(ps.Name, ps.Mode)
	s.deps.Metrics.startTimes(ps.Name, plan.Fleet)
	return p, nil
}

// CheckTiers refuses the pools of file whose back-ends cannot run the
// tiers their configuration asks for, every one, as serve refuses each
// when it starts and when a reload asks for it (checkTiers); have says
// which tiers a pool's back-end runs. 'forecaster serve --check-config'
// passes the tiers the back-ends declare (builtin.Tiers), so that it
// refuses what serve would without building a back-end or calling a
// cloud API.
func CheckTiers(file *poolspec.File, have func(actuator.PoolConfig) actuator.Tiers) error {
	var errs []error
	for _, ps := range file.Pools {
		plan, err := ps.Planner()
		if err == nil {
			err = checkTiers(ps, plan, have(ps.Actuator()))
		} else {
			err = fmt.Errorf("pool %q: %w", ps.Name, err)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkTiers refuses a pool whose back-end cannot run the tiers its
// configuration asks for: a warm tier (warm_start) needs one that keeps a
// warm tier (a WarmPooler), a spot tier (spot.share above 0) one that
// runs a spot mix (a SpotMixer); have is what the back-end runs. Each
// message names the pool, the key and the back-end.
func checkTiers(ps poolspec.Pool, plan planner.Config, have actuator.Tiers) error {
	if plan.Fleet.WarmTier() && !have.Warm {
		return fmt.Errorf("pool %q: warm_start %v needs a back-end that keeps a warm tier (simulated, dryrun, kubescale with options.warm_placeholder, volcengine with a group in ScalingMode recycle, volcengine-ecs); backend %s keeps none, so every start would be a cold boot of boot_delay %v: remove warm_start",
			ps.Name, plan.Fleet.WarmStart, ps.Backend, plan.Fleet.BootDelay)
	}
	if plan.Fleet.Spot.Tier() && !have.Spot {
		return fmt.Errorf("pool %q: spot.share %v needs a back-end that runs a spot mix (simulated, dryrun, volcengine); backend %s runs none, so the whole pool would run on demand: remove the spot block or set spot.share to 0",
			ps.Name, plan.Fleet.Spot.Share, ps.Backend)
	}
	return nil
}

// newSafe builds the pool's back-end wrapped in actuator.Safe, persisting
// its memory to the state file before every change. The back-end is also
// returned as a Follower when it is one, and bare.
func (s *Service) newSafe(ctx context.Context, ps poolspec.Pool) (*actuator.Safe, Follower, actuator.Actuator, error) {
	cfg := ps.Actuator()
	inner, err := s.deps.Backend(ctx, cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("pool %q: %w", ps.Name, err)
	}
	opts := s.deps.Safety
	opts.Pools = []actuator.PoolConfig{cfg}
	opts.Persist = s.persister()
	follow, _ := inner.(Follower)
	return actuator.NewSafe(inner, opts), follow, inner, nil
}

// resumer is a back-end whose fleet is imaginary (actuator/dryrun): it
// has no size of its own after a restart, so it is told the last change
// applied before it, and reports that size as ready rather than none.
type resumer interface {
	Resume(pool string, size int)
}

// resumeFleet tells an imaginary fleet the last change m made to it.
func resumeFleet(inner actuator.Actuator, pool string, m actuator.Memory) {
	if r, ok := inner.(resumer); ok && !m.LastChange.At.IsZero() && m.LastChange.To >= 0 {
		r.Resume(pool, m.LastChange.To)
	}
}

// persister is the actuator memory's Persist hook: the state file's, and
// with election on, first the ownership check and the shared state (a
// change refused there is not made, and not recorded either).
func (s *Service) persister() func(pool string, m actuator.Memory) error {
	var local func(string, actuator.Memory) error
	if st := s.deps.State; st != nil && !s.deps.Preview {
		local = st.SaveActuator
	}
	if s.shared == nil || s.deps.Preview {
		return local
	}
	return func(pool string, m actuator.Memory) error {
		if err := s.persistShared(pool, m); err != nil {
			return err
		}
		if local != nil {
			return local(pool, m)
		}
		return nil
	}
}

// rebuild prepares a changed pool: a new controller (restored at the swap)
// and, when the back-end or its limits changed, a new back-end. The
// back-end that will run the pool, the new one or inner (the one in use),
// must run the tiers the new configuration asks for (checkTiers).
func (s *Service) rebuild(ctx context.Context, was, ps poolspec.Pool, inner actuator.Actuator) (*pool, error) {
	plan, tuner, err := s.newController(ps)
	if err != nil {
		return nil, err
	}
	np := &pool{spec: ps, plan: plan, tuner: tuner}
	a, b := was.Actuator(), ps.Actuator()
	if a.Backend != b.Backend || a.Limits != b.Limits || fmt.Sprint(a.Options) != fmt.Sprint(b.Options) {
		if np.act, np.follow, np.inner, err = s.newSafe(ctx, ps); err != nil {
			return nil, err
		}
		inner = np.inner
	}
	if err := checkTiers(ps, plan, actuator.TiersOf(inner)); err != nil {
		return nil, err
	}
	return np, nil
}

// takePending swaps in a reloaded configuration, carrying the controller's
// memory (unless the forecast grid changed) and the actuator's. It runs at
// the start of the pool's decision, in the goroutine that owns ctl and act.
func (s *Service) takePending(p *pool) {
	s.mu.Lock()
	np := p.pending
	p.pending = nil
	s.mu.Unlock()
	if np == nil {
		return
	}
	name := p.spec.Name
	if err := np.tuner.Restore(p.tuner.State()); err != nil {
		s.log.Warn("reloaded pool starts its forecast afresh", "pool", name, "reason", err)
		p.nextRefit = time.Time{}
	}
	if np.act != nil {
		if m, err := p.act.Memory(name); err == nil {
			if err := np.act.Restore(name, m); err != nil {
				s.log.Warn("reloaded pool's actuator starts afresh", "pool", name, "reason", err)
			} else {
				resumeFleet(np.inner, name, m)
				if s.shared != nil {
					s.follow(np.follow, name, m) // the new back-end serves the decision in force
				}
			}
		}
		p.spotApplied = nil // the new back-end is told the spot mix afresh
	}
	p.tuner, p.plan, p.saved = np.tuner, np.plan, controllerMark{}
	p.starts.Expect(np.plan.Fleet.BootDelay, np.plan.Fleet.WarmStart)
	s.mu.Lock()
	if np.act != nil {
		p.act, p.follow, p.inner = np.act, np.follow, np.inner
	}
	p.status.setSpot(np.plan)
	p.spec = np.spec
	if p.override == nil || p.override.ConfigMode != string(np.spec.Mode) {
		p.setMode(np.spec.Mode, nil)
	}
	p.status.Backend, p.status.Limits, p.status.WarmStart = np.spec.Backend, np.spec.Fleet.Limits, np.spec.Fleet.WarmStart
	p.status.Cost.PricePerHour, p.status.Cost.ByTier = np.plan.Prices.OnDemandPerHour, pricedByTier(np.plan)
	s.mu.Unlock()
	s.deps.Metrics.startTimes(name, np.plan.Fleet)
}

// restore puts back what the state file remembers of a new pool. What
// cannot be restored is logged and started afresh: a pool never fails to
// start because of its memory.
func (s *Service) restore(p *pool) {
	st := s.deps.State
	if st == nil {
		return
	}
	name := p.spec.Name
	s.restoreDecisions(p)
	saved, err := st.Load(name)
	if err != nil {
		s.log.Warn("pool starts without its saved state", "pool", name, "reason", err)
		return
	}
	if m := saved.Actuator; m != nil {
		if err := p.act.Restore(name, *m); err != nil {
			s.log.Warn("pool's actuator starts without its saved memory", "pool", name, "reason", err)
		} else {
			resumeFleet(p.inner, name, *m)
		}
	}
	if saved.Controller != nil {
		ts, fresh, err := tune.DecodeState(saved.Controller)
		if err == nil {
			err = p.tuner.Restore(ts)
		}
		switch {
		case err != nil:
			s.log.Warn("pool's forecast starts afresh", "pool", name, "reason", err)
		default:
			if fresh {
				s.log.Info("pool's saved state predates the tuner: its forecast is kept, its candidates start afresh", "pool", name)
			}
			p.nextRefit = s.restoredRefitTime(p, saved.NextRefit)
			p.saved = markOf(ts)
			s.applyRefitStatus(p, time.Time{})
		}
	}
	if len(saved.StartTimes) > 0 || len(saved.WarmStartTimes) > 0 {
		p.starts.Restore(saved.StartTimes, saved.WarmStartTimes)
	}
	if o := saved.Mode; o != nil && o.ConfigMode == string(p.spec.Mode) && poolspec.Mode(o.Mode).Valid() {
		p.setMode(poolspec.Mode(o.Mode), o)
	}
	s.deps.Metrics.mode(name, p.mode)
	next := "at the first decision"
	if !p.nextRefit.IsZero() {
		next = p.nextRefit.UTC().Format(time.RFC3339)
	}
	gate := p.ctl().Last().Gate.Level
	if gate == "" {
		gate = "none yet"
	}
	s.log.Info("pool state restored", "pool", name, "mode", p.mode, "last_change", saved.Actuator != nil,
		"gate", gate, "next_refit", next)
}

func markOf(st tune.State) controllerMark {
	return controllerMark{level: st.Controller.Level, reactive: st.Controller.Reactive,
		candidate: st.Chosen + " " + strconv.Itoa(st.FlatN)}
}

// configMode is the mode the configuration file gives the pool.
func (p *pool) configMode() poolspec.Mode { return p.spec.Mode }

// setMode puts mode in force; o is the API's override (nil: the file's).
// s.mu held (or the pool not yet shared).
func (p *pool) setMode(mode poolspec.Mode, o *state.ModeOverride) {
	p.mode, p.override = mode, o
	p.status.Mode, p.status.ModeSource, p.status.ModeSetAt = mode, "config", time.Time{}
	if o != nil {
		p.status.ModeSource, p.status.ModeSetAt = "api", o.At
	}
}

// snapshot returns the pool's status with what is in flight. s.mu held.
func (p *pool) snapshot(now time.Time) PoolStatus {
	st := p.status
	st.DecidingSince = p.busySince
	st.Alerts = p.alerts(now)
	return st
}

// restoredRefitTime is the saved next refit time, unless it lies further
// ahead than one refit interval (the wall clock was stepped back since it
// was saved): then the pool refits at once rather than follow a plan that
// starts in the future until the clock catches up.
func (s *Service) restoredRefitTime(p *pool, saved time.Time) time.Time {
	now := s.deps.Now()
	if saved.After(now.Add(p.ctl().Settings().RefitEvery)) {
		s.log.Warn("pool's saved refit time is ahead of the clock: refitting now", "pool", p.spec.Name, "saved_next_refit", saved)
		return now
	}
	return saved
}

// pricedByTier reports whether a pool's cost prices some of its hours
// apart from on demand: a reserved base, a spot tier or a warm tier.
func pricedByTier(plan planner.Config) bool {
	return plan.Prices.ReservedInstances > 0 || plan.Fleet.Spot.Tier() || plan.Fleet.WarmTier()
}
