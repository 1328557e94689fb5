package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/election"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store"
)

// decide takes one pool's decision at now. A failed refit does not stop
// it: the plan in force is followed until it runs out. The store reads
// share half of the deadline, so that a store that does not answer leaves
// time to hold the pool (control.Controller.Hold: the plan and the
// schedule floors may still raise it, nothing lowers it) and apply that.
// Every failure is returned, so the tick counts as failed and /healthz and
// the pool's status notice.
func (s *Service) decide(ctx context.Context, p *pool, now time.Time, interval time.Duration) error {
	s.takePending(p)
	var errs []error
	if err := s.syncShared(ctx, p); err != nil {
		errs = append(errs, err)
	}
	name := p.spec.Name
	s.mu.Lock()
	mode := p.mode
	s.mu.Unlock()
	apply := mode == poolspec.ModeActive && !s.deps.Preview

	reads, cancel := context.WithTimeout(ctx, interval/2)
	defer cancel()
	refitted := false
	if due, hist := s.refitDue(reads, p, now); due {
		err := s.refit(reads, p, now, apply, hist)
		refitted = err == nil || errors.Is(err, control.ErrNoHistory)
		if err != nil && !errors.Is(err, control.ErrNoHistory) {
			errs = append(errs, err)
		}
	}
	capa, known, err := p.act.ReadCapacity(ctx, name)
	if err != nil {
		errs = append(errs, fmt.Errorf("reading capacity: %w", err))
		s.saveController(p, now, refitted, false)
		return errors.Join(errs...)
	}
	// The reactive rules step from what the pool was last asked for
	// (booting instances included), not from what is up yet.
	current := capa.Desired
	if current == 0 {
		current = capa.Current
	}
	if mode != poolspec.ModePaused && p.paused {
		s.resume(p)
	}
	p.paused = mode == poolspec.ModePaused

	obs, err := s.observe(reads, p, now, capa.Current, interval)
	holding := err != nil
	if holding {
		errs = append(errs, fmt.Errorf("reading live signals: %w", err))
	}
	var step planner.Step
	switch {
	case mode == poolspec.ModePaused:
		step = planner.Step{At: now, Desired: current, Reason: fmt.Sprintf("paused: holding %d; the policy is not consulted", current)}
	case holding:
		step = p.tuner.Hold(now, current, "live signals unavailable")
	default:
		step = p.tuner.Decide(ctx, now, obs, current)
	}

	// Another replica owning the pool makes this one a standby for it:
	// it shows the decision and applies nothing. Ownership is checked
	// again right before the back-end call (persistShared).
	standby := apply && s.shared != nil && !s.shared.shards.Owns(name)
	if apply && !standby && p.spotDue() {
		s.mixSpot(ctx, p, &errs)
	}
	var res actuator.Result
	outcome := OutcomeNotApplied
	switch {
	case (holding || mode == poolspec.ModePaused) && step.Desired <= max(current, p.plan.Fleet.MinInstances):
		// Holding is leaving the pool alone unless the plan or a floor
		// raises it: a back-end that cannot report its size reads as 0
		// here and must not be set to 0, or to min.
		res = actuator.Result{From: current, FromKnown: known, To: current, Outcome: actuator.OutcomeNoop}
		if apply {
			outcome = OutcomeUnchanged
		}
	case apply && !standby:
		res, err = p.act.Resize(ctx, name, step.Desired, step.Reason)
		outcome = outcomeOf(res, err)
		switch {
		case errors.Is(err, ErrStandby):
			standby = true
			res.To = res.From
		case errors.Is(err, election.ErrConflict):
			outcome = OutcomeNotApplied
			res.To, step.Reason = res.From, "another replica wrote the pool's state since it was read: not applied this tick; "+step.Reason
		case err != nil && !errors.Is(err, actuator.ErrRateLimited):
			errs = append(errs, fmt.Errorf("applying %d: %w", step.Desired, err))
		}
		if p.plan.Fleet.WarmTier() && !standby && outcome != OutcomeNotApplied {
			s.keepWarm(ctx, p, step, &errs)
		}
	default:
		if res, err = p.act.Preview(name, capa, known, step.Desired); err != nil {
			errs = append(errs, fmt.Errorf("previewing %d: %w", step.Desired, err))
		}
	}
	if standby {
		outcome, step.Reason = OutcomeStandby, s.shared.standbyReason(name, step.Reason)
	}
	s.saveController(p, now, refitted, outcome == OutcomeApplied || outcome == OutcomeLimited)
	s.record(p, decision{now: now, mode: mode, capa: capa, known: known, step: step,
		res: res, outcome: outcome, obs: obs, holding: holding})
	return errors.Join(errs...)
}

