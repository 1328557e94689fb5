package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/fleetsim"
	"github.com/prewarm/prewarm/planner"
)

// Options configure a Tuner. The zero value of each field is its default.
type Options struct {
	// Window is how much recent history each candidate is scored on
	// (default 14 days; 7 to 28 days).
	Window time.Duration `yaml:"window"`
	// HalfLife weighs the window's days: a day counts half as much per
	// HalfLife of age, so that a bad week fades (default 4 days; 1 day to
	// Window; negative: every day alike).
	HalfLife time.Duration `yaml:"half_life"`
	// CostHalfLife weighs the window's days in a candidate's cost as
	// HalfLife does in its misses (default 1 day; 1 hour to Window;
	// negative: every day alike). It is shorter: misses are rare and need
	// the window's memory, while cost is measured every minute and drifts,
	// as a calibrated candidate lowers its own headroom, so its recent days
	// say most of what it costs now.
	CostHalfLife time.Duration `yaml:"cost_half_life"`
	// MinHistory is how long a candidate must have been replayed before
	// it can be chosen (default 7 days; 1 day to Window).
	MinHistory time.Duration `yaml:"min_history"`
	// Margin is the share of the SLO's miss budget a candidate must leave
	// unspent over the window to be chosen (default 0.4; 0 to 0.9).
	Margin float64 `yaml:"margin"`
	// Trim is how many of the window's worst days (by share of requests
	// late) each candidate's standing leaves out: the miss budget spent on
	// purpose on a rare bad day, so that a once-a-fortnight surge does not
	// buy a fleet sized for it every day (default 0; 0 to 3).
	Trim int `yaml:"trim"`
	// Slack is how far past the miss budget a calibrated candidate's
	// window may run and still qualify: its calibration moves its
	// headroom until it meets the SLO, so a window it fell a little short
	// in says less of its next days than a fixed rule's does (default 1:
	// the budget again; 0 to 2).
	Slack float64 `yaml:"slack"`
	// Hysteresis is how much cheaper than the candidate in force another
	// must have been to replace it (default 0.05: 5%; 0 to 0.5).
	Hysteresis float64 `yaml:"hysteresis"`
	// GuardWindow and GuardBurn: when the live estimate of the requests
	// served late spends the miss budget more than GuardBurn times as
	// fast as the SLO allows over the last GuardWindow and over the last
	// hour, the tuner moves at once to the cheapest candidate that held
	// the SLO over that window (defaults 24h and 3; 2h to 48h and 1 to
	// 100).
	GuardWindow time.Duration `yaml:"guard_window"`
	GuardBurn   float64       `yaml:"guard_burn"`
	// Sim holds the twins' simulator settings: the tick (the pool's
	// decision interval, required), queue timeout, metrics lag, boot
	// spread and drains. Planner (with the pool's limits, which the
	// twins' safety layer enforces), Start and Initial are set by the
	// tuner.
	Sim fleetsim.Options `yaml:"-"`
	// Enabled lets the pool choose walk-forward among its candidates
	// (default true: Default, and a pool's defaults). False runs the
	// hybrid alone and replays no twin. A pool file may still write the
	// older key off: true, read as enabled: false.
	Enabled bool `yaml:"enabled" yamlinverse:"off"`
}

// whyBeforeFirstChoice is the reason the hybrid is in force until the
// candidates have the history to be chosen.
const whyBeforeFirstChoice = "default until the candidates have a history"

// Default returns the tuner's defaults: tuning on, every other option
// at its default (WithDefaults).
func Default() Options { return Options{Enabled: true}.WithDefaults() }

// Option ranges, for validation and flags.
const (
	MinWindow = 7 * 24 * time.Hour
	MaxWindow = 28 * 24 * time.Hour
)

// WithDefaults returns o with its zero fields set.
func (o Options) WithDefaults() Options {
	if o.Window == 0 {
		o.Window = 14 * 24 * time.Hour
	}
	if o.MinHistory == 0 {
		o.MinHistory = 7 * 24 * time.Hour
	}
	if o.Margin == 0 {
		o.Margin = 0.4
	}
	if o.HalfLife == 0 {
		o.HalfLife = 4 * 24 * time.Hour
	}
	if o.CostHalfLife == 0 {
		o.CostHalfLife = 24 * time.Hour
	}
	if o.Slack == 0 {
		o.Slack = 1
	}
	if o.Hysteresis == 0 {
		o.Hysteresis = 0.05
	}
	if o.GuardWindow == 0 {
		o.GuardWindow = 24 * time.Hour
	}
	if o.GuardBurn == 0 {
		o.GuardBurn = 3
	}
	return o
}

