package control

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/seasonal"
	"github.com/prewarm/prewarm/planner"
)

// Settings configure a Controller's forecasts. Zero fields take the
// defaults documented on each (DefaultSettings). The yaml tags are the
// keys of a pool's forecast: block in the forecaster's configuration file
// (package poolspec), which embeds Settings.
type Settings struct {
	// Step is the forecast grid (default 30m); history passed to Refit must
	// be on this grid.
	Step time.Duration `yaml:"step"`
	// RefitEvery is how often the service (and the backtest, which runs
	// the same controller) refits (default 3h); it bounds how long one
	// refit's plan is followed. A refit fits model/auto afresh, tens of
	// milliseconds on four weeks of history: a backtest of seven months
	// makes 1,700 of them at 3 h and 5,200 at 1 h. Between refits the
	// plan made at the last one holds, the reactive rules cover surprises
	// within minutes, and the calibration moves the next plan's bound.
	RefitEvery time.Duration `yaml:"refit_every"`
	// Horizon is how far each refit forecasts (default 6h), at least
	// RefitEvery plus the boot delay.
	Horizon time.Duration `yaml:"horizon"`
	// History is how much past demand a refit reads (default 28 days).
	History time.Duration `yaml:"history"`
	// Periods are the seasonal periods (default a day and a week).
	Periods []time.Duration `yaml:"periods"`
	// ChooseModelDaily chooses the model (methods searched, parameters
	// estimated) at the first refit of each UTC day only, and re-runs that
	// choice on the history of the day's later refits (Selection), which
	// cuts the refits' cost by about four at 3-hour refits. Off (the
	// default), every refit chooses afresh: a choice a day old forecasts
	// bursty demand less well, and the plans cost more
	// (docs/scaling.md measures both).
	ChooseModelDaily bool `yaml:"choose_model_daily"`
	// NewModel builds the predictive model for the periods (in steps) that
	// have enough history; nil means model/auto.
	NewModel func(periods []int) model.Forecaster `yaml:"-"`
	// NewProfile builds the seasonal-profile stand-in for one period (in
	// steps); nil means the mean of the last 4 cycles.
	NewProfile func(period int) model.Forecaster `yaml:"-"`
	// IntervalLevel is the level at which a refit asks the model and the
	// profile for their own interval (default 0.8). It sets the bound only
	// until the controller has errors of its own for a slot of the day (see
	// planner.Bounds), rescaled to the forecast quantile, so refits do not
	// depend on the quantile and a backtest can share them between
	// settings.
	IntervalLevel float64 `yaml:"-"`
	// Follow pins the plan the controller follows: "" lets the gate choose
	// (the hybrid policy); planner.GateModel or planner.GateProfile follow
	// that plan alone whatever the gate says (the backtest's predictive and
	// scheduled policies, which read it with PlanStep).
	Follow string `yaml:"-"`
}

// Strategy says which terms a Controller's decisions combine. The zero
// value is the hybrid policy: the forecast plan (with the warm-up term),
// the reactive rules and the schedule floors. The tuner's candidates
// (package tune) are strategies: the reactive rules alone, the plan
// alone, or a flat fleet.
type Strategy struct {
	// NoPlan leaves the forecast plan and the warm-up term out.
	NoPlan bool
	// NoReactive leaves the reactive rules out; they are then not fed.
	NoReactive bool
	// Flat holds the pool at this many instances (with the schedule
	// floors above it); 0: none. With NoPlan and NoReactive it is a flat
	// fleet.
	Flat int
}

// Hybrid reports whether s is the full hybrid policy.
func (s Strategy) Hybrid() bool { return s == Strategy{} }

// MaxSteps bounds a refit's series, in forecast steps: history, horizon
// and each period over Step. A configuration file and the backtest refuse
// more before anything is allocated.
const MaxSteps = 100_000

// The forecast grid's bounds, which a pool file (forecast.step,
// forecast.refit_every) and the backtest's command line (--forecast-step,
// --refit) both check: a step of a minute to a day, a refit at most a
// week apart.
const (
	MinForecastStep = time.Minute
	MaxForecastStep = 24 * time.Hour
	MaxRefitEvery   = 7 * 24 * time.Hour
)

// DefaultSettings returns the defaults of the settings a configuration
// file sets: a 30-minute grid refitted every 3 hours, forecasting 6 hours
// from 28 days of history with a daily and a weekly season, the model
// chosen at every refit. The others' defaults are WithDefaults'.
func DefaultSettings() Settings {
	return Settings{Step: 30 * time.Minute, RefitEvery: 3 * time.Hour, Horizon: 6 * time.Hour,
		History: 28 * 24 * time.Hour, Periods: []time.Duration{24 * time.Hour, 7 * 24 * time.Hour}}
}