// resume clears the reactive rules' condition clocks when a paused pool
// resumes: they were not fed while it was paused, so a spell seen before
// the pause must not count as still running. Cooldowns stay.
func (s *Service) resume(p *pool) {
	st := p.ctl().State()
	st.Reactive.HighSince, st.Reactive.QueueSince, st.Reactive.LowSince = time.Time{}, time.Time{}, time.Time{}
	if err := p.ctl().Restore(st); err != nil {
		s.log.Warn("resumed pool: reactive clocks not cleared", "pool", p.spec.Name, "reason", err)
	}
}

// outcomeOf maps an applied change to a decision outcome.
func outcomeOf(res actuator.Result, err error) string {
	switch {
	case errors.Is(err, actuator.ErrRateLimited):
		return OutcomeRateLimited
	case err != nil:
		return OutcomeFailed
	case res.Outcome == actuator.OutcomeNoop:
		return OutcomeUnchanged
	case res.LimitedBy == "max_step":
		return OutcomeLimited
	}
	return OutcomeApplied
}

// When the controller's memory is saved. Encoding it (control.State,
// gob) takes about a millisecond and a half per pool, as long as the rest
// of a decision, so it is saved when it matters rather than every tick:
//   - with every change made (the reactive cooldowns start), and after a
//     refit that moved the gate (a demoted model stays demoted);
//   - after every refitSaveEvery-th refit otherwise, keeping the gate's
//     scores fresh (a restart refits at once from the scores saved);
//   - every clockSaveEvery when a reactive hold clock moved (since when
//     utilisation has been high or low): a crash loses at most that much
//     of a hold spell, which can only delay the next reactive action.
const (
	refitSaveEvery = 6
	clockSaveEvery = 5 * time.Minute
)

// saveController writes the controller's memory to the state file when
// the rules above say so.
func (s *Service) saveController(p *pool, at time.Time, refitted, changed bool) {
	db := s.deps.State
	if db == nil || s.deps.Preview {
		return
	}
	if refitted {
		p.refitsUnsaved++
	}
	due := changed || p.refitsUnsaved >= refitSaveEvery
	if !due && !refitted && at.Sub(p.savedAt) < clockSaveEvery {
		return
	}
	ts := p.tuner.State()
	mark := markOf(ts)
	if !due && mark.level == p.saved.level && mark.candidate == p.saved.candidate && (refitted || mark.reactiveEqual(p.saved)) {
		if !refitted {
			p.savedAt = at
		}
		return
	}
	data, err := ts.Encode()
	if err == nil {
		err = db.SaveController(p.spec.Name, data, p.nextRefit)
	}
	if err != nil {
		s.log.Error("pool state not saved; a restart may forget the gate and the reactive clocks", "pool", p.spec.Name, "err", err)
		return
	}
	p.saved, p.savedAt, p.refitsUnsaved = mark, at, 0
}

// decision is what record publishes.
type decision struct {
	now     time.Time
	mode    poolspec.Mode
	capa    actuator.Capacity
	known   bool
	step    planner.Step
	res     actuator.Result
	outcome string
	obs     planner.Observation
	holding bool
}

