package tune

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/fleetsim"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/seasonal"
	"github.com/prewarm/prewarm/planner"
)

// start is a Monday at midnight UTC.
var start = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// testPlan is a pool of 10 req/s instances sized by utilisation, booting
// in 10 minutes, with the default SLO (99.5% within 10 s).
func testPlan() planner.Config {
	c := planner.DefaultConfig()
	c.Fleet.RPSPerInstance = 10
	c.Sizing = planner.SizingUtilisation
	c.Fleet.BootDelay = 10 * time.Minute
	return c
}

// fastSettings forecast with seasonal naive on the longest period that
// has the history (the default model fits for tens of milliseconds).
func fastSettings() control.Settings {
	return control.Settings{NewModel: func(periods []int) model.Forecaster {
		if len(periods) == 0 {
			return seasonal.Naive{}
		}
		return seasonal.SeasonalNaive{Period: periods[len(periods)-1]}
	}}
}

// newController is the live controller of testPlan with fast settings.
func newController(t testing.TB, plan planner.Config) *control.Controller {
	t.Helper()
	ctl, err := control.New(plan, fastSettings())
	if err != nil {
		t.Fatal(err)
	}
	return ctl
}

// newTuner is a Tuner of testPlan ticking per minute, with opts' other
// fields.
func newTuner(t testing.TB, opts Options) *Tuner {
	t.Helper()
	opts.Sim.Tick, opts.Enabled = time.Minute, true
	tu, err := New(newController(t, testPlan()), opts)
	if err != nil {
		t.Fatal(err)
	}
	return tu
}

// rig drives a Tuner minute by minute on a live simulated pool, refitting
// every three hours from the demand per half hour (mean), as the service
// does.
type rig struct {
	tuner  *Tuner
	live   *fleetsim.Sim
	demand []float64 // per minute from start
	i      int       // the next minute
	// buckets is the demand per half hour so far (mean).
	buckets []float64
	// refits counts the refits made.
	refits int
}

const (
	bucket     = 30 * time.Minute
	refitEvery = 3 * time.Hour
	history    = 28 * 24 * time.Hour
)

func newRig(t testing.TB, tu *Tuner, demand []float64) *rig {
	t.Helper()
	plan := tu.Live().PlannerConfig()
	o := fleetsim.Options{Planner: plan, Start: start, Tick: time.Minute, Initial: plan.InstancesFor(demand[0]), Stream: 7}
	sim, err := fleetsim.New(o.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	return &rig{tuner: tu, live: sim, demand: demand}
}

// tick is one minute of the rig.
type tick struct {
	At   time.Time
	Step planner.Step
	Tick fleetsim.Tick
}

// run drives n minutes, calling each (when not nil) after every one.
func (r *rig) run(t testing.TB, n int, each func(tick)) {
	t.Helper()
	ctx := context.Background()
	per := int(bucket / time.Minute)
	for end := r.i + n; r.i < end && r.i < len(r.demand); r.i++ {
		at := start.Add(time.Duration(r.i) * time.Minute)
		if r.i > 0 && r.i%per == 0 {
			sum := 0.0
			for _, v := range r.demand[r.i-per : r.i] {
				sum += v
			}
			r.buckets = append(r.buckets, sum/float64(per))
		}
		if r.i > 0 && at.Sub(start)%refitEvery == 0 {
			h := r.buckets[max(0, len(r.buckets)-int(history/bucket)):]
			if _, err := r.tuner.Refit(at, h); err != nil {
				t.Fatalf("refit at %v: %v", at, err)
			}
			r.refits++
		}
		current := r.live.Counts().Desired
		var st planner.Step
		if obs, ok := r.live.Latest(); ok {
			st = r.tuner.Decide(ctx, at, obs, current)
		} else {
			st = r.tuner.Hold(at, current, "no metrics")
		}
		if st.Desired != current {
			if _, _, err := r.live.Apply(ctx, st); err != nil {
				t.Fatal(err)
			}
		}
		tk := r.live.Serve(r.demand[r.i], true)
		if each != nil {
			each(tick{At: at, Step: st, Tick: tk})
		}
	}
}

// now is the start of the rig's next minute.
func (r *rig) now() time.Time { return start.Add(time.Duration(r.i) * time.Minute) }

func minutes(g datasets.Synthetic, days int) []float64 {
	return g.Generate(start, time.Minute, days*24*60).Values
}

// daily is the default generator without weekends, flash crowds or trend:
// one smooth daily rhythm.
func daily() datasets.Synthetic {
	g := datasets.DefaultSynthetic()
	g.WeekendRatio, g.FlashCrowdsPerWeek, g.TrendPerWeek = 1, 0, 0
	return g
}

// Options out of range are refused with the YAML key under tune: that
// is wrong, and the defaults pass.
func TestOptionsValidateNamesTheKey(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		name string
		edit func(*Options)
		key  string
	}{
		{"defaults", func(*Options) {}, ""},
		{"short window", func(o *Options) { o.Window = 3 * day }, "window"},
		{"long window", func(o *Options) { o.Window = 60 * day }, "window"},
		{"history beyond the window", func(o *Options) { o.MinHistory = 20 * day }, "min_history"},
		{"negative margin", func(o *Options) { o.Margin = -0.1 }, "margin"},
		{"margin NaN", func(o *Options) { o.Margin = math.NaN() }, "margin"},
		{"half-life of an hour", func(o *Options) { o.HalfLife = time.Hour }, "half_life"},
		{"no half-life", func(o *Options) { o.HalfLife = -1 }, ""},
		{"cost half-life of a minute", func(o *Options) { o.CostHalfLife = time.Minute }, "cost_half_life"},
		{"cost half-life beyond the window", func(o *Options) { o.CostHalfLife = 20 * day }, "cost_half_life"},
		{"cost half-life of an hour", func(o *Options) { o.CostHalfLife = time.Hour }, ""},
		{"no cost half-life", func(o *Options) { o.CostHalfLife = -1 }, ""},
		{"trim", func(o *Options) { o.Trim = 4 }, "trim"},
		{"slack", func(o *Options) { o.Slack = 3 }, "slack"},
		{"hysteresis", func(o *Options) { o.Hysteresis = 0.6 }, "hysteresis"},
		{"guard window", func(o *Options) { o.GuardWindow = time.Hour }, "guard_window"},
		{"guard burn", func(o *Options) { o.GuardBurn = 0.5 }, "guard_burn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Options{}.WithDefaults()
			c.edit(&o)
			err := o.Validate()
			var oe *OptionError
			switch {
			case c.key == "" && err != nil:
				t.Fatalf("Validate: %v; want no error", err)
			case c.key == "":
			case !errors.As(err, &oe) || oe.Key != c.key:
				t.Fatalf("Validate: %v; want an error naming tune.%s", err, c.key)
			case !strings.HasPrefix(err.Error(), "tune."+c.key+": "):
				t.Errorf("message %q does not start with the key", err)
			}
		})
	}
}

