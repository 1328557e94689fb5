package control

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
)

// planned returns a controller on testPlanner (10 req/s an instance, with
// the surge rule at twice the current instances) that has refitted at t0
// on three days of 100 req/s with a model forecasting 200 req/s: the
// model's plan in force holds 22 instances (200 + 10%).
func planned(t *testing.T) *Controller {
	t.Helper()
	p := testPlanner()
	p.Reactive.PanicThreshold = 2
	c, err := New(p, hourly(func([]int) model.Forecaster { return constant(200) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refit(t0, flat(72, 100)); err != nil {
		t.Fatal(err)
	}
	return c
}

// minute is an observation of a minute ending at at.
func minute(at time.Time, util, queue, demand float64) planner.Observation {
	return planner.Observation{At: at, Span: time.Minute, Utilisation: util, Queue: queue, DemandRPS: demand}
}

// A strategy picks the terms Decide combines: the hybrid takes the
// largest of plan and reactive rules, NoPlan leaves the plan out, NoReactive
// the rules (a surge is not followed), Flat adds a fleet of its own that
// the others may raise, and with neither plan nor rules a flat fleet is
// all there is; with nothing at all the pool holds.
func TestStrategyChoosesTheTerms(t *testing.T) {
	calm := minute(t0, 0.5, 0, 40)    // needs 4: no rule fires on 5 instances in one minute
	surge := minute(t0, 1, 200, 1000) // needs 100 ≥ 2 × 22: the surge rule fires
	cases := []struct {
		name     string
		s        Strategy
		obs      planner.Observation
		current  int
		want     int
		reason   string
		wantFeed bool // the reactive rules were fed
	}{
		{"hybrid follows the plan when calm", Strategy{}, calm, 5, 22, "forecast", true},
		{"hybrid follows a surge above the plan", Strategy{}, surge, 22, 100, "surge", true},
		{"no plan holds the reactive term when calm", Strategy{NoPlan: true}, calm, 5, 5, "reactive: hold 5", true},
		{"no plan follows a surge", Strategy{NoPlan: true}, surge, 22, 100, "surge", true},
		{"no reactive follows the plan when calm", Strategy{NoReactive: true}, calm, 5, 22, "forecast", false},
		{"no reactive stays at the plan on a surge", Strategy{NoReactive: true}, surge, 22, 22, "forecast", false},
		{"a flat fleet holds its size when calm", Strategy{NoPlan: true, NoReactive: true, Flat: 7}, calm, 5, 7, "flat: 7 instances", false},
		{"a flat fleet holds its size on a surge", Strategy{NoPlan: true, NoReactive: true, Flat: 7}, surge, 22, 7, "flat: 7 instances", false},
		{"a flat term above the plan wins", Strategy{Flat: 30}, calm, 5, 30, "flat: 30 instances", true},
		{"a flat term below the plan loses", Strategy{Flat: 3}, calm, 5, 22, "forecast", true},
		{"nothing to follow holds current", Strategy{NoPlan: true, NoReactive: true}, calm, 5, 5, "hold 5: no term in force", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planned(t)
			c.SetStrategy(tc.s)
			if c.Strategy() != tc.s || c.Strategy().Hybrid() != (tc.s == Strategy{}) {
				t.Fatalf("Strategy() = %+v (hybrid %v), want %+v", c.Strategy(), c.Strategy().Hybrid(), tc.s)
			}
			st := c.Decide(t0, tc.obs, tc.current)
			if st.Desired != tc.want || !strings.Contains(st.Reason, tc.reason) {
				t.Errorf("Decide = %d (%s), want %d (%s)", st.Desired, st.Reason, tc.want, tc.reason)
			}
			if fed := c.Policy().Reactive != (planner.ReactiveState{}); fed != tc.wantFeed {
				t.Errorf("reactive rules fed %v (state %+v), want %v", fed, c.Policy().Reactive, tc.wantFeed)
			}
		})
	}
}

// A flat fleet holds its size whatever the demand does, minute after
// minute with the pool following its decisions: idle, calm, overloaded
// with a queue, surging.
func TestFlatStrategyHoldsItsSizeWhateverTheDemand(t *testing.T) {
	c := planned(t)
	c.SetStrategy(Strategy{NoPlan: true, NoReactive: true, Flat: 7})
	current := 7
	demands := []struct{ util, queue, rps float64 }{{0, 0, 0}, {0.1, 0, 7}, {0.6, 0, 40}, {1, 500, 300}, {1, 5000, 5000}}
	for i := range 120 {
		d := demands[(i/10)%len(demands)]
		at := t0.Add(time.Duration(i+1) * time.Minute)
		st := c.Decide(at, minute(at, d.util, d.queue, d.rps), current)
		if st.Desired != 7 {
			t.Fatalf("minute %d at %v req/s (queue %v): desired %d (%s), want the flat 7", i+1, d.rps, d.queue, st.Desired, st.Reason)
		}
		current = st.Desired
	}
	// Hold lifts a pool below the flat size to it and keeps one above.
	if st := c.Hold(t0, 3, "store down"); st.Desired != 7 {
		t.Errorf("Hold from 3 = %d (%s), want the flat 7", st.Desired, st.Reason)
	}
	if st := c.Hold(t0, 9, "store down"); st.Desired != 9 {
		t.Errorf("Hold from 9 = %d (%s), want 9", st.Desired, st.Reason)
	}
}

// Without the reactive rules the pool never rises above the plan, however
// long a surge lasts and whatever it queues; with them (the hybrid) the
// same surge scales out.
func TestNoReactiveNeverRisesAboveThePlanOnASurge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		s         Strategy
		wantAbove bool
	}{
		{"no reactive", Strategy{NoReactive: true}, false},
		{"hybrid", Strategy{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := planned(t)
			c.SetStrategy(tc.s)
			current, highest := 22, 0
			for i := range 60 {
				at := t0.Add(time.Duration(i+1) * time.Minute)
				st := c.Decide(at, minute(at, 1, 300, 600), current)
				highest = max(highest, st.Desired)
				current = st.Desired
			}
			if above := highest > 22; above != tc.wantAbove {
				t.Errorf("highest desired over an hour's surge %d, want above the plan's 22: %v", highest, tc.wantAbove)
			}
		})
	}
}