// record publishes a decision in the pool's status, samples and metrics.
func (s *Service) record(p *pool, d decision) {
	name := p.spec.Name
	var applied *actuator.Change
	if m, err := p.act.Memory(name); err == nil && !m.LastChange.At.IsZero() {
		applied = &m.LastChange
	}
	planned := math.NaN()
	if level := p.ctl().Level(); level != planner.GateReactive && level != "" {
		if plan := p.ctl().Plan(d.now); len(plan) > 0 && !plan[0].At.After(d.now) && d.now.Before(p.ctl().Last().Forecast.End()) {
			planned = float64(plan[0].Desired)
		}
	}
	desired := d.res.To
	if d.outcome == OutcomeRateLimited {
		desired = d.res.From // what stays applied until min_interval is over
	}
	demand := d.obs.DemandRPS
	if d.holding {
		demand = math.NaN() // unknown, not zero
	}
	ready, booting := capacityReady(d.capa, d.known)
	fc := p.ctl().Last().Forecast
	bounds := boundsAt(fc, stepIndex(fc, d.now))
	var hours, staticHours, cost float64
	if !p.lastSeen.IsZero() {
		if dt := d.now.Sub(p.lastSeen); dt > 0 && dt <= 3*s.Interval() {
			hours, staticHours = float64(d.capa.Current)*dt.Hours(), float64(p.plan.Fleet.MaxInstances)*dt.Hours()
			cost = p.plan.CostPerHour(d.capa.Current, stoppedOf(d)) * dt.Hours()
		}
	}
	p.lastSeen = d.now
	price := p.plan.Prices.OnDemandPerHour
	tuning := p.tuner.Choice(d.now)
	p.observeStarts(d)
	s.learnStartTimes(p)
	s.saveStartTimes(p)
	starts := p.startTimes()

	s.mu.Lock()
	st := &p.status
	st.At = d.now
	st.Current, st.CurrentKnown = d.capa.Current, d.known
	st.Ready, st.Booting, st.ReadyKnown = ready, booting, d.known && d.capa.ReadyKnown
	st.Wished, st.Desired, st.LimitedBy, st.Warm = d.step.Desired, desired, d.res.LimitedBy, d.step.Warm
	st.Tiers = p.plan.Tiers(desired, d.step.Warm)
	st.Outcome, st.NextChangeAt, st.Applied = d.outcome, d.res.NextChangeAt, applied
	st.Reason = s.deps.Redactor.String(d.step.Reason)
	st.DemandRPS = Number(demand)
	st.setGate(p.ctl().Level(), d.now) // what Decide followed: reactive once a plan runs out
	st.setCharge(p.ctl().InCharge())
	st.NextRefit = p.nextRefit
	st.Tuning = tuning
	st.StartTimes = starts
	st.Planned, st.Forecast = Number(planned), bounds
	switch {
	case !d.known || desired <= ready:
		st.CapacityShortSince, st.CapacityShortSeconds = time.Time{}, 0
	case st.CapacityShortSince.IsZero():
		st.CapacityShortSince, st.CapacityShortSeconds = d.now, 0
	default:
		st.CapacityShortSeconds = d.now.Sub(st.CapacityShortSince).Seconds()
	}
	short := st.CapacityShortSeconds
	if st.Cost.Since.IsZero() {
		st.Cost.Since = d.now
	}
	st.Cost.GPUHours += hours
	st.Cost.StaticGPUHours += staticHours
	st.Cost.Cost += cost
	st.Cost.StaticCost += staticHours * price
	p.samples.add(sample{at: d.now.UnixNano(), demand: float32(demand), mean: float32(bounds.Mean), lower: float32(bounds.Lower),
		upper: float32(bounds.Upper), planned: float32(planned), wished: int32(d.step.Desired), desired: int32(desired),
		current: int32(d.capa.Current), readyCount: int32(ready)}, s.file.Interval)
	s.mu.Unlock()

	m := s.deps.Metrics
	m.decision(name, d.step.Desired, desired, d.capa.Current, demand, planned, d.outcome)
	m.capacity(name, ready, booting, d.known, short)
	m.forecast(name, bounds)
	m.gate(name, p.ctl().Level())
	m.tuning(name, tuning)
	m.bill(name, hours, cost, staticHours*price)
}

// stoppedOf is the warm tier's stopped instances over the decision's
// interval: as the back-end counted them, else what the pool asked to
// keep warm (none without a warm tier).
func stoppedOf(d decision) int {
	if d.known && d.capa.StoppedKnown {
		return d.capa.Stopped
	}
	return d.step.Warm
}

// capacityReady splits what the back-end reported into ready and booting
// instances; one that cannot tell them apart has every instance ready.
func capacityReady(c actuator.Capacity, known bool) (ready, booting int) {
	switch {
	case !known:
		return 0, 0
	case c.ReadyKnown:
		return c.Ready, max(c.Current-c.Ready, 0)
	}
	return c.Current, 0
}