// Kind folds the grids' names into their kind and keeps the others.
func TestKind(t *testing.T) {
	for name, want := range map[string]string{
		"flat 12": Flat, "reactive 80%/40%/15%": Reactive, Hybrid: Hybrid,
		"forecast-only-additive": "forecast-only-additive", "flatter": "flatter",
	} {
		if got := Kind(name); got != want {
			t.Errorf("Kind(%q) = %q, want %q", name, got, want)
		}
	}
}

// On a smooth daily rhythm the tuner keeps a forecast candidate once the
// candidates have a week's history, and its choice is one of the
// standings, marked, with a reason.
func TestTunerKeepsAForecastOnSmoothDemand(t *testing.T) {
	if testing.Short() {
		t.Skip("replays two weeks; skipped with -short")
	}
	tu := newTuner(t, Options{})
	r := newRig(t, tu, minutes(daily(), 14))
	r.run(t, 14*24*60, nil)
	ch := tu.Choice(r.now())
	if k := Kind(ch.Candidate); k == Flat || k == Reactive || k == ReactiveSurge {
		t.Errorf("after two smooth weeks the choice is %s (%s); want a forecast candidate", ch.Candidate, ch.Why)
	}
	checkChoice(t, ch)
}

// checkChoice wants exactly one standing marked chosen, the one named,
// and a reason.
func checkChoice(t *testing.T, ch Choice) {
	t.Helper()
	chosen := 0
	for _, s := range ch.Candidates {
		if s.Chosen {
			chosen++
			if s.Name != ch.Candidate {
				t.Errorf("standing %q is marked chosen; the choice is %q", s.Name, ch.Candidate)
			}
		}
		if s.SLO < 0 || s.SLO > 1 || s.Cost < 0 {
			t.Errorf("standing %+v out of range", s)
		}
	}
	if chosen != 1 || ch.Why == "" {
		t.Errorf("%d standings marked chosen, why %q; want one and a reason", chosen, ch.Why)
	}
}

// On isolated per-minute spikes no forecast pays for its headroom: the
// tuner leaves the hybrid for a candidate that met the SLO for less, and
// the live pool's attainment after the first week meets the SLO.
func TestTunerLeavesTheHybridOnSpikes(t *testing.T) {
	if testing.Short() {
		t.Skip("replays two weeks; skipped with -short")
	}
	tu := newTuner(t, Options{})
	r := newRig(t, tu, minutes(datasets.SpikySynthetic(), 14))
	var arrived, late float64
	r.run(t, 14*24*60, func(k tick) {
		if k.At.After(start.Add(7 * 24 * time.Hour)) {
			arrived += k.Tick.Arrived
			late += k.Tick.Late()
		}
	})
	ch := tu.Choice(r.now())
	if Kind(ch.Candidate) == Hybrid {
		t.Errorf("after two weeks of spikes the choice is still %s (%s)", ch.Candidate, ch.Why)
	}
	if got := 1 - late/arrived; got < 0.995 {
		t.Errorf("the live pool served %.3f%% within the SLO in the second week; want ≥ 99.5%%", 100*got)
	}
	checkChoice(t, ch)
}