// Hold with NoPlan does not raise the pool to the plan.
func TestHoldWithoutThePlan(t *testing.T) {
	c := planned(t)
	if st := c.Hold(t0, 5, "store down"); st.Desired != 22 {
		t.Fatalf("hybrid Hold = %d (%s), want the plan's 22", st.Desired, st.Reason)
	}
	c.SetStrategy(Strategy{NoPlan: true})
	if st := c.Hold(t0, 5, "store down"); st.Desired != 5 || !strings.Contains(st.Reason, "hold 5: store down") {
		t.Errorf("no-plan Hold = %d (%s), want hold 5", st.Desired, st.Reason)
	}
}

// SetStrategy changes the terms only: what the controller learned (the
// refit in force, its quantile) stays, and back on the hybrid it follows
// the plan again.
func TestSetStrategyKeepsTheMemory(t *testing.T) {
	c := planned(t)
	before := c.Last()
	c.SetStrategy(Strategy{NoPlan: true, NoReactive: true, Flat: 4})
	if st := c.Decide(t0, minute(t0, 0.5, 0, 100), 5); st.Desired != 4 {
		t.Fatalf("flat 4: %d (%s)", st.Desired, st.Reason)
	}
	c.SetStrategy(Strategy{})
	at := t0.Add(time.Minute)
	if st := c.Decide(at, minute(at, 0.5, 0, 100), 4); st.Desired != 22 {
		t.Errorf("back on the hybrid: %d (%s), want the plan's 22", st.Desired, st.Reason)
	}
	if !reflect.DeepEqual(c.Last(), before) {
		t.Error("the refit in force changed with the strategy")
	}
}