// Validate names the first option out of its range (CheckRanges), by
// its YAML key.
func (o Options) Validate() error {
	var re *planner.RangeError
	if err := planner.RangeErrors(o.CheckRanges); errors.As(err, &re) {
		return &OptionError{Key: strings.TrimPrefix(re.Key, "tune."), Msg: re.Value + " is out of range: want " + re.Want}
	}
	return nil
}

// OptionError names the option (its YAML key under tune:) that is out of
// range.
type OptionError struct{ Key, Msg string }

func (e *OptionError) Error() string { return "tune." + e.Key + ": " + e.Msg }

// Candidate names, as the status page, the API and the decision log show
// them.
const (
	Hybrid         = "hybrid"
	PlanOnly       = "forecast-only"
	HybridAdditive = "hybrid-additive"
	PlanAdditive   = "forecast-only-additive"
	Reactive       = "reactive"
	ReactiveSurge  = "reactive-surge"
	Flat           = "flat"
)

// candidate is one policy replayed on a twin of the pool.
type candidate struct {
	name string
	// calibrated candidates move their own headroom towards the SLO.
	calibrated bool
	ctl        *control.Controller // nil for a flat size
	flat       int                 // the size, for a flat one
	// schedule is the schedule candidate's size per hour of the day, and
	// lead how far ahead it starts the next hour's boots.
	schedule []int
	lead     time.Duration
	twin     *fleetsim.Sim
	// since is when its twin began; adopted the time of the last refit
	// its controller adopted.
	since, adopted time.Time
	// days are the per-day figures, oldest first, over the window;
	// recent the per-hour ones over the guard window.
	days, recent []score
	// hourly are a flat size's per-hour figures over the window, which
	// the schedule is fitted to.
	hourly hourMisses
	// memory is its controller's calibration memory at the start of each
	// day of the window, oldest first (none for a flat size or the
	// schedule): what a day let through is forgiven back to.
	memory []DayMemory
}

// score is what a twin spent and served over a day or an hour.
type score struct {
	At                  int64 // day or hour number since the epoch
	Cost, Arrived, Late float64
}

func (s score) missShare() float64 {
	if s.Arrived <= 0 {
		return 0
	}
	return min(max(s.Late/s.Arrived, 0), 1) // sums of many ticks may round past either end
}

// Tuner is one pool's walk-forward choice of policy. Not safe for
// concurrent use (the service gives each pool its own).
type Tuner struct {
	opts   Options
	live   *control.Controller
	base   planner.Config
	cands  []*candidate
	flats  []*candidate
	sched  *candidate // the schedule, from its first fit
	chosen string     // the candidate in force: a name, or "flat"
	flatN  int        // the flat size in force when chosen is Flat
	why    string
	// tunedDay is the day the last daily choice was made; started is
	// when the twins began; tuneFrom the first day the candidates are
	// scored on (0: the twins have not started).
	tunedDay, tuneFrom int64
	started            time.Time
	// liveRecent is the live estimate per hour; lastEst the estimate at
	// the last decision.
	liveRecent []score
	lastEst    control.Estimate
	// guardedAt is when the guard last moved the choice; it waits
	// guardCooldown before it judges the new one.
	guardedAt time.Time
	// peakNeed is the largest need observed, which sizes the flat grid.
	peakNeed int
	// pending are the refits the twins have yet to adopt, oldest first.
	pending []pendingRefit
}

// pendingRefit is a refit and the history it was made from.
type pendingRefit struct {
	refit   control.Refit
	history []float64
}

// New returns a Tuner around the live controller of a pool (made by
// control.New with the pool's planner settings).
func New(live *control.Controller, opts Options) (*Tuner, error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t := &Tuner{opts: opts, live: live, base: live.PlannerConfig(), chosen: Hybrid, why: whyBeforeFirstChoice}
	if t.base.Fleet.MeanServiceTime() <= 0 {
		return nil, fmt.Errorf("tune: the pool needs rps_per_instance or service_time to replay its candidates")
	}
	if tick := opts.Sim.Tick; opts.Enabled && (tick <= 0 || tick > time.Hour) {
		return nil, fmt.Errorf("tune: the decision interval %v must be in (0, 1h] to replay the candidates", tick)
	}
	if !opts.Enabled {
		t.why = "tuning is off"
		return t, nil
	}
	for _, c := range candidates(t.base, opts.Margin) {
		ctl, err := live.Shadow(c.plan, c.strategy)
		if err != nil {
			return nil, fmt.Errorf("tune: candidate %s: %w", c.name, err)
		}
		t.cands = append(t.cands, &candidate{name: c.name, ctl: ctl, calibrated: c.calibrated})
	}
	return t, nil
}