// The candidates are scored from the first whole day of the twins, while
// the forecast still warms up: a pool whose model needs five days of
// history makes its first choice after MinHistory of scored days, not
// MinHistory after the warm-up.
func TestFirstChoiceDoesNotWaitForTheWarmUp(t *testing.T) {
	if testing.Short() {
		t.Skip("replays nine days; skipped with -short")
	}
	plan := testPlan()
	plan.Gating.MinSeasons = 5 // five daily seasons of history before the model plans
	ctl, err := control.New(plan, fastSettings())
	if err != nil {
		t.Fatal(err)
	}
	tu, err := New(ctl, Options{Enabled: true, MinHistory: 7 * 24 * time.Hour, Sim: fleetsim.Options{Tick: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, tu, minutes(datasets.SpikySynthetic(), 9))
	warmUntil := start.Add(5 * 24 * time.Hour)
	r.run(t, 9*24*60, func(k tick) {
		if k.At.Before(warmUntil) && !tu.Live().WarmingUp() && r.refits > 1 {
			t.Fatalf("the model stopped warming up at %v; want after %v", k.At, warmUntil)
		}
	})
	ch := tu.Choice(r.now())
	if ch.Why == whyBeforeFirstChoice {
		t.Fatalf("after nine days, five of them warming up, the tuner has made no choice")
	}
	for _, s := range ch.Candidates {
		if s.Days < 7 {
			t.Errorf("candidate %s is scored on %d days after nine; want ≥ 7 (from the first whole day)", s.Name, s.Days)
		}
	}
}

// A level shift (demand doubles for good) trips the guard within hours,
// not at the next daily choice; a single hour at 1.3× inside a good day
// does not.
func TestGuardAnswersLevelShiftsNotOneBadHour(t *testing.T) {
	if testing.Short() {
		t.Skip("replays eight days; skipped with -short")
	}
	shiftAt := start.Add(5*24*time.Hour + 8*time.Hour)
	cases := []struct {
		name   string
		factor func(at time.Time) float64
		guard  bool
	}{
		{"demand doubles", func(at time.Time) float64 {
			if at.After(shiftAt) {
				return 2
			}
			return 1
		}, true},
		{"one hour at 1.3×", func(at time.Time) float64 {
			if at.After(shiftAt) && at.Before(shiftAt.Add(time.Hour)) {
				return 1.3
			}
			return 1
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := minutes(daily(), 8)
			for i := range d {
				d[i] *= c.factor(start.Add(time.Duration(i) * time.Minute))
			}
			tu := newTuner(t, Options{})
			r := newRig(t, tu, d)
			var tripped time.Time
			r.run(t, len(d), func(k tick) {
				if tripped.IsZero() && k.At.After(shiftAt) && strings.Contains(tu.Choice(k.At).Why, "guard:") {
					tripped = k.At
				}
			})
			switch {
			case c.guard && tripped.IsZero():
				t.Errorf("the guard never moved after the shift; choice %s (%s)", tu.Candidate(), tu.Choice(r.now()).Why)
			case c.guard && tripped.Sub(shiftAt) > 36*time.Hour:
				t.Errorf("the guard moved %v after the shift; want within 36h", tripped.Sub(shiftAt))
			case !c.guard && !tripped.IsZero():
				t.Errorf("the guard moved at %v: %s", tripped, tu.Choice(tripped).Why)
			}
		})
	}
}

// What State keeps survives Encode and DecodeState, and a tuner restored
// from it makes the same choice for the same reason, with the same
// standings.
func TestStateRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("replays nine days; skipped with -short")
	}
	tu := newTuner(t, Options{})
	r := newRig(t, tu, minutes(datasets.SpikySynthetic(), 9))
	r.run(t, 9*24*60, nil)
	data, err := tu.State().Encode()
	if err != nil {
		t.Fatal(err)
	}
	st, fresh, err := DecodeState(data)
	if err != nil || fresh {
		t.Fatalf("DecodeState: fresh %v, %v", fresh, err)
	}
	back := newTuner(t, Options{})
	if err := back.Restore(st); err != nil {
		t.Fatal(err)
	}
	want, got := tu.Choice(r.now()), back.Choice(r.now())
	if !reflect.DeepEqual(got, want) {
		t.Errorf("restored choice\n%+v\nwant\n%+v", got, want)
	}
	// The calibration's memory by day comes back for every candidate
	// that calibrates, for the let-through rule to forgive a day.
	for i, c := range tu.cands {
		if len(c.memory) == 0 || !reflect.DeepEqual(back.cands[i].memory, c.memory) {
			t.Errorf("%s: restored memory by day %v, want %v (not empty)", c.name, back.cands[i].memory, c.memory)
		}
	}
	if !slices.ContainsFunc(want.Candidates, func(s Standing) bool { return s.Name == Schedule }) {
		t.Errorf("no schedule among the standings after nine days: %+v", want.Candidates)
	}
	// The flat sizes' hours come back too, each hour's requests kept once
	// for them all: the next day's schedule is fitted to the same table.
	if a, b := tu.fitSchedule(r.now()), back.fitSchedule(r.now()); a == nil || !slices.Equal(a, b) {
		t.Errorf("restored schedule fit %v, want %v", b, a)
	}
	a, _ := tu.hourTable(r.now())
	if b, _ := back.hourTable(r.now()); !reflect.DeepEqual(a, b) {
		t.Errorf("restored hourly table\n%+v\nwant\n%+v", b, a)
	}
	// The same hours held as one Score an hour for each size restore the
	// same table.
	old := scoreHours(st)
	if _, _, err := DecodeState(mustEncode(t, old)); err != nil {
		t.Fatalf("DecodeState of the hours as scores: %v", err)
	}
	fromOld := newTuner(t, Options{})
	if err := fromOld.Restore(old); err != nil {
		t.Fatal(err)
	}
	if b, _ := fromOld.hourTable(r.now()); !reflect.DeepEqual(a, b) {
		t.Errorf("hourly table restored from the hours as scores\n%+v\nwant\n%+v", b, a)
	}
}