// refit reads the demand history and refits the pool's controller. The
// refit time is now rounded down to the forecast step counted from the Unix
// epoch, the grid the store's aggregate windows use (InfluxDB's
// aggregateWindow), so every history value is one whole window. A failed
// read is retried next tick; a refit that fails otherwise waits for the next
// refit time. publish hands the plan to back-ends that schedule (active
// pools only: publishing is an action).
func (s *Service) refit(ctx context.Context, p *pool, now time.Time, publish bool, hist []float64) error {
	set := p.ctl().Settings()
	at := epochFloor(now, set.Step)
	if hist == nil {
		var err error
		if hist, err = s.readHistory(ctx, p, now); err != nil {
			return err
		}
	}
	began := time.Now()
	r, err := p.tuner.Refit(at, hist)
	p.nextRefit = at.Add(set.RefitEvery)
	if err != nil && !errors.Is(err, control.ErrNoHistory) {
		return err // the refit in force stays
	}
	s.deps.Metrics.refit(p.spec.Name, time.Since(began))
	s.applyRefitStatus(p, now)
	if err != nil {
		return err
	}
	s.log.Debug("refit", "pool", p.spec.Name, "model", r.Model, "gate", r.Gate.Level, "reason", r.Gate.Reason)
	// Publishing is an action: a standby leaves it to the pool's owner
	// (whose schedule a back-end that serves the plan in this process
	// follows through the shared state).
	if publish && p.spec.PublishSchedule && s.ownsOrAlone(p.spec.Name) {
		err := p.act.PublishSchedule(ctx, p.spec.Name, p.ctl().Plan(now))
		if err != nil && !errors.Is(err, actuator.ErrNotImplemented) {
			return fmt.Errorf("publishing schedule: %w", err)
		}
	}
	return nil
}

// refitDue reports whether the pool refits now: at its refit time, and
// also, while the controller warms up (no refit yet, or one with less
// history than the model needs), as soon as the store holds enough history,
// as after 'forecaster import', whatever the persisted schedule says, at
// most once a forecast step. It returns the history it read to tell, for
// the refit to use (nil: none read). A failed read is no refit: the
// regular refit and the observation report the store's failures.
func (s *Service) refitDue(ctx context.Context, p *pool, now time.Time) (bool, []float64) {
	if !now.Before(p.nextRefit) {
		return true, nil
	}
	if !p.ctl().WarmingUp() || now.Before(p.earlyRefitAfter) {
		return false, nil
	}
	hist, err := s.readHistory(ctx, p, now)
	if err != nil || p.ctl().ShortHistory(hist) {
		return false, nil
	}
	p.earlyRefitAfter = now.Add(p.ctl().Settings().Step)
	s.log.Info("history now long enough for the model: refitting before the next refit time", "pool", p.spec.Name,
		"next_refit", p.nextRefit)
	return true, hist
}

// readHistory reads the pool's demand history up to now on the forecast
// grid (see refit).
func (s *Service) readHistory(ctx context.Context, p *pool, now time.Time) ([]float64, error) {
	set := p.ctl().Settings()
	at := epochFloor(now, set.Step)
	start := at.Add(-time.Duration(set.History/set.Step) * set.Step)
	hist, err := s.readSeries(ctx, p.spec.Demand, start, at, set.Step, store.Mean)
	if err != nil {
		return nil, fmt.Errorf("reading demand history: %w", err)
	}
	return hist, nil
}

// applyRefitStatus shows the refit in force in the pool's status (now
// zero: its plan from the refit's own time, after a restore).
func (s *Service) applyRefitStatus(p *pool, now time.Time) {
	r := p.ctl().Last()
	if now.IsZero() {
		now = r.At
	}
	plan := p.ctl().Plan(now).WithTiers(p.plan)
	v := buildViews(p.spec.Name, p.ctl(), p.plan)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &p.status
	st.GateReason, st.LastRefit, st.Plan = r.Gate.Reason, r.At, plan
	st.Model, st.FallbackReason, st.ForecastMASE = v.forecast.Model, v.forecast.FallbackReason, v.forecast.MASE
	st.setGate(r.Gate.Level, now)
	st.setCharge(p.ctl().InCharge())
	st.NextRefit = p.nextRefit
	p.views = v
	s.deps.Metrics.mase(p.spec.Name, float64(v.forecast.MASE))
}

// setGate records the gate level in force and since when.
func (st *PoolStatus) setGate(level string, now time.Time) {
	if level == "" {
		return
	}
	if level != st.Gate || st.GateSince.IsZero() {
		st.GateSince = now
	}
	st.Gate = level
}

