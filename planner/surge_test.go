package planner

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The surge rule (Reactive.PanicThreshold): one observation whose demand
// needs at least the threshold times the current instances scales out at
// once to the need of the demand times the surge headroom, with no
// condition held and no cooldown; below the threshold, or switched off,
// the other rules decide (here: hold). planConfig serves 10 req/s an
// instance at full utilisation, so a demand of d needs ⌈d/10⌉.
func TestSurgeRule(t *testing.T) {
	cases := []struct {
		name      string
		threshold float64
		headroom  float64
		current   int
		demand    float64
		lastOut   time.Duration // before the observation; 0: never
		want      int
		reason    string
	}{
		// 100 req/s needs 10 = 2 × 5: fires; 200 req/s needs 20.
		{"at the threshold it fires with the default headroom of 2", 2, 0, 5, 100, 0, 20, "reactive: surge, 100 req/s needs 10, 2× the 5 asked for: 20 (×2 headroom)"},
		// 150 needs 15 = 3 × 5; 1.5 × 150 = 225 needs 23.
		{"above the threshold it sizes with the surge headroom", 2, 1.5, 5, 150, 0, 23, "surge, 150 req/s needs 15, 3× the 5 asked for: 23 (×1.5 headroom)"},
		// 100 needs 10 ≥ 2 × 5; a headroom of 1 sizes for the demand.
		{"a headroom of one sizes for the demand alone", 2, 1, 5, 100, 0, 10, "(×1 headroom)"},
		// a scale-out a minute ago does not hold the surge back.
		{"it ignores the scale-out cooldown", 2, 0, 5, 100, time.Minute, 20, "surge"},
		// 1000 needs 100; 2000 would need 200, above max 100.
		{"the surge is clamped to max instances", 2, 0, 5, 1000, 0, 100, "max instances 100 (reactive: surge"},
		// 91 needs 10 ≥ 1.1 × 9 = 9.9: fires even a small step.
		{"a low threshold fires on a small overload", 1.1, 0, 9, 91, 0, 19, "surge, 91 req/s needs 10"},
		// 90 needs 9 < 2 × 5 = 10: no surge.
		{"below the threshold it does not fire", 2, 0, 5, 90, 0, 5, "reactive: hold 5"},
		// 1000 needs 100 ≥ 20 × 5 but the rule is off.
		{"a zero threshold is off", 0, 0, 5, 1000, 0, 5, "reactive: hold 5"},
		// the demand fits current instances: need 4 is not above 5.
		{"demand the pool already serves does not fire", 2, 0, 5, 40, 0, 5, "reactive: hold 5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig()
			c.Reactive.PanicThreshold, c.Reactive.PanicHeadroom = tc.threshold, tc.headroom
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			at := at("09:00")
			var s ReactiveState
			if tc.lastOut > 0 {
				s.LastOut, s.LastAction, s.Desired = at.Add(-tc.lastOut), at.Add(-tc.lastOut), tc.current
			}
			// One observation of a minute: too short for any other rule
			// (the SLO rule needs 2m, utilisation 5m).
			obs := Observation{At: at, Span: time.Minute, Utilisation: 0.5, DemandRPS: tc.demand}
			s, st := c.ReactiveNext(s, obs, tc.current)
			if st.Desired != tc.want || s.Desired != tc.want || !strings.Contains(st.Reason, tc.reason) {
				t.Fatalf("ReactiveNext = %d (state %d, %q), want %d (%q)", st.Desired, s.Desired, st.Reason, tc.want, tc.reason)
			}
			fired := strings.Contains(st.Reason, "surge")
			if fired != (s.LastOut.Equal(at) && s.LastAction.Equal(at)) {
				t.Errorf("surge %v but cooldown clocks LastOut %v, LastAction %v (want them at %v only after a surge)",
					fired, s.LastOut, s.LastAction, at)
			}
		})
	}
}

// A surge restarts the scale-out cooldown: the next minute's hot
// observation does not add an instance on top, but a second surge (the
// demand doubled again) still fires.
func TestSurgeRestartsTheCooldownButNotItself(t *testing.T) {
	c := planConfig()
	c.Reactive.PanicThreshold = 2
	start := at("09:00")
	var s ReactiveState
	var st Step
	s, st = c.ReactiveNext(s, Observation{At: start, Span: time.Minute, Utilisation: 1, DemandRPS: 100}, 5)
	if st.Desired != 20 {
		t.Fatalf("first surge: %d (%s), want 20", st.Desired, st.Reason)
	}
	// 20 instances for 190 req/s: need 19, no surge; utilisation 95% but
	// only for a minute, and the cooldown runs: hold 20.
	s, st = c.ReactiveNext(s, Observation{At: start.Add(time.Minute), Span: time.Minute, Utilisation: 0.95, DemandRPS: 190}, 20)
	if st.Desired != 20 || !strings.Contains(st.Reason, "hold 20") {
		t.Fatalf("a minute later at 190 req/s: %d (%s), want hold 20", st.Desired, st.Reason)
	}
	// 400 req/s needs 40 = 2 × 20: a second surge, to 80, a minute
	// after the first.
	_, st = c.ReactiveNext(s, Observation{At: start.Add(2 * time.Minute), Span: time.Minute, Utilisation: 1, DemandRPS: 400}, 20)
	if st.Desired != 80 || !strings.Contains(st.Reason, "surge") {
		t.Fatalf("second surge: %d (%s), want 80", st.Desired, st.Reason)
	}
}

// SurgeHeadroom is PanicHeadroom, 2 when unset.
func TestSurgeHeadroomDefault(t *testing.T) {
	cases := []struct {
		headroom, want float64
	}{{0, 2}, {1, 1}, {3.5, 3.5}}
	for _, tc := range cases {
		if got := (Reactive{PanicHeadroom: tc.headroom}).SurgeHeadroom(); got != tc.want {
			t.Errorf("SurgeHeadroom with PanicHeadroom %v = %v, want %v", tc.headroom, got, tc.want)
		}
	}
}

// Validate accepts a surge threshold of 0 (off) or in [1.1, 100] and a
// headroom of 0 (default) or in [1, 10], and names the YAML key of a
// value outside, with the value.
func TestValidateSurgeSettings(t *testing.T) {
	cases := []struct {
		name                string
		threshold, headroom float64
		want                string // "" : valid
	}{
		{"off", 0, 0, ""},
		{"lowest threshold", 1.1, 0, ""},
		{"highest threshold and headroom", 100, 10, ""},
		{"headroom of one", 2, 1, ""},
		{"threshold just below the least", 1.05, 0, "reactive.panic_threshold 1.05 must be 0 (off) or in [1.1, 100]"},
		{"threshold of one", 1, 0, "reactive.panic_threshold 1 "},
		{"threshold above the most", 101, 0, "reactive.panic_threshold 101 "},
		{"negative threshold", -2, 0, "reactive.panic_threshold -2 "},
		{"NaN threshold", math.NaN(), 0, "reactive.panic_threshold NaN "},
		{"headroom below one", 2, 0.5, "reactive.panic_headroom 0.5 must be in [1, 10] (0: the default, 2)"},
		{"headroom above ten", 2, 11, "reactive.panic_headroom 11 "},
		{"negative headroom", 2, -1, "reactive.panic_headroom -1 "},
		{"infinite headroom", 2, math.Inf(1), "reactive.panic_headroom +Inf "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig()
			c.Reactive.PanicThreshold, c.Reactive.PanicHeadroom = tc.threshold, tc.headroom
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want ~%q", err, tc.want)
			}
		})
	}
}