// scoreHours is st with each flat size's hours held as one Score an hour.
func scoreHours(st State) State {
	st.Candidates = slices.Clone(st.Candidates)
	for i, c := range st.Candidates {
		for j, late := range c.HourlyLate.Values {
			hour := c.HourlyLate.From + int64(j)
			if arrived, ok := st.HourlyArrived.at(hour); ok {
				c.Hourly = append(c.Hourly, Score{At: hour, Arrived: arrived, Late: late})
			}
		}
		c.HourlyLate = HourSeries{}
		st.Candidates[i] = c
	}
	st.HourlyArrived = HourSeries{}
	return st
}

func mustEncode(t *testing.T, st State) []byte {
	t.Helper()
	data, err := st.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The live controller's state saved alone (a state file without tuning)
// decodes as that memory with the tuning started afresh; corrupt blobs and
// out-of-range scores are errors.
func TestDecodeState(t *testing.T) {
	ctl := newController(t, testPlan())
	alone, err := ctl.State().Encode()
	if err != nil {
		t.Fatal(err)
	}
	st, fresh, err := DecodeState(alone)
	if err != nil || !fresh || st.Chosen != Hybrid || st.Version != StateVersion {
		t.Errorf("the controller's state alone: fresh %v, chosen %q, version %d, %v; want fresh, hybrid", fresh, st.Chosen, st.Version, err)
	}
	good := State{Version: StateVersion, Controller: ctl.State(), Chosen: Hybrid}
	cases := []struct {
		name string
		edit func(*State)
	}{
		{"negative cost", func(s *State) { s.Candidates = []CandidateState{{Name: Hybrid, Days: []Score{{Cost: -1}}}} }},
		{"NaN arrivals", func(s *State) { s.LiveRecent = []Score{{Arrived: math.NaN()}} }},
		{"infinite lateness", func(s *State) {
			s.Candidates = []CandidateState{{Name: "flat 3", Flat: 3, Recent: []Score{{Late: math.Inf(1)}}}}
		}},
		{"negative flat size", func(s *State) { s.FlatN = -2 }},
		{"a schedule of 23 hours", func(s *State) {
			s.Candidates = []CandidateState{{Name: Schedule, Schedule: make([]int, 23)}}
		}},
		{"a negative scheduled size", func(s *State) {
			sizes := make([]int, 24)
			sizes[5] = -1
			s.Candidates = []CandidateState{{Name: Schedule, Schedule: sizes}}
		}},
		{"NaN in a flat size's hours", func(s *State) {
			s.Candidates = []CandidateState{{Name: "flat 3", Flat: 3, HourlyLate: HourSeries{Values: []float64{math.NaN()}}}}
		}},
		{"negative requests in an hour", func(s *State) { s.HourlyArrived = HourSeries{From: 5, Values: []float64{1, -1}} }},
		{"more hours than the longest window", func(s *State) {
			s.Candidates = []CandidateState{{Name: "flat 3", Flat: 3, HourlyLate: HourSeries{Values: make([]float64, maxHours+1)}}}
		}},
		{"a flat size's hour at the end of time", func(s *State) {
			s.Candidates = []CandidateState{{Name: "flat 3", Flat: 3, HourlyLate: HourSeries{From: math.MaxInt64, Values: []float64{1}}}}
		}},
		{"the requests' hours at the start of time", func(s *State) { s.HourlyArrived = HourSeries{From: math.MinInt64} }},
		{"a scheduled size of 0", func(s *State) {
			sizes := make([]int, 24)
			s.Candidates = []CandidateState{{Name: Schedule, Schedule: sizes}}
		}},
		{"an hour as a score with negative requests", func(s *State) {
			s.Candidates = []CandidateState{{Name: "flat 3", Flat: 3, Hourly: []Score{{At: 5, Arrived: -1}}}}
		}},
		{"hours as scores out of order", func(s *State) {
			s.Candidates = []CandidateState{{Name: "flat 3", Flat: 3, Hourly: []Score{{At: 6}, {At: 5}}}}
		}},
		{"a calibration memory above 0", func(s *State) {
			s.Candidates = []CandidateState{{Name: Hybrid, Memory: []DayMemory{{Day: 20000, LnTail: 0.1}}}}
		}},
		{"a NaN calibration memory", func(s *State) {
			s.Candidates = []CandidateState{{Name: Hybrid, Memory: []DayMemory{{Day: 20000, LnTail: math.NaN()}}}}
		}},
		{"calibration memories out of order", func(s *State) {
			s.Candidates = []CandidateState{{Name: Hybrid, Memory: []DayMemory{{Day: 20001, LnTail: -5}, {Day: 20000, LnTail: -5}}}}
		}},
		{"calibration memories spanning more than the longest window", func(s *State) {
			s.Candidates = []CandidateState{{Name: Hybrid, Memory: []DayMemory{{Day: 20000, LnTail: -5}, {Day: 20100, LnTail: -5}}}}
		}},
		{"hours as scores spanning more than the longest window", func(s *State) {
			s.Candidates = []CandidateState{{Name: "flat 3", Flat: 3, Hourly: []Score{{At: 0}, {At: int64(maxHours)}}}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := good
			c.edit(&s)
			data, err := s.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := DecodeState(data); err == nil {
				t.Error("DecodeState accepted it")
			}
		})
	}
	if _, _, err := DecodeState([]byte("not a state")); err == nil {
		t.Error("DecodeState accepted garbage")
	}
}

// DecodeState never panics, and what it accepts encodes and decodes to
// the same state.
func FuzzDecodeState(f *testing.F) {
	ctl, err := control.New(testPlan(), fastSettings())
	if err != nil {
		f.Fatal(err)
	}
	for _, st := range []State{
		{Version: StateVersion, Controller: ctl.State(), Chosen: Hybrid},
		{Version: StateVersion, Controller: ctl.State(), Chosen: Flat, FlatN: 4,
			Candidates: []CandidateState{{Name: "flat 4", Flat: 4, Days: []Score{{At: 20000, Cost: 3, Arrived: 100, Late: 1}}}}},
		{Version: StateVersion, Controller: ctl.State(), Chosen: Schedule,
			HourlyArrived: HourSeries{From: 480000, Values: []float64{100, 0, 50}}, Candidates: []CandidateState{
				{Name: "flat 4", Flat: 4, HourlyLate: HourSeries{From: 480000, Values: []float64{1, 0, 0}}},
				{Name: Schedule, Schedule: []int{4, 4, 4, 4, 4, 4, 5, 6, 7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7, 6, 5, 4, 4}}}},
		{Version: StateVersion, Controller: ctl.State(), Chosen: Flat, FlatN: 4, Candidates: []CandidateState{
			{Name: "flat 4", Flat: 4, Hourly: []Score{{At: 480000, Arrived: 100, Late: 1}, {At: 480002, Arrived: 50}}}}},
		{Version: StateVersion, Controller: ctl.State(), Chosen: Hybrid, Candidates: []CandidateState{
			{Name: Hybrid, Memory: []DayMemory{{Day: 20000, LnTail: -4.5}, {Day: 20001, LnTail: -9.2}}}}},
	} {
		data, err := st.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if alone, err := ctl.State().Encode(); err == nil {
		f.Add(alone)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, _, err := DecodeState(data)
		if err != nil {
			return
		}
		again, err := st.Encode()
		if err != nil {
			t.Fatalf("an accepted state does not encode: %v", err)
		}
		back, _, err := DecodeState(again)
		if err != nil {
			t.Fatalf("an accepted state does not decode again: %v", err)
		}
		a, _ := back.Encode()
		if !bytes.Equal(a, again) {
			t.Error("decoding and encoding again changed the state")
		}
		// What DecodeState accepts a tuner restores, or refuses, without
		// a panic.
		_ = newTuner(t, Options{}).Restore(st)
	})
}

// BenchmarkTunerDay is the tuner's price per pool and simulated day at a
// one-minute decision interval: the replay of every candidate's twin and
// the daily choice (the live pool's simulation is in the figure too). It
// also reports the size of the pool's encoded state at the end (state-B).
func BenchmarkTunerDay(b *testing.B) {
	tu := newTuner(b, Options{})
	days := 8 + b.N
	r := newRig(b, tu, minutes(datasets.SpikySynthetic(), days))
	r.run(b, 8*24*60, nil) // the candidates are scored from here
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r.run(b, 24*60, nil)
	}
	b.StopTimer()
	b.ReportMetric(float64(len(tu.all())), "twins")
	data, err := tu.State().Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(data)), "state-B")
}