// Shadow makes a candidate with its own planner settings and strategy,
// starting its own policy state afresh (quantile from its settings, no
// reactive clocks, estimates or asked records), and refuses settings that
// do not validate.
func TestShadowStartsItsOwnPolicy(t *testing.T) {
	c := planned(t)
	for i := range 15 { // owner's own clocks, asks and estimates
		at := t0.Add(time.Duration(i+1) * time.Minute)
		c.Decide(at, minute(at, 0.95, 0, 150), 22)
	}
	if c.Estimated().Arrived == 0 || c.Policy().Reactive == (planner.ReactiveState{}) {
		t.Fatalf("owner estimated %+v, reactive %+v: the test needs both", c.Estimated(), c.Policy().Reactive)
	}
	p := testPlanner()
	p.ForecastQuantile = 0.95
	s := Strategy{NoReactive: true, Flat: 3}
	sh, err := c.Shadow(p, s)
	if err != nil {
		t.Fatal(err)
	}
	want := PolicyState{Strategy: s, Quantile: 0.95}
	if got := sh.Policy(); !reflect.DeepEqual(got, want) {
		t.Errorf("shadow policy %+v, want %+v", got, want)
	}
	if sh.PlannerConfig().ForecastQuantile != 0.95 || c.PlannerConfig().ForecastQuantile != 0.9 || c.Strategy() != (Strategy{}) {
		t.Errorf("quantiles %v (shadow) and %v (owner), owner strategy %+v: the shadow's settings leaked",
			sh.PlannerConfig().ForecastQuantile, c.PlannerConfig().ForecastQuantile, c.Strategy())
	}
	bad := testPlanner()
	bad.Fleet.MaxInstances = 0
	if sh, err := c.Shadow(bad, Strategy{}); err == nil || sh != nil || !strings.Contains(err.Error(), "max 0") {
		t.Errorf("Shadow with max 0 = %v, %v; want an error naming max", sh, err)
	}
}