// spec is a candidate's strategy and planner settings; calibrated is
// true when its plans calibrate their own headroom towards the SLO.
type spec struct {
	name       string
	strategy   control.Strategy
	plan       planner.Config
	calibrated bool
}

// candidates are the policies replayed besides the flat grid: the
// hybrid first (the default before there is a history). The calibrated
// ones (the hybrid and the plan alone, each with the variation inside a
// step learned per slot as a share of the level or over the day as a
// height of its own) aim at the bar a fixed rule must clear to be
// chosen: (1 − margin) of the miss budget. The fixed rules are the
// reactive rules at the settings of reactiveGrid, and once more at the
// pool's own with the surge rule on.
func candidates(base planner.Config, margin float64) []spec {
	base.Calibration.Target = 1 - (1-margin)*(1-base.CalibrationTarget())
	additive := base
	additive.Bounds.AdditiveBursts = true
	surge := base
	surge.Reactive.PanicThreshold = 2
	out := []spec{
		{Hybrid, control.Strategy{}, base, true},
		{PlanOnly, control.Strategy{NoReactive: true}, base, true},
		{HybridAdditive, control.Strategy{}, additive, true},
		{PlanAdditive, control.Strategy{NoReactive: true}, additive, true},
		{ReactiveSurge, control.Strategy{NoPlan: true}, surge, false},
	}
	for _, r := range reactiveGrid {
		c := base
		c.TargetUtilisation, c.Reactive.ScaleOutUtilisation, c.Reactive.ScaleInUtilisation = r.target, r.out, r.in
		out = append(out, spec{r.name(), control.Strategy{NoPlan: true}, c, false})
	}
	return out
}

// reactiveGrid are the reactive rules' settings replayed: target
// utilisation × (scale-out, scale-in) thresholds, from holding a lot of
// headroom (scale out at 20% busy) to the common defaults (85% and 30%).
var reactiveGrid = func() []reactiveSetting {
	var g []reactiveSetting
	for _, target := range []float64{0.5, 0.8, 1} {
		for _, th := range [][2]float64{{0.2, 0.05}, {0.4, 0.15}, {0.85, 0.3}} {
			g = append(g, reactiveSetting{target, th[0], th[1]})
		}
	}
	return g
}()

// reactiveSetting is one point of reactiveGrid.
type reactiveSetting struct{ target, out, in float64 }

// name is how the status page shows the setting: "reactive 80%/40%/15%"
// (target utilisation, scale-out and scale-in thresholds).
func (r reactiveSetting) name() string {
	return fmt.Sprintf("%s %.0f%%/%.0f%%/%.0f%%", Reactive, 100*r.target, 100*r.out, 100*r.in)
}

// Live returns the live controller.
func (t *Tuner) Live() *control.Controller { return t.live }

// Refit forecasts from history and puts the refit in force in the live
// controller and every candidate (see control.Controller.Refit): the live
// controller's last model choice is re-run the same day.
func (t *Tuner) Refit(now time.Time, history []float64) (control.Refit, error) {
	r, err := t.live.ForecastReusing(now, history, t.live.Last().Selection())
	if err != nil && !errors.Is(err, control.ErrNoHistory) {
		return r, err
	}
	return t.Adopt(r, history), err
}

// Adopt puts a refit made by the live controller's Forecast in force, in
// the live controller first (it owns the memory the candidates share).
func (t *Tuner) Adopt(r control.Refit, history []float64) control.Refit {
	if c := t.followed(); c != nil {
		// The live controller plans as the chosen twin does: at its
		// settings and calibrated quantile.
		strategy := t.live.Strategy()
		t.live.Follow(c.ctl)
		t.live.SetStrategy(strategy)
	}
	r = t.live.Adopt(r, history)
	// The twins run an observation behind: each adopts the refit when its
	// own clock reaches it (replay).
	if t.opts.Enabled {
		t.pending = append(t.pending, pendingRefit{r, history})
	}
	return r
}