// A flat size the grid added after the window began is scored, for the
// days before it, as the largest smaller size that replayed them served
// them, at its own price: it cannot look spotless beside candidates that
// lived through a burst it never saw.
func TestFlatWindowChargesTheDaysBeforeItWasBorn(t *testing.T) {
	const today = int64(20000)
	day := func(d int64, cost, arrived, late float64) score {
		return score{At: today - d, Cost: cost, Arrived: arrived, Late: late}
	}
	born := func(daysAgo int64) time.Time { return time.Unix((today-daysAgo-1)*86400, 0) }
	old := &candidate{name: flatName(10), flat: 10, since: born(30)}
	young := &candidate{name: flatName(14), flat: 14, since: born(5)}
	for d := int64(14); d >= 1; d-- {
		late := 0.0
		if d == 10 {
			late = 50 // the burst, before the young size was born
		}
		old.days = append(old.days, day(d, 10, 1000, late))
		if d <= 5 {
			young.days = append(young.days, day(d, 14, 1000, 0))
		}
	}
	tu := &Tuner{opts: Options{HalfLife: -1}.WithDefaults(), tuneFrom: today - 40, flats: []*candidate{old, young}}
	w, age := tu.flatWindow(young, today, 14, 0, 0)
	// Its own 5 days, and the 9 before them as the size of 10 served
	// them, priced at 14/10.
	want := score{Cost: 5*14 + 9*10*1.4, Arrived: 14000, Late: 50}
	if age != 14 || math.Abs(w.Cost-want.Cost) > 1e-9 || w.Arrived != want.Arrived || w.Late != want.Late {
		t.Errorf("flatWindow = %+v over %d days, want %+v over 14", w, age, want)
	}
	// The oldest size has no smaller one: its own days only.
	if w, age := tu.flatWindow(old, today, 14, 0, 0); age != 14 || w.Late != 50 || w.Cost != 140 {
		t.Errorf("flatWindow(oldest) = %+v over %d days", w, age)
	}
}

