package planner

import (
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig()
			c.Reactive.MaxStep = 1
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