// epochFloor rounds t down to a multiple of step counted from the Unix
// epoch, the grid of store.WindowStart, in t's location.
func epochFloor(t time.Time, step time.Duration) time.Time {
	return store.WindowStart(t, step).In(t.Location())
}

// observe reads the live signals of the last interval: demand, utilisation
// (measured, or derived from demand and the instances that exist, booting
// ones included, as the actuators cannot tell them apart) and queue. No
// demand sample in the interval is an error, not zero demand: a silent
// collector must not read as an idle pool and scale it in.
func (s *Service) observe(ctx context.Context, p *pool, now time.Time, instances int, span time.Duration) (planner.Observation, error) {
	obs := planner.Observation{At: now, Span: span}
	demand, n, err := s.latest(ctx, p.spec.Demand, now, span)
	if err != nil {
		return obs, err
	}
	if n == 0 {
		return obs, fmt.Errorf("no %s sample in the last %v: is the collector writing it?", p.spec.Demand, span)
	}
	obs.DemandRPS = demand
	if p.spec.Queue != nil {
		if obs.Queue, _, err = s.latest(ctx, *p.spec.Queue, now, span); err != nil {
			return obs, err
		}
	}
	if p.spec.Utilisation != nil {
		total, n, err := s.latest(ctx, *p.spec.Utilisation, now, span)
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
// ref.Aggregate (default mean, store.Fold: the stores' own fold), summed
// over the n tag sets that had points.
func (s *Service) latest(ctx context.Context, ref poolspec.SeriesRef, now time.Time, span time.Duration) (total float64, n int, err error) {
	series, err := s.deps.Store.Query(ctx, ref.Query(now.Add(-span), now.Add(time.Nanosecond), 0, ""))
	if err != nil {
		return 0, 0, err
	}
	for _, ser := range series {
		f := store.Fold{Agg: ref.Aggregate}
		for _, smp := range ser.Samples {
			f.Add(smp.Value)
		}
		if v, ok := f.Value(); ok {
			total += v
			n++
		}
	}
	return total, n, nil
}

// readSeries queries ref over [start, end) in windows of step (start and
// end on the epoch-aligned grid) and sums the tag sets per window; a window
// no tag set had a point in is NaN (missing). agg is the default when ref
// sets no aggregate.
func (s *Service) readSeries(ctx context.Context, ref poolspec.SeriesRef, start, end time.Time, step time.Duration, agg store.Aggregate) ([]float64, error) {
	n := int(end.Sub(start) / step)
	series, err := s.deps.Store.Query(ctx, ref.Query(start, end, step, agg))
	if err != nil {
		return nil, err
	}
	return store.SumOnGrid(series, start, step, n), nil
}

// setCharge records which rule sizes the pool (control.Controller.InCharge).
func (st *PoolStatus) setCharge(ch control.Charge) {
	st.InCharge, st.InChargeReason = ch.Rule, ch.Reason
}

// keepWarm asks the pool's back-end for the decision's warm tier (newPool
// refused a warm_start on a back-end without one).
func (s *Service) keepWarm(ctx context.Context, p *pool, step planner.Step, errs *[]error) {
	if err := p.act.SetWarm(ctx, p.spec.Name, step.Warm, step.Reason); err != nil {
		*errs = append(*errs, fmt.Errorf("keeping %d warm (warm_start): %w", step.Warm, err))
	}
}

// spotDue reports whether the pool's back-end is to be told the spot mix
// of its spot: block: once a pool with a spot tier decides in active mode
// (since its back-end was built), and again after a reload changed the
// block, a tier removed included.
func (p *pool) spotDue() bool {
	want := p.plan.Fleet.Spot.Normal()
	if p.spotApplied == nil {
		return want.Tier()
	}
	return *p.spotApplied != want
}

// mixSpot tells the pool's back-end the spot mix of its spot: block
// (newPool and rebuild refused a spot tier on a back-end without one); a
// failure is the decision's, and the next decision tries again.
func (s *Service) mixSpot(ctx context.Context, p *pool, errs *[]error) {
	want := p.plan.Fleet.Spot.Normal()
	if err := p.act.SetSpot(ctx, p.spec.Name, want, "the pool's spot block"); err != nil {
		*errs = append(*errs, fmt.Errorf("setting the spot mix (spot.share %v, spot.base_on_demand %d, spot.fallback %s): %w",
			want.Share, want.BaseOnDemand, want.Fallback, err))
		return
	}
	p.spotApplied = &want
}