// When no candidate met the SLO over the window, the tuner does not buy
// the last misses at any price: it follows the cheapest candidate whose
// misses beyond the least-missing one's fit in the budget's unspent part.
func TestNoneMetTakesTheCheapestWithinTheBudgetOfTheLeast(t *testing.T) {
	tu := newTuner(t, Options{HalfLife: -1})
	now := start.Add(30 * 24 * time.Hour)
	today := dayOf(now)
	tu.tuneFrom = today - 20
	fill := func(c *candidate, cost, missShare float64) {
		c.since, c.days = start, nil
		for d := today - 14; d < today; d++ {
			c.days = append(c.days, score{At: d, Cost: cost, Arrived: 1000, Late: 1000 * missShare})
		}
	}
	for _, c := range tu.cands {
		fill(c, 1, 0.2) // cheap and far off
	}
	// The budget is 0.5%, its unspent part (margin 0.4) 0.3%.
	byName := map[string]float64{Hybrid: 0.041, ReactiveSurge: 0.039, PlanOnly: 0.0425}
	costs := map[string]float64{Hybrid: 5, ReactiveSurge: 9, PlanOnly: 3}
	for _, c := range tu.cands {
		if m, ok := byName[c.name]; ok {
			fill(c, costs[c.name], m)
		}
	}
	tu.adopt(PlanAdditive, now, "in force before") // far off: the choice must move
	tu.choose(now)
	// reactive-surge missed least (3.9%); the hybrid misses 0.2 points
	// more for 5/9 of the cost; forecast-only 0.35 points more: too many.
	if got := tu.Candidate(); got != Hybrid {
		t.Errorf("chose %s (%s); want %s", got, tu.why, Hybrid)
	}
	if !strings.Contains(tu.why, "none met the SLO") || !strings.Contains(tu.why, ReactiveSurge) {
		t.Errorf("why %q does not say that none met the SLO and which missed least", tu.why)
	}
}

// When no candidate met the SLO over the window, one of them only for a
// burst it could not cover, the tuner lets that burst through: it takes
// the cheapest candidate that met the SLO with its worst day left out.
func TestNoneMetLetsOneBadDayThrough(t *testing.T) {
	tu := newTuner(t, Options{HalfLife: -1})
	now := start.Add(30 * 24 * time.Hour)
	today := dayOf(now)
	tu.tuneFrom = today - 20
	// reactive-surge is dear, covered the burst and spent the budget on
	// other days.
	fillBurstWindow(tu, today, score{Cost: 9, Arrived: 1000, Late: 5},
		score{Cost: 4, Arrived: 1000, Late: 1}, score{Cost: 4, Arrived: 1000, Late: 400})
	tu.adopt(PlanAdditive, now, "in force before")
	tu.choose(now)
	if got := tu.Candidate(); got != Hybrid {
		t.Errorf("chose %s (%s); want %s, which met the SLO but for one day", got, tu.why, Hybrid)
	}
	if !strings.Contains(tu.why, "leaving out each one's worst 1") {
		t.Errorf("why %q does not say a day was left out", tu.why)
	}
}

// burstTuner is a tuner, its days all alike (no half-lives), thirty days
// from start with a window that fillBurstWindow filled: the dear
// candidate costing dearCost a day, the hybrid 4 with burstLate of its
// 1000 requests late on the burst's day, six days ago.
func burstTuner(t *testing.T, dearCost, burstLate float64) (*Tuner, time.Time) {
	t.Helper()
	return windowTuner(t, score{Cost: dearCost, Arrived: 1000, Late: 1},
		score{Cost: 4, Arrived: 1000}, score{Cost: 4, Arrived: 1000, Late: burstLate})
}

// windowTuner is a tuner whose candidates have the window of
// fillBurstWindow, every day weighing alike, and the time to choose.
func windowTuner(t *testing.T, dear, hybrid, burst score) (*Tuner, time.Time) {
	t.Helper()
	tu := newTuner(t, Options{HalfLife: -1, CostHalfLife: -1})
	now := start.Add(30 * 24 * time.Hour)
	today := dayOf(now)
	tu.tuneFrom = today - 20
	fillBurstWindow(tu, today, dear, hybrid, burst)
	return tu, now
}