// followed is the twin whose controller the live one plans as: the
// chosen candidate's, the hybrid's for a flat size or the schedule, nil
// without twins.
func (t *Tuner) followed() *candidate {
	if !t.opts.Enabled || len(t.cands) == 0 {
		return nil
	}
	if t.chosen == Flat || t.chosen == Schedule {
		return t.cands[0]
	}
	return t.find(t.chosen)
}

// Decide replays the observation on every candidate's twin, makes the
// day's choice once a day (and at once when the guard trips), and
// returns the live decision of the candidate in force.
func (t *Tuner) Decide(ctx context.Context, now time.Time, obs planner.Observation, current int) planner.Step {
	if t.opts.Enabled {
		t.replay(ctx, obs)
		t.tune(now)
		t.holdSchedule(now)
	}
	st := t.live.Decide(now, obs, current)
	if t.opts.Enabled {
		t.trackLive(now, obs)
	}
	return st
}

// Hold is the live controller's Hold: the signals cannot be read, so
// nothing is replayed either; a schedule in force still turns its hour.
func (t *Tuner) Hold(now time.Time, current int, why string) planner.Step {
	if t.opts.Enabled {
		t.holdSchedule(now) // the schedule's hours turn without metrics too
	}
	return t.live.Hold(now, current, why)
}

// replay feeds the observed demand of [obs.At−obs.Span, obs.At) to every
// twin, tick by tick; a twin behind the observation replays the missing
// ticks as gaps.
func (t *Tuner) replay(ctx context.Context, obs planner.Observation) {
	if obs.Span <= 0 || math.IsNaN(obs.DemandRPS) {
		return
	}
	from := obs.At.Add(-obs.Span)
	if t.started.IsZero() {
		if t.start(from, obs); !t.opts.Enabled {
			return
		}
	}
	t.growFlats(from, obs.DemandRPS)
	for c := range t.cands {
		t.replayCandidate(ctx, c, from, obs)
	}
	for _, c := range t.flats {
		c.replay(ctx, from, obs.At, obs.DemandRPS, t.opts, t.base.Prices)
	}
	if t.sched != nil {
		t.sched.replay(ctx, from, obs.At, obs.DemandRPS, t.opts, t.base.Prices)
	}
	// Every twin has passed the refits made before from.
	k := 0
	for k < len(t.pending) && !t.pending[k].refit.At.After(from) {
		k++
	}
	t.pending = t.pending[k:]
}

// replayCandidate replays a controller candidate tick by tick, adopting
// each pending refit when the twin's clock reaches it.
func (t *Tuner) replayCandidate(ctx context.Context, i int, from time.Time, obs planner.Observation) {
	c := t.cands[i]
	for _, p := range t.pending {
		if p.refit.At.After(from) {
			break
		}
		if !p.refit.At.After(c.adopted) && !c.adopted.IsZero() {
			continue
		}
		if p.refit.At.After(c.twin.Now()) {
			c.replay(ctx, from, p.refit.At, obs.DemandRPS, t.opts, t.base.Prices)
		}
		c.ctl.Adopt(p.refit, p.history)
		c.adopted = p.refit.At
	}
	c.replay(ctx, from, obs.At, obs.DemandRPS, t.opts, t.base.Prices)
}

// all lists the candidates, the flat sizes and the schedule.
func (t *Tuner) all() []*candidate {
	all := append(slices.Clone(t.cands), t.flats...)
	if t.sched != nil {
		all = append(all, t.sched)
	}
	return all
}

// start makes the twins at from, each with the instances the first
// demand needs ready.
// After a restart (Restore) the candidates keep their scores and since;
// the twins start again here.
func (t *Tuner) start(from time.Time, obs planner.Observation) {
	t.started = from
	if t.tunedDay == 0 {
		t.tunedDay = dayOf(from)
	}
	if t.tuneFrom == 0 {
		// Score from the first whole day of the twins, the forecast's
		// warm-up included: the reactive and flat candidates differ from
		// the hybrid from the first minute, and a pool whose model
		// warms up for days should not wait that long for its first
		// choice. The forecast candidates, which hold the same warm-up
		// peak, carry its cost until it leaves the window.
		t.tuneFrom = dayOf(from) + 1
	}
	initial := t.base.Bounded(t.base.InstancesFor(obs.DemandRPS))
	for i, c := range t.cands {
		if c.since.IsZero() {
			c.since = from
		}
		if c.twin = t.newTwin(from, initial, uint64(i)); c.twin == nil {
			t.opts.Enabled, t.why = false, "tuning is off: the pool's candidates cannot be replayed"
			return
		}
	}
	for _, c := range t.flats {
		if c.twin == nil {
			c.twin = t.newTwin(from, c.flat, uint64(1000+c.flat))
		}
	}
	if c := t.sched; c != nil && c.twin == nil {
		c.twin = t.newTwin(from, c.size(from), scheduleStream)
	}
}

