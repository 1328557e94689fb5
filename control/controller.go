package control

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/seasonal"
	"github.com/prewarm/prewarm/planner"
)

// Settings configure a Controller's forecasts. Zero fields take the
// defaults documented on each.
type Settings struct {
	// Step is the forecast grid (default 30m); history passed to Refit must
	// be on this grid.
	Step time.Duration
	// RefitEvery is how often the service (and the backtest, which runs
	// the same controller) refits (default 3h); it bounds how long one
	// refit's plan is followed. A refit fits model/auto afresh, tens of
	// milliseconds on four weeks of history: a backtest of seven months
	// makes 1,700 of them at 3 h and 5,200 at 1 h, while the plans'
	// cost and SLO barely differ (the reactive term and the calibration
	// react within minutes either way).
	RefitEvery time.Duration
	// Horizon is how far each refit forecasts (default 6h), at least
	// RefitEvery plus the boot delay.
	Horizon time.Duration
	// History is how much past demand a refit reads (default 28 days).
	History time.Duration
	// Periods are the seasonal periods (default a day and a week).
	Periods []time.Duration
	// NewModel builds the predictive model for the periods (in steps) that
	// have enough history; nil means model/auto.
	NewModel func(periods []int) model.Forecaster
	// NewProfile builds the seasonal-profile stand-in for one period (in
	// steps); nil means the mean of the last 4 cycles.
	NewProfile func(period int) model.Forecaster
}

// WithDefaults returns s with its zero fields set to the defaults.
func (s Settings) WithDefaults() Settings {
	if s.Step <= 0 {
		s.Step = 30 * time.Minute
	}
	if s.RefitEvery <= 0 {
		s.RefitEvery = 3 * time.Hour
	}
	if s.Horizon <= 0 {
		s.Horizon = 6 * time.Hour
	}
	if s.History <= 0 {
		s.History = 28 * 24 * time.Hour
	}
	if s.Periods == nil {
		s.Periods = []time.Duration{24 * time.Hour, 7 * 24 * time.Hour}
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
	return nil
}

// Refit is what one refit decided: the plans made at At from the demand
// before At, and which of them the hybrid policy trusts.
type Refit struct {
	At time.Time
	// ModelPlan and ProfilePlan are nil when history was too short.
	ModelPlan, ProfilePlan planner.Schedule
	// Model and Profile name the methods that ran, with any fallback.
	Model, Profile string
	// Forecast is the model's demand forecast (requests/s) from At.
	Forecast planner.DemandForecast
	// Gate says which plan Decide follows, and why; set by Adopt.
	Gate planner.GateResult

	// modelMean and profileMean are the forecasts for the steps until the
	// next refit, scored by later refits.
	modelMean, profileMean []float64
}

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
	// forecasts remembers, per step start, the model's and the profile's
	// forecasts, to score them once the demand is known.
	forecasts map[time.Time][2]float64
	// actual remembers demand per step start seen in refit histories.
	actual map[time.Time]float64
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
	c := &Controller{plan: plan, settings: s, forecasts: map[time.Time][2]float64{}, actual: map[time.Time]float64{}}
	for _, p := range s.Periods {
		c.periods = append(c.periods, int(p/s.Step))
	}
	sort.Ints(c.periods)
	return c, nil
}

// Settings returns the controller's settings with defaults filled in.
func (c *Controller) Settings() Settings { return c.settings }

// Last returns the refit in force (zero before the first).
func (c *Controller) Last() Refit { return c.last }

// Level returns the gate level the last Decide followed: the model's plan,
// the seasonal profile's, or the reactive rules alone.
func (c *Controller) Level() string { return c.level }

// ErrNoHistory is returned by Refit when the history holds no finite value.
var ErrNoHistory = errors.New("no demand history to forecast from")

// Refit forecasts from history and puts the result in force: Forecast then
// Adopt. history is the demand (requests/s) per Step for the steps ending
// at now, oldest first (NaN: missing); now should be a multiple of Step.
func (c *Controller) Refit(now time.Time, history []float64) (Refit, error) {
	r, err := c.Forecast(now, history)
	if err != nil && !errors.Is(err, ErrNoHistory) {
		return r, err
	}
	return c.Adopt(r, history), err
}