// chooseFrom puts inForce in force, makes the day's choice and checks
// that it is want, with a reason that says why.
func chooseFrom(t *testing.T, tu *Tuner, now time.Time, inForce, want, why string) {
	t.Helper()
	tu.adopt(inForce, now, "in force before")
	tu.choose(now)
	if got := tu.Candidate(); got != want {
		t.Errorf("chose %s (%s); want %s", got, tu.why, want)
	}
	if !strings.Contains(tu.why, why) {
		t.Errorf("why %q does not say %q", tu.why, why)
	}
}

// fillBurstWindow gives every candidate the 14 days before today: far off
// the SLO and cheap, but reactive-surge (dear every day) and the hybrid
// (hybrid every day but six days ago, when it met a burst).
func fillBurstWindow(tu *Tuner, today int64, dear, hybrid, burst score) {
	for _, c := range tu.cands {
		c.since, c.days = start, nil
		for d := today - 14; d < today; d++ {
			s := score{Cost: 1, Arrived: 1000, Late: 200}
			switch {
			case c.name == ReactiveSurge:
				s = dear
			case c.name == Hybrid && d == today-6:
				s = burst
			case c.name == Hybrid:
				s = hybrid
			}
			s.At = d
			c.days = append(c.days, s)
		}
	}
}

// A state with a candidate's policy out of range is refused before
// anything is restored: the tuner keeps what it had.
func TestRestoreRefusesABadCandidateWhole(t *testing.T) {
	tu := newTuner(t, Options{})
	tu.adopt(PlanAdditive, start, "in force")
	st := tu.State()
	st.Chosen = ReactiveSurge
	bad := control.PolicyState{Quantile: 2} // out of range
	st.Candidates = append(st.Candidates, CandidateState{Name: Hybrid, Policy: &bad})
	if err := tu.Restore(st); err == nil {
		t.Fatal("Restore accepted a candidate policy with quantile 2")
	}
	if got := tu.Candidate(); got != PlanAdditive {
		t.Errorf("after the refused restore the choice is %s, want %s as before", got, PlanAdditive)
	}
}

// The saving sets the candidate in force against the cheapest rule
// without a forecast (a reactive setting or a flat size) that met the SLO
// over the same window: a forecast candidate is never the baseline, a
// rule that missed the SLO never is, and without one there is no figure.
func TestSavingIsAgainstTheCheapestRuleWithoutAForecastThatMetTheSLO(t *testing.T) {
	const met, missed = 0.001, 0.02 // the budget is 0.5%
	type run struct{ cost, miss float64 }
	reactive := reactiveGrid[0].name()
	cases := []struct {
		name         string
		runs         map[string]run // the others cost 100 and miss
		chosen       string
		days         int64
		wantBaseline string
		wantShare    float64
	}{
		{"the cheaper of a reactive setting and a flat size", map[string]run{
			reactive: {8, met}, flatName(6): {6, met}, flatName(4): {4, missed}, Hybrid: {3, met}, PlanOnly: {2, met},
		}, Hybrid, 14, flatName(6), 0.5},
		{"a reactive setting when it is the cheaper", map[string]run{
			reactive: {5, met}, flatName(6): {6, met}, Hybrid: {4, met},
		}, Hybrid, 14, reactive, 0.2},
		{"the candidate in force costs more: a negative share", map[string]run{
			flatName(6): {6, met}, PlanOnly: {9, met},
		}, PlanOnly, 14, flatName(6), -0.5},
		{"no rule without a forecast met the SLO: no figure", map[string]run{
			reactive: {5, missed}, flatName(6): {6, missed}, Hybrid: {4, met},
		}, Hybrid, 14, "", 0},
		{"too few days: no figure", map[string]run{
			flatName(6): {6, met}, Hybrid: {3, met},
		}, Hybrid, 1, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tu := newTuner(t, Options{HalfLife: -1})
			now := start.Add(30 * 24 * time.Hour)
			today := dayOf(now)
			tu.tuneFrom = today - tc.days
			tu.flats = []*candidate{{name: flatName(4), flat: 4}, {name: flatName(6), flat: 6}}
			for _, c := range tu.all() {
				r, ok := tc.runs[c.name]
				if !ok {
					r = run{100, missed}
				}
				c.since, c.days = start, nil
				for d := today - tc.days; d < today; d++ {
					c.days = append(c.days, score{At: d, Cost: r.cost / float64(tc.days), Arrived: 1000, Late: 1000 * r.miss})
				}
			}
			tu.adopt(tc.chosen, now, "test")
			got := tu.Choice(now).Saving
			if got.Baseline != tc.wantBaseline || math.Abs(got.Share-tc.wantShare) > 1e-9 {
				t.Errorf("saving %+v; want baseline %q, share %v", got, tc.wantBaseline, tc.wantShare)
			}
			if got.Baseline != "" && (got.Days != int(tc.days) || !(got.BaselineCost > 0)) {
				t.Errorf("saving %+v: want %d days and a baseline cost", got, tc.days)
			}
		})
	}
}

