package planner

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// obsEvery returns one observation a minute from 09:00 for each value pair.
type tickObs struct {
	util, queue float64
}

func TestReactiveNext(t *testing.T) {
	hot := tickObs{util: 0.95}
	idle := tickObs{util: 0.1}
	ok := tickObs{util: 0.6}
	queued := tickObs{util: 1, queue: 80}
	repeat := func(o tickObs, n int) []tickObs {
		out := make([]tickObs, n)
		for i := range out {
			out[i] = o
		}
		return out
	}
	cat := func(parts ...[]tickObs) []tickObs {
		var out []tickObs
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name    string
		cfg     func(*Config)
		start   int
		obs     []tickObs
		want    int
		actions int
		reason  string
	}{
		{"hot for 4 minutes holds", nil, 5, repeat(hot, 4), 5, 0, "hold"},
		{"hot for 5 minutes adds one", nil, 5, repeat(hot, 5), 6, 1, "util 95% > 85% for 5m, +1"},
		{"scale-out cooldown spaces the steps", nil, 5, repeat(hot, 9), 6, 1, "hold"},
		{"after the cooldown it adds again", nil, 5, repeat(hot, 10), 7, 2, "+1"},
		{"a cool minute resets the timer", nil, 5, cat(repeat(hot, 4), []tickObs{ok}, repeat(hot, 4)), 5, 0, "hold"},
		{"queue over 50 for 2 minutes adds one", func(c *Config) { c.Reactive.ScaleOutFor = time.Hour }, 5, repeat(queued, 2), 6, 1, "queue 80 > 50 for 2m"},
		{"idle for 20 minutes removes one", nil, 5, repeat(idle, 20), 4, 1, "util 10% < 30% for 20m, -1"},
		{"idle for 19 minutes holds", nil, 5, repeat(idle, 19), 5, 0, "hold"},
		{"idle with a queue is not idle", nil, 5, repeat(tickObs{util: 0.1, queue: 3}, 30), 5, 0, "hold"},
		{"no scale-in within 15m of a scale-out", func(c *Config) { c.Reactive.ScaleInFor = 5 * time.Minute }, 5,
			cat(repeat(hot, 5), repeat(idle, 14)), 6, 1, "hold"},
		{"scale-in once 15m have passed since the scale-out", func(c *Config) { c.Reactive.ScaleInFor = 5 * time.Minute }, 5,
			cat(repeat(hot, 5), repeat(idle, 15)), 5, 2, "-1"},
		{"a second scale-in needs a fresh idle spell", nil, 5, repeat(idle, 39), 4, 1, "hold"},
		{"scale-in again after a fresh idle spell", nil, 5, repeat(idle, 40), 3, 2, "-1"},
		{"never below min instances", func(c *Config) { c.Fleet.MinInstances = 5 }, 5, repeat(idle, 60), 5, 0, "hold"},
		{"never above max instances", func(c *Config) { c.Fleet.MaxInstances = 5 }, 5, repeat(hot, 5), 5, 0, "max instances 5"},
		{"max step lets a big overload add several", func(c *Config) { c.Reactive.MaxStep = 4 }, 5,
			repeat(tickObs{util: 1, queue: 0}, 5), 9, 1, "+4"},
		{"step of one when max step is one", func(c *Config) { c.Reactive.MaxStep = 1 }, 5,
			repeat(tickObs{util: 1, queue: 0}, 5), 6, 1, "+1"},
		// With a warm tier (warm start 2m) the holds last no longer than
		// the warm start, and a surge (the 200 req/s need 20 instances)
		// is answered at once.
		{"a warm tier caps the scale-out hold at the warm start", warmTier, 15, repeat(hot, 2), 16, 1, "util 95% > 85% for 2m, +1"},
		{"a warm tier holds for less than the warm start", warmTier, 15, repeat(hot, 1), 15, 0, "hold"},
		{"a warm tier answers a surge at once", warmTier, 5, repeat(hot, 1), 40, 1, "surge, 200 req/s needs 20, 4×"},
		{"without a warm tier a surge waits for the hold", nil, 5, repeat(hot, 1), 5, 0, "hold"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig()
			c.Reactive.MaxStep = 1
			// The observations' demand only sizes proportional steps here;
			// the SLO rule reads it and has a table of its own.
			c.Reactive.SLORule = false
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			var s ReactiveState
			current, actions := tc.start, 0
			var last Step
			for i, o := range tc.obs {
				// Demand 200 req/s: 20 instances' worth, for proportional steps.
				obs := Observation{At: at("09:00").Add(time.Duration(i+1) * time.Minute), Span: time.Minute,
					Utilisation: o.util, Queue: o.queue, DemandRPS: 200}
				s, last = c.ReactiveNext(s, obs, current)
				if last.Desired != current {
					actions++
					current = last.Desired
				}
			}
			if current != tc.want || actions != tc.actions || !strings.Contains(last.Reason, tc.reason) {
				t.Errorf("ended at %d after %d actions, last reason %q; want %d after %d, reason ~%q",
					current, actions, last.Reason, tc.want, tc.actions, tc.reason)
			}
		})
	}
}

