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
	// RefitEvery is how often the service refits (default 1h); it bounds
	// how long one refit's plan is followed.
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
		s.RefitEvery = time.Hour
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
	// Gate says which plan Decide follows, and why.
	Gate planner.GateResult
}

// Controller is one pool's live hybrid policy. It is not safe for
// concurrent use; the service gives each pool its own.
type Controller struct {
	plan     planner.Config
	settings Settings
	periods  []int // seasonal periods in steps, shortest first
	last     Refit
	reactive planner.ReactiveState
	// forecasts remembers, per step start, the model's and the profile's
	// one-refit-ahead forecasts, to score them once the demand is known.
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

// Last returns the most recent refit (zero before the first).
func (c *Controller) Last() Refit { return c.last }

// ErrNoHistory is returned by Refit when the history holds no finite value.
var ErrNoHistory = errors.New("no demand history to forecast from")

// Refit forecasts from history, the demand (requests/s) per Step for the
// steps ending at now, oldest first (NaN: missing), and makes new plans.
// now should be a multiple of Step.
func (c *Controller) Refit(now time.Time, history []float64) (Refit, error) {
	s := c.settings
	c.remember(now, history)
	history = trimLeadingGaps(history)
	r := Refit{At: now}
	if !hasFinite(history) {
		c.last = r
		return r, ErrNoHistory
	}
	horizon := max(int(s.Horizon/s.Step), int((s.RefitEvery+c.plan.Fleet.BootDelay+s.Step-1)/s.Step)+1)
	level := c.plan.ForecastLevel()
	df := planner.DemandForecast{Start: now, Step: s.Step}
	fc, err := s.NewModel(c.trustedPeriods(len(history))).Forecast(history, horizon, level)
	if err != nil {
		return r, fmt.Errorf("refit at %s: model: %w", now.Format(time.RFC3339), err)
	}
	df.Forecast = fc
	r.Forecast = df
	r.Model = methodName(fc)
	if r.ModelPlan, err = planner.ForecastPlan(now, df, c.plan); err != nil {
		return r, fmt.Errorf("refit at %s: model plan: %w", now.Format(time.RFC3339), err)
	}
	if p := c.profilePeriod(len(history)); p > 0 {
		pf, err := s.NewProfile(p).Forecast(history, horizon, level)
		if err != nil {
			return r, fmt.Errorf("refit at %s: profile: %w", now.Format(time.RFC3339), err)
		}
		r.Profile = methodName(pf)
		if r.ProfilePlan, err = planner.ForecastPlan(now, planner.DemandForecast{Start: now, Step: s.Step, Forecast: pf}, c.plan); err != nil {
			return r, fmt.Errorf("refit at %s: profile plan: %w", now.Format(time.RFC3339), err)
		}
		c.record(now, fc.Mean, pf.Mean)
	} else {
		c.record(now, fc.Mean, nil)
	}
	r.Gate = c.plan.Gate(c.gateInput(now, len(history)))
	c.last = r
	return r, nil
}

// Decide returns the capacity step for now: the largest of the trusted
// forecast plan, the reactive rules fed with obs, and the schedule floors.
// current is the pool's desired count now.
func (c *Controller) Decide(now time.Time, obs planner.Observation, current int) planner.Step {
	var reactive planner.Step
	c.reactive, reactive = c.plan.ReactiveNext(c.reactive, obs, current)
	terms := make([]planner.Step, 0, 3)
	var plan planner.Schedule
	switch c.last.Gate.Level {
	case planner.GateModel:
		plan = c.last.ModelPlan
	case planner.GateProfile:
		plan = c.last.ProfilePlan
	}
	if st, ok := plan.At(now); ok && !c.last.At.IsZero() {
		if c.last.Gate.Level == planner.GateProfile {
			st.Reason = fmt.Sprintf("%s [%s]", st.Reason, c.last.Gate.Reason)
		}
		terms = append(terms, st)
	} else if c.last.Gate.Reason != "" {
		reactive.Reason = fmt.Sprintf("%s [%s]", reactive.Reason, c.last.Gate.Reason)
	}
	terms = append(terms, reactive, c.plan.FloorStep(now))
	return c.plan.Combine(now, terms...)
}

// Plan returns the trusted plan's steps from now on, for back-ends that
// can act on a schedule themselves (actuator.Actuator.PublishSchedule).
func (c *Controller) Plan(now time.Time) planner.Schedule {
	var plan planner.Schedule
	switch c.last.Gate.Level {
	case planner.GateModel:
		plan = c.last.ModelPlan
	case planner.GateProfile:
		plan = c.last.ProfilePlan
	}
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

// record keeps the forecasts for the steps until the next refit.
func (c *Controller) record(now time.Time, modelMean, profileMean []float64) {
	n := int(c.settings.RefitEvery / c.settings.Step)
	for i := 0; i < n && i < len(modelMean); i++ {
		p := math.NaN()
		if i < len(profileMean) {
			p = profileMean[i]
		}
		c.forecasts[now.Add(time.Duration(i)*c.settings.Step)] = [2]float64{modelMean[i], p}
	}
}

// gateInput scores the remembered forecasts over the gating window before
// now against seasonal naive at the longest period with two cycles.
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
	var sm, sp, sn, n float64
	for t := now.Add(-c.plan.Gating.Window); t.Before(now); t = t.Add(step) {
		f, ok := c.forecasts[t]
		y, okY := c.actual[t]
		base, okB := c.actual[t.Add(-time.Duration(naive)*step)]
		if !ok || !okY || !okB || math.IsNaN(y) || math.IsNaN(base) || math.IsNaN(f[0]) || math.IsNaN(f[1]) {
			continue
		}
		sm += math.Abs(y - f[0])
		sp += math.Abs(y - f[1])
		sn += math.Abs(y - base)
		n++
	}
	if n > 0 {
		in.ModelError, in.ProfileError, in.NaiveError = sm/n, sp/n, sn/n
	}
	return in
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