// A burst that only a dear candidate covered is let through: the tuner
// follows the cheapest candidate that met the SLO with its worst day left
// out when the cheapest that met it over every day cost over three times
// as much, even one in force, and the burst spent at most three times the
// window's miss budget. Otherwise the one that covered every day stays.
func TestABurstOnlyADearCandidateCoveredIsLetThrough(t *testing.T) {
	for _, tc := range []struct {
		name              string
		dearCost, burstMs float64 // the dear one's daily cost; the hybrid's late requests of 1000 on the burst's day
		inForce           string
		want, why         string
	}{
		{"covered at over three times the cost", 13, 180, PlanAdditive, Hybrid, "leaving out its worst day it held 100.00%, and over every day 98.71%"},
		{"the same, the dear one in force", 13, 180, ReactiveSurge, Hybrid, "at 0.29× the cost of " + ReactiveSurge},
		{"covered at under three times the cost", 11, 180, PlanAdditive, ReactiveSurge, "cheapest that met the SLO over 14 days: " + ReactiveSurge},
		{"the same, in force", 11, 180, ReactiveSurge, ReactiveSurge, "in force before"},
		{"a burst that spent over three budgets", 13, 400, PlanAdditive, ReactiveSurge, "cheapest that met the SLO over 14 days: " + ReactiveSurge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tu, now := burstTuner(t, tc.dearCost, tc.burstMs)
			chooseFrom(t, tu, now, tc.inForce, tc.want, tc.why)
		})
	}
}

// A calibrated candidate that fell short of the SLO within its slack
// gives way to one that met the SLO outright while that one costs at most
// saferPremium more; a candidate in force stays while it qualifies.
func TestAShortfallGivesWayToOneThatMetTheSLOAtAlmostTheSameCost(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hybridLate float64 // the hybrid's late requests of 1000 a day, at a daily cost of 4
		dearCost   float64 // reactive-surge's daily cost; it meets the SLO every day
		inForce    string
		want, why  string
	}{
		{"short within the slack, the other 8% dearer", 8, 4.32, PlanAdditive, ReactiveSurge,
			ReactiveSurge + " met the SLO over 14 days at 99.90%, 1.08× the cost of hybrid, which fell short of it within the calibration's slack at 99.20%"},
		{"short within the slack, the other 12% dearer", 8, 4.48, PlanAdditive, Hybrid, "cheapest that met the SLO over 14 days: hybrid at 99.20%"},
		{"met outright, the other 2% dearer", 4, 4.08, PlanAdditive, Hybrid, "cheapest that met the SLO over 14 days: hybrid at 99.60%"},
		{"short within the slack, the safer one in force", 8, 4.32, ReactiveSurge, ReactiveSurge, "in force before"},
		{"short within the slack and in force", 8, 4.32, Hybrid, Hybrid, "in force before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hybrid := score{Cost: 4, Arrived: 1000, Late: tc.hybridLate}
			tu, now := windowTuner(t, score{Cost: tc.dearCost, Arrived: 1000, Late: 1}, hybrid, hybrid)
			chooseFrom(t, tu, now, tc.inForce, tc.want, tc.why)
		})
	}
}

// When the let-through rule adopts a candidate, the candidate's
// calibration forgets the burst it lets through: its memory goes back to
// what it was at the start of that day where the burst pushed it
// stricter, and the live pool follows the looser quantile. A memory that
// was already as strict then, one not kept, and a burst that is covered
// instead leave the calibration as it is.
func TestALetThroughBurstIsForgivenByTheCalibration(t *testing.T) {
	const nowMemory, burstDay = -9.5, -4.0 // the hybrid's memory now and at the start of the burst's day
	for _, tc := range []struct {
		name      string
		dearCost  float64
		memory    []float64 // the hybrid's memory at the start of today−7, today−6 (the burst), today−5
		want      float64
		forgotten bool
	}{
		{"pushed stricter by the burst", 13, []float64{-4.2, burstDay, -8.5}, burstDay, true},
		{"as strict before the burst", 13, []float64{-9.8, -9.8, -9.8}, nowMemory, false},
		{"no memory of the burst's day", 13, nil, nowMemory, false},
		{"the burst covered instead", 11, []float64{-4.2, burstDay, -8.5}, nowMemory, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tu, now := burstTuner(t, tc.dearCost, 180)
			today := dayOf(now)
			hybrid := tu.find(Hybrid)
			p := hybrid.ctl.Policy()
			p.QuantileMemory, p.Quantile = nowMemory, planner.DefaultMaxQuantile
			if err := hybrid.ctl.RestorePolicy(p); err != nil {
				t.Fatal(err)
			}
			for i, m := range tc.memory {
				hybrid.memory = append(hybrid.memory, DayMemory{Day: today - 7 + int64(i), LnTail: m})
			}
			tu.adopt(PlanAdditive, now, "in force before")
			tu.choose(now)
			if got := hybrid.ctl.CalibrationMemory(); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("the hybrid's memory %v, want %v (%s)", got, tc.want, tu.why)
			}
			if tc.want == burstDay && math.Abs(tu.live.Quantile()-(1-math.Exp(burstDay))) > 1e-12 {
				t.Errorf("the live pool plans at the quantile %v, want the forgiven %v", tu.live.Quantile(), 1-math.Exp(burstDay))
			}
			day := time.Unix((today-6)*86400, 0).UTC().Format(time.DateOnly)
			if said := strings.Contains(tu.why, "its calibration forgets the misses of "+day); said != tc.forgotten {
				t.Errorf("why %q: says the misses are forgotten %v, want %v", tu.why, said, tc.forgotten)
			}
		})
	}
}