// WithDefaults returns s with its zero fields set to the defaults.
func (s Settings) WithDefaults() Settings {
	d := DefaultSettings()
	if s.Step <= 0 {
		s.Step = d.Step
	}
	if s.RefitEvery <= 0 {
		s.RefitEvery = d.RefitEvery
	}
	if s.Horizon <= 0 {
		s.Horizon = d.Horizon
	}
	if s.History <= 0 {
		s.History = d.History
	}
	if s.IntervalLevel <= 0 {
		s.IntervalLevel = 0.8
	}
	if s.Periods == nil {
		s.Periods = d.Periods
	}
	if s.NewModel == nil {
		s.NewModel = func(periods []int) model.Forecaster { return auto.New(auto.Config{Periods: periods}) }
	}
	if s.NewProfile == nil {
		s.NewProfile = func(period int) model.Forecaster { return seasonal.Profile{Period: period, Cycles: 4} }
	}
	return s
}

// Validate names the first setting that cannot work.
func (s Settings) Validate() error {
	if s.RefitEvery < s.Step {
		return fmt.Errorf("forecast.refit_every %v must be at least forecast.step %v", s.RefitEvery, s.Step)
	}
	if s.History < 2*s.Step {
		return fmt.Errorf("forecast.history %v must cover at least two steps of %v", s.History, s.Step)
	}
	for i, p := range s.Periods {
		if p <= s.Step || p%s.Step != 0 {
			return fmt.Errorf("forecast.periods[%d] %v must be a multiple of forecast.step %v and longer than it", i, p, s.Step)
		}
	}
	if !(s.IntervalLevel > 0 && s.IntervalLevel < 1) {
		return fmt.Errorf("interval level %v must be in (0, 1)", s.IntervalLevel)
	}
	switch s.Follow {
	case "", planner.GateModel, planner.GateProfile:
	default:
		return fmt.Errorf("follow %q: want %q, %q or empty (the gate chooses)", s.Follow, planner.GateModel, planner.GateProfile)
	}
	return nil
}

// Refit is what one refit decided: the forecasts made at At from the
// demand before At, the plans Adopt made from them, and which plan the
// hybrid policy trusts.
type Refit struct {
	At time.Time
	// ModelPlan and ProfilePlan are nil when history was too short; Adopt
	// makes them.
	ModelPlan, ProfilePlan planner.Schedule
	// Model and Profile name the methods that ran, with any fallback.
	Model, Profile string
	// Forecast and ProfileForecast are the model's and the profile's
	// demand forecasts (requests/s) from At, with their own intervals at
	// Settings.IntervalLevel.
	Forecast, ProfileForecast planner.DemandForecast
	// Quantile is the forecast quantile the plans were sized at; set by
	// Adopt.
	Quantile float64
	// Peak is the largest demand of the last planner.Bounds.PeakSpan() of history,
	// whose need caps the plans (0: no cap); set by Adopt.
	Peak float64
	// WarmingUp is true while the history is shorter than the
	// Gating.MinSeasons seasons the model needs: the warm-up term then
	// stands beside the plans (see planner.Bounds.NoWarmUpPeak); set by
	// Adopt.
	WarmingUp bool
	// Cold is true when the history is long enough but none of the
	// model's forecasts has been scored against the demand that came yet
	// (the gate's model error is not measured): after 'forecaster import',
	// or a restart without the saved scores. Like WarmingUp it is a cold
	// start (see ColdStart); set by Adopt.
	Cold bool
	// Gate says which plan Decide follows, and why; set by Adopt.
	Gate planner.GateResult

	// modelMean and profileMean are the forecasts for the steps until the
	// next refit, scored by later refits.
	modelMean, profileMean []float64
	// selection is the model choice this refit made or reused.
	selection Selection
}

// Selection returns the model choice the refit made or reused, for the
// next refits to pass to ForecastReusing.
func (r Refit) Selection() Selection { return r.selection }

// Selection is the forecasting model a refit chose (its methods and
// estimated parameters, model.Selector), which, with
// Settings.ChooseModelDaily, the later refits of the same day re-run on
// their own history instead of choosing again: the model is chosen at the
// first refit of each day (UTC), which costs a full search, and the
// refits after it cost a small fraction of that.
// The zero Selection holds nothing and makes the next refit choose.
type Selection struct {
	day     time.Time // the UTC day it was chosen on
	periods []int     // the seasonal periods it was chosen for
	model   model.Forecaster
}

// Day is the UTC day the model was chosen on; zero when nothing was.
func (s Selection) Day() time.Time { return s.day }

// reusable reports whether the selection serves a refit at now for
// periods: chosen the same day, for the same periods.
func (s Selection) reusable(now time.Time, periods []int) bool {
	return s.model != nil && s.day.Equal(SelectionDay(now)) && slices.Equal(s.periods, periods)
}