func (t *Tuner) newTwin(from time.Time, initial int, stream uint64) *fleetsim.Sim {
	o := t.opts.Sim
	o.Planner, o.Start, o.Initial, o.Stream = t.base, from, initial, 100+stream
	sim, err := fleetsim.New(o.WithDefaults())
	if err != nil { // New checked the tick and the service time
		return nil
	}
	return sim
}

// replay runs the candidate's twin from its clock up to until, the ticks
// in [from, until) at demand rps and the ones before from as gaps.
func (c *candidate) replay(ctx context.Context, from, until time.Time, rps float64, o Options, prices planner.Prices) {
	tick := o.Sim.Tick
	for c.twin.Now().Before(until) {
		at := c.twin.Now()
		demand := rps
		if at.Before(from) {
			demand = math.NaN()
		}
		c.noteMemory(at, o)
		counts := c.twin.Counts()
		current := counts.Desired
		st := planner.Step{At: at, Desired: c.size(at)}
		if c.ctl != nil {
			if seen, ok := c.twin.Latest(); ok {
				st = c.ctl.Decide(at, seen, current)
			} else {
				st = c.ctl.Hold(at, current, "no metrics")
			}
		}
		if st.Desired != current || st.Warm != counts.Warm {
			if _, _, err := c.twin.Apply(ctx, st); err != nil {
				return // the simulated back-end does not fail; a cancelled context ends the replay
			}
		}
		tk := c.twin.Serve(demand, false)
		c.add(at, score{Cost: tk.Cost(prices, tick), Arrived: tk.Arrived, Late: tk.Late()}, o)
	}
}

// noteMemory keeps the controller's calibration memory at the first tick
// of each day, for the days of the window.
func (c *candidate) noteMemory(at time.Time, o Options) {
	d := dayOf(at)
	if c.ctl == nil || (len(c.memory) > 0 && c.memory[len(c.memory)-1].Day == d) {
		return
	}
	c.memory = append(c.memory, DayMemory{Day: d, LnTail: c.ctl.CalibrationMemory()})
	if over := len(c.memory) - int(o.Window/(24*time.Hour)) - 1; over > 0 {
		c.memory = c.memory[over:]
	}
}

// add counts a tick's figures in its day's and its hour's scores and
// forgets what is older than the window and the guard window.
func (c *candidate) add(at time.Time, s score, o Options) {
	s.At = dayOf(at)
	c.days = addScore(c.days, s, int64(o.Window/(24*time.Hour))+1)
	s.At = hourOf(at)
	c.recent = addScore(c.recent, s, int64(o.GuardWindow/time.Hour)+1)
	if c.flat > 0 {
		c.hourly.add(s.At, s.Arrived, max(s.Late, 0), int(o.Window/time.Hour)+hoursPerDay)
	}
}

// addScore adds s to the last entry of list when it is for the same
// period, else appends it, keeping at most keep entries. A tick's
// lateness is served minus within, which rounds to a hair below zero.
func addScore(list []score, s score, keep int64) []score {
	s.Late = max(s.Late, 0)
	if n := len(list); n > 0 && list[n-1].At == s.At {
		list[n-1].Cost += s.Cost
		list[n-1].Arrived += s.Arrived
		list[n-1].Late += s.Late
		return list
	}
	list = append(list, s)
	if over := int64(len(list)) - keep; over > 0 {
		list = list[over:]
	}
	return list
}

// dayOf is t's UTC day number since the epoch.
func dayOf(t time.Time) int64 { return floorDiv(t.Unix(), 86400) }

// hourOf is t's hour number since the epoch.
func hourOf(t time.Time) int64 { return floorDiv(t.Unix(), 3600) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// find returns the candidate of a name (nil: none, or the flat one).
func (t *Tuner) find(name string) *candidate {
	for _, c := range t.cands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// flatName names a flat size.
func flatName(n int) string { return Flat + " " + strconv.Itoa(n) }