// Forecast makes one refit's forecasts and plans from history, as Refit
// describes, without putting them in force. It reads only the controller's
// configuration, so a backtest may compute many refits in parallel and
// Adopt them in time order.
func (c *Controller) Forecast(now time.Time, history []float64) (Refit, error) {
	s := c.settings
	r := Refit{At: now}
	history = trimLeadingGaps(history)
	if !hasFinite(history) {
		return r, ErrNoHistory
	}
	stamp := now.Format(time.RFC3339)
	horizon := max(int(s.Horizon/s.Step), int((s.RefitEvery+c.plan.Fleet.BootDelay+s.Step-1)/s.Step)+1)
	owned := int(s.RefitEvery / s.Step)
	level := c.plan.ForecastLevel()
	fc, err := s.NewModel(c.trustedPeriods(len(history))).Forecast(history, horizon, level)
	if err != nil {
		return r, fmt.Errorf("refit at %s: model: %w", stamp, err)
	}
	r.Forecast = planner.DemandForecast{Start: now, Step: s.Step, Forecast: fc}
	r.Model = methodName(fc)
	if r.ModelPlan, err = planner.ForecastPlan(now, r.Forecast, c.plan); err != nil {
		return r, fmt.Errorf("refit at %s: model plan: %w", stamp, err)
	}
	r.modelMean = fc.Mean[:min(owned, len(fc.Mean))]
	if p := c.profilePeriod(len(history)); p > 0 {
		pf, err := s.NewProfile(p).Forecast(history, horizon, level)
		if err != nil {
			return r, fmt.Errorf("refit at %s: profile: %w", stamp, err)
		}
		r.Profile = methodName(pf)
		pd := planner.DemandForecast{Start: now, Step: s.Step, Forecast: pf}
		if r.ProfilePlan, err = planner.ForecastPlan(now, pd, c.plan); err != nil {
			return r, fmt.Errorf("refit at %s: profile plan: %w", stamp, err)
		}
		r.profileMean = pf.Mean[:min(owned, len(pf.Mean))]
	}
	return r, nil
}

// Adopt puts a refit made by Forecast in force: it remembers the demand in
// history (the same history the refit was made from) to score earlier
// forecasts, records the refit's own forecasts to be scored later, and lets
// planner.Gate decide which plan to trust. Refits must be adopted in time
// order. It returns r with its Gate set.
func (c *Controller) Adopt(r Refit, history []float64) Refit {
	c.remember(r.At, history)
	for i, v := range r.modelMean {
		p := math.NaN()
		if i < len(r.profileMean) {
			p = r.profileMean[i]
		}
		c.forecasts[r.At.Add(time.Duration(i)*c.settings.Step)] = [2]float64{v, p}
	}
	r.Gate = c.plan.Gate(c.gateInput(r.At, len(trimLeadingGaps(history))))
	c.last = r
	return r
}

// Decide returns the capacity step for now: the largest of the trusted
// forecast plan (while its forecast lasts), the reactive rules fed with obs,
// and the schedule floors, with the reason of the term that won. current is
// the pool's desired count now (what it was last asked for, booting
// instances included), which the reactive rules step from.
func (c *Controller) Decide(now time.Time, obs planner.Observation, current int) planner.Step {
	var reactive planner.Step
	c.reactive, reactive = c.plan.ReactiveNext(c.reactive, obs, current)
	terms := make([]planner.Step, 0, 3)
	level := planner.GateReactive
	if r := c.last; !r.At.IsZero() {
		level = r.Gate.Level
		why := r.Gate.Reason
		if st, found := c.planStep(now); found {
			if level == planner.GateProfile {
				st.Reason = fmt.Sprintf("%s [%s]", st.Reason, why)
			}
			terms = append(terms, st)
		} else if level != planner.GateReactive {
			level = planner.GateReactive
			why = fmt.Sprintf("the %s plan of the refit at %s has run out", r.Gate.Level, r.At.Format(time.RFC3339))
		}
		if level == planner.GateReactive {
			reactive.Reason = fmt.Sprintf("%s [%s]", reactive.Reason, why)
		}
	}
	c.level = level
	terms = append(terms, reactive, c.plan.FloorStep(now))
	return c.plan.Combine(now, terms...)
}