// SelectionDay is the UTC day of t: a model chosen at t is re-run by the
// refits of that day and chosen again on the next.
func SelectionDay(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// Controller is one pool's live hybrid policy. Forecast may be called
// concurrently; the other methods are not safe for concurrent use (the
// service gives each pool its own Controller).
type Controller struct {
	plan     planner.Config
	settings Settings
	periods  []int // seasonal periods in steps, shortest first
	last     Refit
	level    string // the gate level the last Decide used
	reactive planner.ReactiveState
	// memory is what the controller learns of the demand and of its
	// forecasts; shadows (Shadow) share their owner's and only the owner
	// writes it.
	*memory
	owner bool
	// quantile is the calibrated forecast quantile, meanDemand the recent
	// mean observed demand that weighs each interval's misses. lnTail is
	// the calibration's memory, ln(1 − quantile) unless it has run past
	// the top quantile (planner.Calibration.Carry); 0 before the first
	// calibration.
	quantile, meanDemand float64
	lnTail               float64
	// backlog is the calibration's estimate of the requests left waiting
	// on the instances that were ready; estimated counts its estimates.
	backlog   planner.Backlog
	estimated Estimate
	// strategy says which terms Decide combines.
	strategy Strategy
	// asked is what the pool was asked for at each recent decision, oldest
	// first, over the last boot delay: the calibration's estimate of the
	// instances that were ready.
	asked []planner.Step
}

// memory is a controller's knowledge of the demand and of its own
// forecasts, shared with its shadows.
type memory struct {
	// forecasts remembers, per step, the model's and the profile's
	// forecasts, to score them once the demand is known.
	forecasts stepLog[[2]float64]
	// actual remembers demand per step seen in refit histories.
	actual stepLog[float64]
	// errors remembers, per step, actual − forecast of the model and of
	// the profile: the per-slot bounds are their quantiles. Only steps
	// from errorsFrom on are scored: forecasts made before a season of
	// history are no guide to later ones.
	errors     stepLog[[2]float64]
	errorsFrom time.Time
	// warmPeak is the largest demand seen while warming up.
	warmPeak float64
	// within learns the demand's variation inside a step (the plans
	// size for its minutes, not its mean); peaks remembers each step's
	// largest observed demand, for the peak cap.
	within *withinStep
	peaks  stepLog[float64]
	// slotPools keeps the sorted error pools the plans were bounded with
	// since errors last changed: a pool's shadows bound the same refit
	// from the same errors, one after another.
	slotPools slotPoolCache
}

// New returns a Controller for a pool planned with plan. Both configs are
// validated.
func New(plan planner.Config, s Settings) (*Controller, error) {
	s = s.WithDefaults()
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := &Controller{plan: plan, settings: s, quantile: plan.ForecastQuantile, memory: &memory{}, owner: true}
	for _, p := range s.Periods {
		c.periods = append(c.periods, int(p/s.Step))
	}
	sort.Ints(c.periods)
	c.memory.within = newWithinStep(s.Step, c.season())
	return c, nil
}

// season is the shortest seasonal period in steps (1 without one).
func (c *Controller) season() int {
	if len(c.periods) > 0 {
		return c.periods[0]
	}
	return 1
}

// Shadow returns a controller that shares c's memory of the demand and
// of its forecasts but plans and decides on its own, with plan (which
// must share c's fleet and forecast grid) and strategy: a candidate the
// tuner replays beside the live policy. c must adopt each refit before
// its shadows (Adopt) and observe each demand (Observe); a shadow's
// observations calibrate its own quantile only.
func (c *Controller) Shadow(plan planner.Config, s Strategy) (*Controller, error) {
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	sh := *c
	sh.plan, sh.strategy, sh.owner = plan, s, false
	sh.quantile, sh.lnTail, sh.meanDemand, sh.backlog, sh.estimated = plan.ForecastQuantile, 0, 0, 0, Estimate{}
	sh.reactive, sh.asked, sh.level = planner.ReactiveState{}, nil, ""
	return &sh, nil
}

// SetStrategy changes the terms the next decisions combine; the
// controller's memory stays.
func (c *Controller) SetStrategy(s Strategy) { c.strategy = s }

// Strategy returns the terms the controller's decisions combine.
func (c *Controller) Strategy() Strategy { return c.strategy }

// Settings returns the controller's settings with defaults filled in.
func (c *Controller) Settings() Settings { return c.settings }

// Last returns the refit in force (zero before the first).
func (c *Controller) Last() Refit { return c.last }

// Level returns the gate level the last Decide followed: the model's plan,
// the seasonal profile's, or the reactive rules alone.
func (c *Controller) Level() string { return c.level }

// Quantile returns the forecast quantile the next plans will be sized at:
// planner.Config.ForecastQuantile, moved by the calibration.
func (c *Controller) Quantile() float64 { return c.quantile }

// ErrNoHistory is returned by Refit when the history holds no finite value.
var ErrNoHistory = errors.New("no demand history to forecast from")

// Refit forecasts from history and puts the result in force: ForecastReusing
// (re-running the last refit's model choice the same day, with
// Settings.ChooseModelDaily) then
// Adopt. history is the demand (requests/s) per Step for the steps ending
// at now, oldest first (NaN: missing); now should be a multiple of Step.
func (c *Controller) Refit(now time.Time, history []float64) (Refit, error) {
	r, err := c.ForecastReusing(now, history, c.last.selection)
	if err != nil && !errors.Is(err, ErrNoHistory) {
		return r, err
	}
	return c.Adopt(r, history), err
}

// Forecast makes one refit's forecasts from history, as Refit describes,
// without putting them in force or planning, choosing the model afresh. It
// reads only the controller's settings, so a backtest may compute many
// refits in parallel, share them between planner settings, and Adopt them
// in time order.
func (c *Controller) Forecast(now time.Time, history []float64) (Refit, error) {
	return c.ForecastReusing(now, history, Selection{})
}

// ForecastReusing is Forecast that, with Settings.ChooseModelDaily, re-runs
// prev, the model an earlier refit chose (Refit.Selection), when prev was
// chosen the same UTC day for the same seasonal periods, and otherwise
// chooses afresh. The returned refit carries the selection it used for the
// next refit.
func (c *Controller) ForecastReusing(now time.Time, history []float64, prev Selection) (Refit, error) {
	s := c.settings
	r := Refit{At: now}
	history = trimLeadingGaps(history)
	if !hasFinite(history) {
		return r, ErrNoHistory
	}
	stamp := now.Format(time.RFC3339)
	horizon := max(int(s.Horizon/s.Step), int((s.RefitEvery+c.plan.Fleet.BootDelay+s.Step-1)/s.Step)+1)
	owned := int(s.RefitEvery / s.Step)
	fc, sel, err := c.forecastModel(now, history, horizon, prev)
	if err != nil {
		return r, fmt.Errorf("refit at %s: model: %w", stamp, err)
	}
	r.selection = sel
	r.Forecast = planner.DemandForecast{Start: now, Step: s.Step, Forecast: fc}
	r.Model = methodName(fc)
	r.modelMean = fc.Mean[:min(owned, len(fc.Mean))]
	if p := c.profilePeriod(len(history)); p > 0 {
		pf, err := s.NewProfile(p).Forecast(history, horizon, s.IntervalLevel)
		if err != nil {
			return r, fmt.Errorf("refit at %s: profile: %w", stamp, err)
		}
		r.Profile = methodName(pf)
		r.ProfileForecast = planner.DemandForecast{Start: now, Step: s.Step, Forecast: pf}
		r.profileMean = pf.Mean[:min(owned, len(pf.Mean))]
	}
	return r, nil
}

// forecastModel forecasts history with a new model for the trusted
// periods; with Settings.ChooseModelDaily, with prev's model when it may be
// reused (Selection.reusable), keeping the new model's choice when it is a
// model.Selector.
func (c *Controller) forecastModel(now time.Time, history []float64, horizon int, prev Selection) (model.Forecast, Selection, error) {
	level := c.settings.IntervalLevel
	periods := c.trustedPeriods(len(history))
	if !c.settings.ChooseModelDaily {
		fc, err := c.settings.NewModel(periods).Forecast(history, horizon, level)
		return fc, Selection{}, err
	}
	if prev.reusable(now, periods) {
		fc, err := prev.model.Forecast(history, horizon, level)
		return fc, prev, err
	}
	m := c.settings.NewModel(periods)
	sel, ok := m.(model.Selector)
	if !ok {
		fc, err := m.Forecast(history, horizon, level)
		return fc, Selection{}, err
	}
	fc, chosen, err := sel.Select(history, horizon, level)
	if err != nil || chosen == nil {
		return fc, Selection{}, err
	}
	return fc, Selection{day: SelectionDay(now), periods: slices.Clone(periods), model: chosen}, nil
}

// Adopt puts a refit made by Forecast in force. It remembers the demand in
// history (the same history the refit was made from) and scores the
// earlier forecasts against it (the gate's evidence and the per-slot
// errors), records the refit's own forecasts to be scored later, plans
// both forecasts at the calibrated quantile with per-slot bounds and the
// peak cap, and lets planner.Gate decide which plan to trust. Refits must
// be adopted in time order. It returns r with its plans and Gate set.
func (c *Controller) Adopt(r Refit, history []float64) Refit {
	if c.owner {
		c.learn(r, history)
	}
	r.Quantile = c.quantile
	r.Peak = c.recentPeak(history)
	in := c.gateInput(r.At, len(trimLeadingGaps(history)))
	r.Gate = c.plan.Gate(in)
	r.WarmingUp = c.ShortHistory(history)
	r.Cold = !r.WarmingUp && math.IsNaN(in.ModelError)
	if r.WarmingUp || r.Cold {
		c.widenCold(&r, history)
		r.Gate.Reason = c.coldReason(r)
	}
	if r.Forecast.Forecast.Horizon() > 0 {
		r.ModelPlan = c.planFor(r, r.Forecast, 0)
	}
	if r.ProfileForecast.Forecast.Horizon() > 0 {
		r.ProfilePlan = c.planFor(r, r.ProfileForecast, 1)
	}
	if c.owner {
		c.holdPeak(r, history)
	}
	c.last = r
	return r
}

// holdPeak keeps the warm-up term's peak for refit r: while warming up
// the history's peak as well as live demand's; in a cold start live
// demand's alone (Observe adds it), the history being what the unchecked
// forecast already follows; none once the cold start is over, so that a
// later one starts afresh.
func (c *Controller) holdPeak(r Refit, history []float64) {
	switch {
	case r.WarmingUp:
		for _, v := range history {
			if !math.IsNaN(v) {
				c.warmPeak = math.Max(c.warmPeak, v)
			}
		}
	case !r.Cold:
		c.warmPeak = 0
	}
}

// learn remembers the demand in history, scores the earlier forecasts
// against it and records r's forecasts to be scored later.
func (c *Controller) learn(r Refit, history []float64) {
	c.remember(r.At, history)
	c.scoreErrors(r.At)
	if c.errorsFrom.IsZero() && r.ProfileForecast.Forecast.Horizon() > 0 {
		c.errorsFrom = r.At // the first refit with a season of history
	}
	for i, v := range r.modelMean {
		p := math.NaN()
		if i < len(r.profileMean) {
			p = r.profileMean[i]
		}
		c.forecasts.set(c.step(r.At.Add(time.Duration(i)*c.settings.Step)), [2]float64{v, p})
	}
}

// Decide returns the capacity step for now: the largest of the trusted
// forecast plan (while its forecast lasts; the warm-up plan before there is
// one), the reactive rules fed with obs, and the schedule floors, with the
// reason of the term that won. current is the pool's desired count now
// (what it was last asked for, booting instances included), which the
// reactive rules step from. obs also calibrates the forecast quantile.
func (c *Controller) Decide(now time.Time, obs planner.Observation, current int) planner.Step {
	c.clampClocks(now)
	c.Observe(now, obs, current)
	s := c.strategy
	var reactive planner.Step
	if !s.NoReactive {
		c.reactive, reactive = c.plan.ReactiveNext(c.reactive, obs, current)
	}
	plan, found := c.PlanStep(now)
	level, why := c.levelAt(now, found)
	if s.NoPlan {
		found, level, why = false, planner.GateReactive, "" // the strategy, not a stale plan, leaves it reactive
	}
	if found && !s.NoReactive {
		var back bool
		if c.reactive, back = c.plan.ReturnToPlan(c.reactive, obs, plan.Desired); back {
			reactive = planner.Step{At: now, Desired: plan.Desired,
				Reason: "reactive: the load fits the plan again, back to " + strconv.Itoa(plan.Desired)}
		}
	}
	terms := make([]planner.Step, 0, 5)
	if found {
		terms = append(terms, plan)
	}
	if warm, ok := c.warmUpStep(now); ok && !s.NoPlan {
		terms = append(terms, warm)
		if !found {
			level = planner.GateWarmUp
		}
	}
	c.level = level
	if s.Flat > 0 {
		terms = append(terms, planner.Step{At: now, Desired: s.Flat, Reason: "flat: " + strconv.Itoa(s.Flat) + " instances"})
	}
	if !s.NoReactive {
		terms = append(terms, reactive)
	}
	terms = append(terms, c.plan.FloorStep(now))
	if len(terms) == 1 && terms[0].Desired == 0 {
		// Nothing to follow (no plan, rules or floor): hold.
		terms[0] = planner.Step{At: now, Desired: current, Reason: fmt.Sprintf("hold %d: no term in force", current)}
	}
	st := c.plan.Combine(now, terms...)
	switch {
	case why == "":
	case level == planner.GateReactive && st.Reason == reactive.Reason,
		level == planner.GateProfile && st.Reason == plan.Reason:
		st.Reason += " [" + why + "]"
	}
	st = c.holdScaleIn(st, obs.At, current)
	st.Warm = c.warmFor(st.Desired, plan, found)
	return st
}

// warmFor sizes the warm tier beside a decision for desired: stopped,
// ready to start in warm_start, what the plan will run within a cold boot
// (plan.Warm) and the last planner.Bounds.PeakSpan's peak needs, so that
// the plan's rises and the reactive rules' bursts start warm.
func (c *Controller) warmFor(desired int, plan planner.Step, found bool) int {
	if !c.plan.Fleet.WarmTier() {
		return 0
	}
	cover := c.plan.InstancesFor(c.last.Peak)
	if found {
		cover = max(cover, plan.Desired+plan.Warm)
	}
	return c.plan.WarmFor(desired, cover)
}

// holdScaleIn applies Config.ScaleInOnForecast false: a step below current is
// kept at current unless the reactive rules scaled in at this decision
// (they saw the idle spell), and even then it drops by their scale-in step
// only.
func (c *Controller) holdScaleIn(st planner.Step, at time.Time, current int) planner.Step {
	if c.plan.ScaleInOnForecast || st.Desired >= current {
		return st
	}
	r := c.reactive
	if r.LastAction.Equal(at) && !r.LastOut.Equal(at) {
		if floor := current - c.plan.Reactive.ScaleInStep; st.Desired < floor {
			st.Desired = floor
			st.Reason = fmt.Sprintf("%s (scale_in_on_forecast is false: -%d)", st.Reason, c.plan.Reactive.ScaleInStep)
		}
		return st
	}
	return planner.Step{At: st.At, Desired: current,
		Reason: fmt.Sprintf("hold %d: scale_in_on_forecast is false and the reactive rules see no idle spell (%s)", current, st.Reason)}
}

// Observe feeds the controller an observation and the pool's desired count
// at now: it calibrates the forecast quantile and tracks the warm-up peak.
// Decide calls it; policies that follow a plan alone call it instead.
func (c *Controller) Observe(now time.Time, obs planner.Observation, current int) {
	c.rememberAsked(now, current)
	if math.IsNaN(obs.DemandRPS) || obs.DemandRPS < 0 {
		return
	}
	if c.owner {
		c.within.add(obs.At, obs.Span, obs.DemandRPS, c.meanDemand)
		if obs.Span > 0 {
			k := c.step(obs.At.Add(-obs.Span))
			if p, ok := c.peaks.get(k); !ok || obs.DemandRPS > p {
				c.peaks.set(k, obs.DemandRPS)
			}
		}
	}
	c.trackMean(obs)
	miss, ok := c.estimateMiss(obs)
	if c.ColdStart() {
		if c.owner {
			c.warmPeak = math.Max(c.warmPeak, obs.DemandRPS)
		}
		if c.warmingUp() || !c.plan.Bounds.NoWarmUpPeak {
			return // the warm-up term serves now, not the plans alone: nothing to learn
		}
	}
	if ok {
		c.calibrate(obs, miss)
	}
}

// Estimate counts the requests the controller's observations brought and
// how many of them it estimates waited past the SLO (estimateMiss): the
// burn of the SLO's miss budget as the controller sees it.
type Estimate struct {
	Arrived, Late float64
}

// Estimated returns the counts since the controller was made.
func (c *Controller) Estimated() Estimate { return c.estimated }

// rememberAsked records the desired count at now and forgets what is older
// than the boot delay (and ten minutes of slack for the interval) needs.
func (c *Controller) rememberAsked(now time.Time, current int) {
	if n := len(c.asked); n > 0 && c.asked[n-1].Desired == current && !now.Before(c.asked[n-1].At) {
		return // unchanged: the last record still holds
	}
	c.asked = append(c.asked, planner.Step{At: now, Desired: current})
	keep := now.Add(-c.plan.Fleet.BootDelay - 10*time.Minute)
	k := 0
	for k+1 < len(c.asked) && c.asked[k+1].At.Before(keep) {
		k++
	}
	c.asked = c.asked[k:]
}

// readyEstimate is the instances that were ready over [from, to]: the
// fewest the pool was asked for from a lead time before from until to (a
// later rise was still starting). The lead is the boot delay, or the warm
// start with a warm tier, whose pool covers the plan's rises. ok is false
// without records that old.
func (c *Controller) readyEstimate(from, to time.Time) (n int, ok bool) {
	since := from.Add(-c.plan.Fleet.Lead())
	if len(c.asked) == 0 || c.asked[0].At.After(since) {
		return 0, false
	}
	n = math.MaxInt
	for i, a := range c.asked {
		// Record i holds from a.At until the next record.
		if i+1 < len(c.asked) && !c.asked[i+1].At.After(since) {
			continue
		}
		if a.At.After(to) {
			break
		}
		n = min(n, a.Desired)
	}
	return n, true
}

// levelAt says which level Decide follows at now and why, when the reason
// should be shown: a stepped-back gate, or a plan that has run out.
func (c *Controller) levelAt(now time.Time, found bool) (level, why string) {
	r := &c.last
	if r.At.IsZero() {
		return planner.GateReactive, ""
	}
	level, why = c.followed(), r.Gate.Reason
	if found {
		if level != planner.GateProfile {
			why = ""
		}
		return level, why
	}
	if level != planner.GateReactive {
		return planner.GateReactive, fmt.Sprintf("the %s plan of the refit at %s has run out", level, r.At.Format(time.RFC3339))
	}
	return level, why
}

// followed is the level whose plan the controller follows.
func (c *Controller) followed() string { return c.followedAt(c.last.Gate) }

func (c *Controller) followedAt(g planner.GateResult) string {
	if c.settings.Follow != "" {
		return c.settings.Follow
	}
	return g.Level
}

// Hold returns the capacity step for now when the live signals cannot be
// read (store down, collector silent): the trusted forecast plan and the
// schedule floors may still raise the pool, but nothing lowers it below
// current, and the reactive rules are neither fed nor consulted, so their
// state is as it was. why says what is missing, for the step's reason.
func (c *Controller) Hold(now time.Time, current int, why string) planner.Step {
	terms := []planner.Step{{At: now, Desired: current, Reason: fmt.Sprintf("hold %d: %s", current, why)}}
	plan, planned := c.PlanStep(now)
	found := planned && !c.strategy.NoPlan
	if found {
		terms = append(terms, plan)
	}
	if n := c.strategy.Flat; n > current {
		terms = append(terms, planner.Step{At: now, Desired: n, Reason: "flat: " + strconv.Itoa(n) + " instances"})
	}
	c.level, _ = c.levelAt(now, found)
	terms = append(terms, c.plan.FloorStep(now))
	out := c.plan.Combine(now, terms...)
	out.Warm = c.warmFor(out.Desired, plan, planned)
	return out
}

// PlanStep returns the step in force at now of the plan the controller
// follows (the gate's, or Settings.Follow's). found is false before the
// plan starts, after its forecast ends (a plan is only followed while
// refits keep it fresh: when they fail, e.g. because the store is down,
// the reactive rules take over once it runs out) and at the reactive
// level.
func (c *Controller) PlanStep(now time.Time) (planner.Step, bool) {
	r := &c.last
	if r.At.IsZero() {
		return planner.Step{}, false
	}
	level := c.followed()
	end := r.Forecast.End()
	if level == planner.GateProfile {
		end = r.ProfileForecast.End()
	}
	if !now.Before(end) {
		return planner.Step{}, false
	}
	return c.trusted(level).At(now)
}

// trusted returns the plan of a gate level (nil for reactive).
func (c *Controller) trusted(level string) planner.Schedule {
	switch level {
	case planner.GateModel:
		return c.last.ModelPlan
	case planner.GateProfile:
		return c.last.ProfilePlan
	}
	return nil
}

// Plan returns the trusted plan's steps from now on, for back-ends that
// can act on a schedule themselves (actuator.Actuator.PublishSchedule).
func (c *Controller) Plan(now time.Time) planner.Schedule {
	plan := c.trusted(c.followed())
	var out planner.Schedule
	for i, st := range plan {
		if i+1 < len(plan) && !plan[i+1].At.After(now) {
			continue
		}
		out = append(out, st)
	}
	return out
}

// warmingUp reports whether the warm-up term is in force: before the first
// refit, and while the history is shorter than the model needs.
func (c *Controller) warmingUp() bool { return c.last.At.IsZero() || c.last.WarmingUp }

// WarmingUp reports whether the controller has no refit yet, or its last
// refit had less history than the model needs (Refit.WarmingUp): a
// service then refits as soon as the history allows (ShortHistory), not
// at the next refit time, so that imported history is used at once.
func (c *Controller) WarmingUp() bool { return c.warmingUp() }

// ShortHistory reports whether history (on the forecast step, oldest
// first, gaps NaN) is shorter, from its first value on, than the
// planner.Gating.MinSeasons seasons the model needs.
func (c *Controller) ShortHistory(history []float64) bool {
	return len(trimLeadingGaps(history)) < c.plan.Gating.MinSeasons*c.season()
}

// warmUpStep is the warm-up term (see planner.Bounds.NoWarmUpPeak): during
// a cold start (ColdStart), the need of the peak seen so far, with the
// peak cap's headroom. On the first season there is no forecast and it
// stands beside the reactive rules alone; then beside the seasonal
// profile's plan, until the model has the history it needs; then, until
// the model's first forecasts are scored, beside the model's plan, holding
// the peak of live demand.
func (c *Controller) warmUpStep(now time.Time) (planner.Step, bool) {
	b := c.plan.Bounds
	if b.NoWarmUpPeak || !c.ColdStart() || c.warmPeak <= 0 {
		return planner.Step{}, false
	}
	rate := c.warmPeak * math.Max(b.Headroom(), 1)
	n := c.plan.InstancesFor(rate)
	return planner.Step{At: now, Desired: n, Reason: coldPeakReason(!c.warmingUp(), c.warmPeak, n)}, true
}

// trustedPeriods are the periods with MinSeasons cycles of history.
func (c *Controller) trustedPeriods(n int) []int {
	out := []int{}
	for _, p := range c.periods {
		if n >= c.plan.Gating.MinSeasons*p {
			out = append(out, p)
		}
	}
	return out
}

// profilePeriod is the longest period with a whole cycle of history, or 0.
func (c *Controller) profilePeriod(n int) int {
	best := 0
	for _, p := range c.periods {
		if n >= p {
			best = p
		}
	}
	return best
}

// step is t's number on the forecast grid.
func (c *Controller) step(t time.Time) int64 { return stepIndex(t, c.settings.Step) }

// remember stores the demand of the steps in history, so earlier forecasts
// can be scored and the peak found, and forgets what is older than the
// gating window and the error window need.
func (c *Controller) remember(now time.Time, history []float64) {
	step := c.settings.Step
	end := c.step(now)
	keep := c.step(now.Add(-max(c.plan.Gating.Window+c.longestPeriod(), c.plan.Bounds.Window()+step)))
	for i, v := range history {
		if k := end - int64(len(history)-i); k >= keep {
			c.actual.set(k, v)
		}
	}
	c.actual.forget(keep)
	c.forecasts.forget(keep)
	c.errors.forget(c.step(now.Add(-c.plan.Bounds.Window() - c.longestPeriod())))
}

// scoreErrors records actual − forecast for the remembered forecasts of
// steps before now whose demand is known and not scored yet.
func (c *Controller) scoreErrors(now time.Time) {
	if c.errorsFrom.IsZero() {
		return
	}
	from, end := c.step(c.errorsFrom), c.step(now)
	c.forecasts.each(func(k int64, f [2]float64) {
		if k < from || k >= end {
			return
		}
		if _, done := c.errors.get(k); done {
			return
		}
		if y, ok := c.actual.get(k); ok && !math.IsNaN(y) {
			c.errors.set(k, [2]float64{y - f[0], y - f[1]})
		}
	})
}

// recentPeak is the largest value of the last Bounds.PeakSpan() of
// history (0 without a cap or data).
func (c *Controller) recentPeak(history []float64) float64 {
	b := c.plan.Bounds
	if b.Headroom() <= 0 {
		return 0
	}
	n := int(b.PeakSpan() / c.settings.Step)
	peak := 0.0
	for _, v := range history[max(0, len(history)-n):] {
		if v > peak {
			peak = v
		}
	}
	// The history may hold each step's mean: the observed minutes go
	// higher.
	if c.owner {
		c.peaks.forget(c.step(c.last.At) - int64(n))
	}
	c.peaks.each(func(_ int64, v float64) { peak = math.Max(peak, v) })
	return peak
}

// gateInput scores the remembered forecasts over the gating window before
// now against seasonal naive at the longest period with two cycles of
// history. Steps where only the profile ran yet score the profile alone
// (the model's error stays NaN: not measured).
func (c *Controller) gateInput(now time.Time, historySteps int) planner.GateInput {
	in := planner.GateInput{HistorySteps: historySteps, Season: 1, Step: c.settings.Step,
		ModelError: math.NaN(), ProfileError: math.NaN(), NaiveError: math.NaN()}
	if len(c.periods) > 0 {
		in.Season = c.periods[0]
	}
	naive := 0
	for _, p := range c.periods {
		if historySteps >= 2*p {
			naive = p
		}
	}
	if naive == 0 {
		return in
	}
	window := int64(max(1, int(c.plan.Gating.Window/c.settings.Step)))
	var both, profileOnly errorSums
	end := c.step(now)
	for k := end - window; k < end; k++ {
		y, okY := c.actual.get(k)
		base, okB := c.actual.get(k - int64(naive))
		f, okF := c.forecasts.get(k)
		if !okY || !okB || !okF || math.IsNaN(y) || math.IsNaN(base) || math.IsNaN(f[1]) {
			continue
		}
		profileOnly.add(y, math.NaN(), f[1], base)
		if !math.IsNaN(f[0]) {
			both.add(y, f[0], f[1], base)
		}
	}
	switch {
	case both.n > 0:
		in.ModelError, in.ProfileError, in.NaiveError = both.model/both.n, both.profile/both.n, both.naive/both.n
	case profileOnly.n > 0:
		in.ProfileError, in.NaiveError = profileOnly.profile/profileOnly.n, profileOnly.naive/profileOnly.n
	}
	return in
}

// errorSums accumulates absolute errors for mean absolute errors.
type errorSums struct{ model, profile, naive, n float64 }

func (e *errorSums) add(y, model, profile, naive float64) {
	e.model += math.Abs(y - model)
	e.profile += math.Abs(y - profile)
	e.naive += math.Abs(y - naive)
	e.n++
}

func (c *Controller) longestPeriod() time.Duration {
	if len(c.periods) == 0 {
		return 0
	}
	return time.Duration(c.periods[len(c.periods)-1]) * c.settings.Step
}

// trimLeadingGaps drops the missing steps before the first observation:
// a store queried over History returns them for a pool younger than that,
// and they must not count as history.
func trimLeadingGaps(x []float64) []float64 {
	for i, v := range x {
		if !math.IsNaN(v) {
			return x[i:]
		}
	}
	return nil
}

func hasFinite(x []float64) bool {
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return true
		}
	}
	return false
}

func methodName(f model.Forecast) string {
	if f.Fallback != "" {
		return f.Method + " (fallback: " + f.Fallback + ")"
	}
	return f.Method
}