// A shadow shares its owner's memory: what the owner learns (here the
// warm-up peak, before any refit) the shadow plans with, while the
// shadow's own observations teach the memory nothing.
func TestShadowSharesTheOwnersMemory(t *testing.T) {
	p := testPlanner()
	p.Bounds.NoWarmUpPeak = false
	c, err := New(p, hourly(func([]int) model.Forecaster { return constant(100) }))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := c.Shadow(p, Strategy{NoReactive: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Observe(t0, minute(t0, 0.5, 0, 300), 5) // owner sees 300 req/s
	at := t0.Add(time.Minute)
	if st := sh.Decide(at, minute(at, 0.5, 0, 900), 5); st.Desired != 30 || !strings.Contains(st.Reason, "peak so far, 300 req/s") {
		t.Errorf("shadow after the owner saw 300 req/s: %d (%s), want the warm-up's 30", st.Desired, st.Reason)
	}
	// The shadow's 900 req/s did not reach the shared peak.
	at = at.Add(time.Minute)
	if st := c.Decide(at, minute(at, 0.5, 0, 100), 5); st.Desired != 30 {
		t.Errorf("owner after the shadow saw 900 req/s: %d (%s), want still the 300 req/s peak's 30", st.Desired, st.Reason)
	}
}

// Replan puts the owner's refit in force into the shadow, planned at the
// shadow's own settings and quantile: a shadow of 20 req/s instances plans
// the owner's 220 req/s bound on 11; before Replan it had no plan.
func TestReplanPlansTheOwnersRefitAtTheShadowsSettings(t *testing.T) {
	p := testPlanner()
	c, err := New(p, hourly(func([]int) model.Forecaster { return constant(200) }))
	if err != nil {
		t.Fatal(err)
	}
	q := p
	q.Fleet.RPSPerInstance = 20
	sh, err := c.Shadow(q, Strategy{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refit(t0, flat(72, 100)); err != nil {
		t.Fatal(err)
	}
	if _, found := sh.PlanStep(t0); found {
		t.Fatal("the shadow has a plan before Replan")
	}
	sh.Replan(c)
	st, found := sh.PlanStep(t0)
	if !found || st.Desired != 11 {
		t.Fatalf("shadow plan after Replan: %d (found %v, %s), want 11", st.Desired, found, st.Reason)
	}
	if owner, _ := c.PlanStep(t0); owner.Desired != 22 {
		t.Errorf("owner plan %d, want its own 22", owner.Desired)
	}
	last := sh.Last()
	if !last.At.Equal(t0) || last.Gate != c.Last().Gate || last.Quantile != sh.Quantile() || last.ProfilePlan == nil {
		t.Errorf("shadow refit at %v, gate %+v, quantile %v (profile plan %v); want the owner's refit at the shadow's quantile %v",
			last.At, last.Gate, last.Quantile, last.ProfilePlan != nil, sh.Quantile())
	}
	// A later refit of the owner reaches the shadow at the next Replan
	// only. At 01:00 the model's 200 has missed the 100 seen, so the gate
	// steps back to the profile's 100 (+10%): 11 on the owner's
	// instances, ⌈110/20⌉ = 6 on the shadow's.
	at := t0.Add(time.Hour)
	if _, err := c.Refit(at, flat(73, 100)); err != nil {
		t.Fatal(err)
	}
	if !sh.Last().At.Equal(t0) {
		t.Errorf("the shadow's refit moved to %v before Replan", sh.Last().At)
	}
	sh.Replan(c)
	owner, _ := c.PlanStep(at)
	st, _ = sh.PlanStep(at)
	if c.Last().Gate.Level != planner.GateProfile || owner.Desired != 11 || st.Desired != 6 ||
		sh.Last().Gate != c.Last().Gate || !sh.Last().At.Equal(at) {
		t.Errorf("after the owner's second refit (gate %s): owner %d (%s), shadow %d (%s) at gate %s; want profile, 11 and 6",
			c.Last().Gate.Level, owner.Desired, owner.Reason, st.Desired, st.Reason, sh.Last().Gate.Level)
	}
}

// Follow makes the live controller decide as the candidate it adopts:
// the candidate's settings, strategy, quantile and plans, while it keeps
// its own reactive clocks, asked records and estimates.
func TestFollowAdoptsTheCandidatesDecisions(t *testing.T) {
	live := planned(t)
	for i := range 15 {
		at := t0.Add(time.Duration(i+1) * time.Minute)
		live.Decide(at, minute(at, 0.95, 0, 150), 22)
	}
	q := live.PlannerConfig()
	q.Fleet.RPSPerInstance = 20
	s := Strategy{NoReactive: true}
	cand, err := live.Shadow(q, s)
	if err != nil {
		t.Fatal(err)
	}
	cand.Replan(live)
	before := live.Policy()
	live.Follow(cand)
	after := live.Policy()
	if live.Strategy() != s || live.PlannerConfig().Fleet.RPSPerInstance != 20 || live.Quantile() != cand.Quantile() {
		t.Errorf("after Follow: strategy %+v, %v req/s an instance, quantile %v; want the candidate's %+v, 20, %v",
			live.Strategy(), live.PlannerConfig().Fleet.RPSPerInstance, live.Quantile(), s, cand.Quantile())
	}
	if !reflect.DeepEqual(after.Reactive, before.Reactive) || !reflect.DeepEqual(after.Asked, before.Asked) ||
		after.Estimated != before.Estimated || after.Backlog != before.Backlog {
		t.Errorf("Follow changed the live controller's own state: %+v, was %+v", after, before)
	}
	at := t0.Add(16 * time.Minute)
	if st := live.Decide(at, minute(at, 0.5, 0, 100), 22); st.Desired != 11 {
		t.Errorf("live after Follow decides %d (%s), want the candidate's plan of 11", st.Desired, st.Reason)
	}
}

// Estimated counts the requests the observations brought and those
// estimated late on what was ready: the first boot delay (10m) plus the
// minute is not scored; then 9 minutes at 100 req/s on 20 instances are
// on time (54,000 requests) and a minute at 300 req/s on 20 (C = 200, a
// backlog passing the 2,000-request limit after 20 s) is late for 40 of
// its 60 s: 12,000 of 18,000.
func TestEstimatedCountsArrivedAndLate(t *testing.T) {
	c := planned(t)
	if c.Estimated() != (Estimate{}) {
		t.Fatalf("new: %+v, want nothing", c.Estimated())
	}
	for i := range 21 {
		at := t0.Add(time.Duration(i+1) * time.Minute)
		rps := 100.0
		if i == 20 {
			rps = 300
		}
		c.Observe(at, planner.Observation{At: at, Span: time.Minute, DemandRPS: rps}, 20)
	}
	got := c.Estimated()
	if math.Abs(got.Arrived-72000) > 1e-6 || math.Abs(got.Late-12000) > 1e-6 {
		t.Errorf("Estimated = %+v, want 72000 arrived and 12000 late", got)
	}
	if b := c.Policy().Backlog; math.Abs(b-6000) > 1e-9 { // 100 req/s over 60 s
		t.Errorf("backlog %v, want 6000", b)
	}
}

// Policy and RestorePolicy carry a controller's own decisions across a
// restart: a fresh controller restored from the policy (and the same
// refit) reports the same policy and decides as the original did; the
// policy is a copy.
func TestPolicyRoundTrip(t *testing.T) {
	orig := planned(t)
	orig.SetStrategy(Strategy{Flat: 3})
	for i := range 14 {
		at := t0.Add(time.Duration(i+1) * time.Minute)
		orig.Decide(at, minute(at, 0.95, 0, 250), 22+i/5)
	}
	p := orig.Policy()
	if p.Estimated.Arrived == 0 || len(p.Asked) < 2 || p.Reactive.LastOut.IsZero() || p.Backlog == 0 {
		t.Fatalf("policy %+v: the test needs estimates, asks, a scale-out and a backlog", p)
	}
	restored := planned(t)
	if err := restored.RestorePolicy(p); err != nil {
		t.Fatal(err)
	}
	if got := restored.Policy(); !reflect.DeepEqual(got, p) {
		t.Fatalf("restored policy %+v, want %+v", got, p)
	}
	p.Asked[0].Desired = 999 // a copy each way
	if restored.Policy().Asked[0].Desired == 999 || orig.Policy().Asked[0].Desired == 999 {
		t.Error("the policy shares its asked records with a controller")
	}
	for i := 14; i < 30; i++ {
		at := t0.Add(time.Duration(i+1) * time.Minute)
		obs := minute(at, 0.95, 0, 250)
		a, b := orig.Decide(at, obs, 24), restored.Decide(at, obs, 24)
		if a != b {
			t.Fatalf("minute %d: original %+v, restored %+v", i+1, a, b)
		}
	}
}

// RestorePolicy refuses a state out of range, naming it, and leaves the
// controller as it was.
func TestRestorePolicyRefusesOutOfRange(t *testing.T) {
	cases := []struct {
		name string
		edit func(*PolicyState)
		want string
	}{
		{"quantile below 0.5", func(p *PolicyState) { p.Quantile = 0.4 }, "quantile 0.4"},
		{"quantile of 1", func(p *PolicyState) { p.Quantile = 1 }, "quantile 1 "},
		{"NaN quantile", func(p *PolicyState) { p.Quantile = math.NaN() }, "quantile NaN"},
		{"positive quantile memory", func(p *PolicyState) { p.QuantileMemory = 0.1 }, "memory 0.1"},
		{"quantile memory too deep", func(p *PolicyState) { p.QuantileMemory = -100 }, "memory -100"},
		{"negative mean demand", func(p *PolicyState) { p.MeanDemand = -1 }, "mean demand -1"},
		{"infinite mean demand", func(p *PolicyState) { p.MeanDemand = math.Inf(1) }, "mean demand +Inf"},
		{"negative backlog", func(p *PolicyState) { p.Backlog = -1 }, "backlog -1"},
		{"infinite backlog", func(p *PolicyState) { p.Backlog = math.Inf(1) }, "backlog +Inf"},
		{"NaN backlog", func(p *PolicyState) { p.Backlog = math.NaN() }, "backlog NaN"},
		{"negative arrivals", func(p *PolicyState) { p.Estimated.Arrived = -1 }, "out of range"},
		{"NaN late", func(p *PolicyState) { p.Estimated.Late = math.NaN() }, "out of range"},
		{"negative flat fleet", func(p *PolicyState) { p.Strategy.Flat = -1 }, "flat -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planned(t)
			c.Decide(t0, minute(t0, 0.95, 0, 150), 22)
			before := c.Policy()
			p := c.Policy()
			p.Strategy, p.Level = Strategy{NoPlan: true}, "other" // would change c if accepted
			tc.edit(&p)
			err := c.RestorePolicy(p)
			if err == nil || !strings.Contains(err.Error(), "policy state out of range") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RestorePolicy = %v, want an error naming %q", err, tc.want)
			}
			if got := c.Policy(); !reflect.DeepEqual(got, before) {
				t.Errorf("refused RestorePolicy changed the controller: %+v, was %+v", got, before)
			}
		})
	}
	// The edges are in range.
	c := planned(t)
	p := c.Policy()
	p.Quantile, p.QuantileMemory, p.MeanDemand, p.Backlog = 0.5, -99.9, 0, 0
	if err := c.RestorePolicy(p); err != nil {
		t.Errorf("RestorePolicy at the edges: %v", err)
	}
}