// Hold returns the capacity step for now when the live signals cannot be
// read (store down, collector silent): the trusted forecast plan and the
// schedule floors may still raise the pool, but nothing lowers it below
// current, and the reactive rules are neither fed nor consulted, so their
// state is as it was. why says what is missing, for the step's reason.
func (c *Controller) Hold(now time.Time, current int, why string) planner.Step {
	terms := []planner.Step{{At: now, Desired: current, Reason: fmt.Sprintf("hold %d: %s", current, why)}}
	if st, found := c.planStep(now); found {
		terms = append(terms, st)
	}
	terms = append(terms, c.plan.FloorStep(now))
	return c.plan.Combine(now, terms...)
}

// PlanStep returns the step in force at now of the given level's plan
// (GateModel or GateProfile) of the refit in force, whatever the gate
// trusts: the predictive and scheduled backtest policies follow one plan
// alone. found is false when there is no such plan at now.
func (c *Controller) PlanStep(now time.Time, level string) (planner.Step, bool) {
	r := c.last
	if r.At.IsZero() || !now.Before(r.Forecast.End()) {
		return planner.Step{}, false
	}
	return c.trusted(level).At(now)
}

// Observe feeds the controller an observation without deciding, for
// policies that follow a plan alone.
func (c *Controller) Observe(obs planner.Observation) {}

// planStep returns the trusted plan's step in force at now. found is false
// before the plan starts, after its forecast ends (a plan is only followed
// while refits keep it fresh: when they fail, e.g. because the store is
// down, the reactive rules take over once it runs out) and at the reactive
// level.
func (c *Controller) planStep(now time.Time) (planner.Step, bool) {
	r := c.last
	if r.At.IsZero() || !now.Before(r.Forecast.End()) {
		return planner.Step{}, false
	}
	return c.trusted(r.Gate.Level).At(now)
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
	plan := c.trusted(c.last.Gate.Level)
	var out planner.Schedule
	for i, st := range plan {
		if i+1 < len(plan) && !plan[i+1].At.After(now) {
			continue
		}
		out = append(out, st)
	}
	return out
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

// remember stores the demand of the steps in history, so earlier forecasts
// can be scored, and forgets what is older than the gating window needs.
func (c *Controller) remember(now time.Time, history []float64) {
	step := c.settings.Step
	start := now.Add(-time.Duration(len(history)) * step)
	keep := now.Add(-c.plan.Gating.Window - c.longestPeriod())
	for i, v := range history {
		t := start.Add(time.Duration(i) * step)
		if !t.Before(keep) {
			c.actual[t] = v
		}
	}
	for t := range c.actual {
		if t.Before(keep) {
			delete(c.actual, t)
		}
	}
	for t := range c.forecasts {
		if t.Before(keep) {
			delete(c.forecasts, t)
		}
	}
}

// gateInput scores the remembered forecasts over the gating window before
// now against seasonal naive at the longest period with two cycles of
// history. Steps where only the profile ran yet score the profile alone
// (the model's error stays NaN: not measured).
func (c *Controller) gateInput(now time.Time, historySteps int) planner.GateInput {
	in := planner.GateInput{HistorySteps: historySteps, Season: 1,
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
	step := c.settings.Step
	window := max(1, int(c.plan.Gating.Window/step))
	var both, profileOnly errorSums
	for t := now.Add(-time.Duration(window) * step); t.Before(now); t = t.Add(step) {
		y, okY := c.actual[t]
		base, okB := c.actual[t.Add(-time.Duration(naive)*step)]
		f, okF := c.forecasts[t]
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
