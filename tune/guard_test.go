package tune

import (
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// guardRig is a tuner whose flat sizes 4, 8, 12 and 16 all held the SLO
// over the guard window and this hour, each costing its size an hour,
// with the live pool burning the budget far past the guard's rate.
func guardRig(t *testing.T, now time.Time) *Tuner {
	t.Helper()
	tu := newTuner(t, Options{})
	tu.tuneFrom, tu.peakNeed = dayOf(now)-10, 16
	hour := hourOf(now)
	for _, n := range []int{4, 8, 12, 16} {
		c := &candidate{name: flatName(n), flat: n, since: start, twin: tu.newTwin(now, n, uint64(1000+n))}
		c.recent = []score{{At: hour - 1, Cost: float64(n), Arrived: 10000}, {At: hour, Cost: float64(n), Arrived: 3000}}
		tu.flats = append(tu.flats, c)
	}
	sizes := make([]int, hoursPerDay)
	for h := range sizes {
		sizes[h] = 8
	}
	tu.sched = &candidate{name: Schedule, schedule: sizes, since: start, twin: tu.newTwin(now, 8, scheduleStream),
		recent: []score{{At: hour - 1, Cost: 9, Arrived: 10000}, {At: hour, Cost: 9, Arrived: 3000}}}
	tu.liveRecent = []score{{At: hour, Arrived: 13000, Late: 1000}}
	return tu
}

// demandFor is a demand of testPlan's pool that needs n instances.
func demandFor(t *testing.T, tu *Tuner, n int) planner.Observation {
	t.Helper()
	rps := 0.1
	for tu.base.InstancesFor(rps) < n {
		rps *= 1.01
	}
	return planner.Observation{Span: time.Minute, DemandRPS: rps}
}

// When the guard trips it moves to the cheapest candidate that held the
// SLO and holds what the demand observed now needs: an hour's record lags
// a surge that began minutes ago, so a size that held the hour's first
// minutes is not enough. A need past the largest flat size asks for that
// size.
func TestGuardMovesToASizeThatCopesWithTheDemandNow(t *testing.T) {
	now := start.Add(20*24*time.Hour + 3*time.Hour + 14*time.Minute)
	cases := []struct {
		need    int
		newPeak bool // the flat grid grew to the need first, as Decide grows it
		want    string
	}{
		{3, false, flatName(4)},
		{10, false, flatName(12)},
		{12, false, flatName(12)},
		{30, false, flatName(16)},
		{30, true, flatName(16)},
	}
	for _, tc := range cases {
		tu := guardRig(t, now)
		obs := demandFor(t, tu, tc.need)
		if tc.newPeak {
			tu.growFlats(now, obs.DemandRPS)
			if tu.peakNeed < tc.need {
				t.Fatalf("the grid grew to %d, want %d", tu.peakNeed, tc.need)
			}
		}
		tu.trackLive(now, obs)
		if got := tu.Candidate(); got != tc.want || !strings.Contains(tu.why, "guard:") {
			t.Errorf("need %d, new peak %v: moved to %s (%s), want %s", tc.need, tc.newPeak, got, tu.why, tc.want)
		}
	}
}

// While the guard waits to judge its last move, a flat size or the
// schedule in force that the demand has outgrown is replaced at once by
// the cheapest that held the SLO and copes; a size that still copes is
// left to be judged, and so is a candidate that reacts on its own.
func TestGuardReplacesAnOutgrownSizeBeforeJudgingIt(t *testing.T) {
	now := start.Add(20*24*time.Hour + 3*time.Hour + 19*time.Minute)
	cases := []struct {
		name     string
		inForce  string
		movedAgo time.Duration
		need     int
		want     string
	}{
		{"outgrown", flatName(8), 5 * time.Minute, 10, flatName(12)},
		{"the schedule outgrown", Schedule, 5 * time.Minute, 10, flatName(12)},
		{"still copes", flatName(8), 5 * time.Minute, 7, flatName(8)},
		{"a reactive candidate scales out itself", ReactiveSurge, 5 * time.Minute, 10, ReactiveSurge},
		{"judged: the burn decides", flatName(8), time.Hour, 10, flatName(12)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tu := guardRig(t, now)
			tu.adopt(tc.inForce, now.Add(-tc.movedAgo), "guard: in force")
			tu.guardedAt = now.Add(-tc.movedAgo)
			if tc.movedAgo < tu.guardCooldown() {
				tu.liveRecent = nil // the guard's move cleared the burn's record
			}
			tu.trackLive(now, demandFor(t, tu, tc.need))
			if got := tu.Candidate(); got != tc.want {
				t.Errorf("in force %s, need %d: moved to %s (%s), want %s", tc.inForce, tc.need, got, tu.why, tc.want)
			}
			if tc.want != tc.inForce && tc.movedAgo < tu.guardCooldown() && !strings.Contains(tu.why, "before its last move could be judged") {
				t.Errorf("why %q does not say the demand outgrew the size", tu.why)
			}
		})
	}
}

// The guard asks for evidence of a burn in late requests, not in traffic:
// a quiet pool whose window holds too few requests for the budget to allow
// ten misses still trips it when ten or more were late at over the
// guard's rate, and a handful of late requests does not.
func TestGuardTripsOnTenLateRequestsWhateverTheTraffic(t *testing.T) {
	now := start.Add(20*24*time.Hour + 3*time.Hour + 14*time.Minute)
	cases := []struct {
		name          string
		arrived, late float64
		moves         bool
	}{
		{"a quiet pool, most of a surge late", 1000, 400, true},
		{"a quiet pool, ten late", 200, 10, true},
		{"a quiet pool, nine late", 200, 9, false},
		{"a busy pool burning under the guard's rate", 100000, 1000, false},
		{"a busy pool burning past it", 100000, 2000, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tu := guardRig(t, now)
			tu.adopt(flatName(8), now.Add(-48*time.Hour), "in force")
			tu.liveRecent = []score{{At: hourOf(now), Arrived: tc.arrived, Late: tc.late}}
			tu.trackLive(now, demandFor(t, tu, 10))
			if moved := tu.Candidate() != flatName(8); moved != tc.moves {
				t.Errorf("%.0f of %.0f late: moved %v (to %s), want %v", tc.late, tc.arrived, moved, tu.Candidate(), tc.moves)
			}
		})
	}
}