// warmTier gives the fleet a warm tier whose stopped instances start in
// two minutes.
func warmTier(c *Config) { c.Fleet.WarmStart = 2 * time.Minute }

// The SLO rule: 4 slots of 20 s an instance, 10 s wait at 99.5%. 0.07 req/s
// (a = 1.4 erlangs) on 1 instance (4 servers) keeps 1.64% waiting past 10
// s (Erlang C; python3, the factorial form of TestErlangC), though the
// instance is only 35% busy: scale out after 2 minutes. On 2 instances the
// same load keeps 0.0004% late, and a scale-in from 2 would break the SLO,
// so the idle rule (util < 30%) does not fire.
func TestReactiveSLORule(t *testing.T) {
	c := DefaultConfig()
	c.Fleet.ServiceTime, c.Fleet.Slots, c.Fleet.RPSPerInstance = 20*time.Second, 4, 0.2
	c.Reactive.ScaleInFor = 5 * time.Minute
	if m := c.MissShare(0.07, 1); math.Abs(m-0.01643473151010083) > 1e-12 {
		t.Fatalf("setup: %v late on one instance, want 0.0164347", m)
	}
	cases := []struct {
		name        string
		aware       bool
		start, want int
		reason      string
	}{
		{"SLO breached at 25% busy scales out", true, 1, 2, "would wait > 10s on 1 for 2m, +1"},
		{"without the rule nothing happens", false, 1, 1, "hold"},
		{"no scale-in that would breach it", true, 2, 2, "hold"},
		{"without the rule the idle pool scales in", false, 2, 1, "-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.Reactive.SLORule = tc.aware
			var s ReactiveState
			current := tc.start
			var reasons []string
			for i := range 10 {
				util := 0.07 * 20 / float64(4*current)
				obs := Observation{At: at("09:00").Add(time.Duration(i+1) * time.Minute), Span: time.Minute, Utilisation: util, DemandRPS: 0.07}
				var st Step
				s, st = c.ReactiveNext(s, obs, current)
				if st.Desired != current || len(reasons) == 0 {
					reasons = append(reasons, st.Reason)
				}
				current = st.Desired
			}
			if current != tc.want || !strings.Contains(strings.Join(reasons, "|"), tc.reason) {
				t.Errorf("ended at %d (%q), want %d (~%q)", current, reasons, tc.want, tc.reason)
			}
		})
	}
}

// ReturnToPlan gives a scale-out back once the load has fitted the plan
// for ReturnToPlanAfter, and never when the plan would trip a scale-out
// rule at once (which would flap).
func TestReturnToPlan(t *testing.T) {
	c := planConfig() // 10 req/s an instance, sized at 100%
	c.Reactive.ReturnToPlanAfter = 3 * time.Minute
	cases := []struct {
		name    string
		demand  float64
		planned int
		minutes int
		back    bool
	}{
		{"fits for 3 minutes: back", 60, 8, 3, true},
		{"fits for 2 minutes: not yet", 60, 8, 2, false},
		{"needs more than the plan", 90, 8, 10, false},
		{"would be 90% busy on the plan: over the 85% rule", 72, 8, 10, false},
		{"the term is not above the plan", 60, 12, 10, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := ReactiveState{Desired: 12}
			var back bool
			for i := range tc.minutes {
				obs := Observation{At: at("09:00").Add(time.Duration(i+1) * time.Minute), Span: time.Minute, DemandRPS: tc.demand}
				if s, back = c.ReturnToPlan(s, obs, tc.planned); back {
					break
				}
			}
			if back != tc.back || (back && s.Desired != tc.planned) {
				t.Errorf("back %v at %d, want %v", back, s.Desired, tc.back)
			}
		})
	}
}

// The hold reason reads as its fmt form would, for counts, utilisations
// and queues of every size and sign the rules see.
func TestHoldReason(t *testing.T) {
	cases := []struct {
		desired     int
		util, queue float64
	}{
		{0, 0, 0}, {5, 0.624, 0.4}, {12, 1, 3.5}, {1000000, 0.005, 1e6}, {-1, -0.2, -2.5},
	}
	for _, tc := range cases {
		want := fmt.Sprintf("reactive: hold %d (util %d%%, queue %d)", tc.desired,
			int(math.Round(100*tc.util)), int(math.Round(tc.queue)))
		if got := holdReason(tc.desired, Observation{Utilisation: tc.util, Queue: tc.queue}); got != want {
			t.Errorf("holdReason(%d, util %v, queue %v) = %q, want %q", tc.desired, tc.util, tc.queue, got, want)
		}
	}
}
