package backtest

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/prewarm/prewarm/tune"
)

// DefaultsGrid holds distinct settings under distinct names, and among
// them the tuner's shipped defaults.
func TestDefaultsGridHasTheShippedDefaults(t *testing.T) {
	grid := DefaultsGrid()
	if len(grid) != 48 {
		t.Errorf("%d settings, want 3 margins × 2 half-lives × 2 cost half-lives × 2 slacks × 2 trims = 48", len(grid))
	}
	type key struct {
		margin, slack  float64
		half, costHalf time.Duration
		trim           int
	}
	keys, names := map[key]bool{}, map[string]bool{}
	for _, g := range grid {
		k := key{g.Tune.Margin, g.Tune.Slack, g.Tune.HalfLife, g.Tune.CostHalfLife, g.Tune.Trim}
		if keys[k] || names[g.Name] {
			t.Errorf("setting %q (%+v) repeated", g.Name, k)
		}
		keys[k], names[g.Name] = true, true
	}
	d := tune.Options{}.WithDefaults()
	if !keys[key{d.Margin, d.Slack, d.HalfLife, d.CostHalfLife, d.Trim}] {
		t.Errorf("the shipped defaults (margin %v, half-life %v, cost's %v, slack %v, trim %d) are not in the grid",
			d.Margin, d.HalfLife, d.CostHalfLife, d.Slack, d.Trim)
	}
}

// halfScore is the log of the cost over the first half's baseline plus
// the shortfall below the SLO bar (the target, or the baseline's
// attainment where lower) in units of the miss budget.
func TestHalfScore(t *testing.T) {
	const target = 0.995
	cases := []struct {
		name          string
		h, baseline   Result
		vs, slo, loss float64
	}{
		{"meets the target", Result{Cost: 2, SLOAttainment: 0.999}, Result{Cost: 1, SLOAttainment: 0.997}, 2, 0.999, math.Ln2},
		{"short of the target", Result{Cost: 1, SLOAttainment: 0.99}, Result{Cost: 2, SLOAttainment: 0.999}, 0.5, 0.99, -math.Ln2 + 1},
		{"short, but the baseline too", Result{Cost: 1, SLOAttainment: 0.985}, Result{Cost: 1, SLOAttainment: 0.99}, 1, 0.985, 1},
		{"baseline costs nothing", Result{Cost: 1, SLOAttainment: 1}, Result{Cost: 0, SLOAttainment: 1}, 0, 1, math.Log(1e-9)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := halfScore(tc.h, tc.baseline, target)
			if s.VsBaseline != tc.vs || s.SLO != tc.slo || math.Abs(s.Loss-tc.loss) > 1e-9 {
				t.Errorf("halfScore = %+v, want vs %v, slo %v, loss %v", s, tc.vs, tc.slo, tc.loss)
			}
		})
	}
}

// bestSetting sums the losses over every trace but the skipped one.
func TestBestSettingSkipsTheTrace(t *testing.T) {
	scores := [][]HalfScore{
		{{Loss: 0}, {Loss: 5}},   // trace 0 strongly prefers setting 0
		{{Loss: 1}, {Loss: 0.5}}, // traces 1 and 2 prefer setting 1
		{{Loss: 1}, {Loss: 0.5}},
	}
	cases := []struct{ skip, want int }{{-1, 0}, {0, 1}, {1, 0}, {2, 0}}
	for _, tc := range cases {
		if got := bestSetting(scores, tc.skip); got != tc.want {
			t.Errorf("bestSetting(skip %d) = %d, want %d", tc.skip, got, tc.want)
		}
	}
}

// LeaveOneTraceOut needs a grid and at least two traces.
func TestLeaveOneTraceOutRejectsTooLittle(t *testing.T) {
	tr := squareWave(14, 10, 45)
	grid := DefaultsGrid()[:2]
	cases := []struct {
		name  string
		cases []SuiteCase
		grid  []DefaultsCandidate
	}{
		{"one trace", []SuiteCase{{Trace: tr, Config: testConfig()}}, grid},
		{"no grid", []SuiteCase{{Trace: tr, Config: testConfig()}, {Trace: tr, Config: testConfig()}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LeaveOneTraceOut(context.Background(), tc.cases, tc.grid, nil); err == nil {
				t.Error("no error")
			}
		})
	}
}

// LeaveOneTraceOut scores every setting on every trace's first half and,
// for each trace, reports the setting with the least loss over the other
// traces' first halves and that trace's second half with it; the
// defaults are chosen over every trace, and the summary is the entries'.
func TestLeaveOneTraceOutChoosesWithoutTheTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("replays three traces' baselines and hybrids (~6 s)")
	}
	a, b, c := squareWave(14, 10, 45), squareWave(14, 5, 60), squareWave(14, 20, 30)
	a.Name, b.Name, c.Name = "square-a", "square-b", "square-c"
	var cases []SuiteCase
	for _, tr := range []Trace{a, b, c} {
		cases = append(cases, SuiteCase{Trace: tr, Config: testConfig()})
	}
	grid := []DefaultsCandidate{
		{Name: "shipped", Tune: tune.Options{Enabled: true}},
		{Name: "thin margin, no half-life", Tune: tune.Options{Enabled: true, Margin: 0.1, HalfLife: -24 * time.Hour, Slack: 0.5, Trim: 1}},
	}
	var told []string
	rep, err := LeaveOneTraceOut(context.Background(), cases, grid, func(s string) { told = append(told, s) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Grid, []string{"shipped", "thin margin, no half-life"}) || len(rep.Entries) != 3 {
		t.Fatalf("grid %v, %d entries; want the 2 names and 3 entries", rep.Grid, len(rep.Entries))
	}
	target := testConfig().Planner.SLO.Quantile
	// argmin recomputes the choice from the reported first-half losses.
	argmin := func(skip int) string {
		best, bestLoss := "", math.Inf(1)
		for g, name := range rep.Grid {
			loss := 0.0
			for i, e := range rep.Entries {
				if i != skip {
					loss += e.FirstHalf[g].Loss
				}
			}
			if loss < bestLoss {
				best, bestLoss = name, loss
			}
		}
		return best
	}
	for i, e := range rep.Entries {
		if e.Trace != cases[i].Trace.Name || len(e.FirstHalf) != len(grid) {
			t.Errorf("entry %d: trace %q with %d first-half scores, want %q with %d", i, e.Trace, len(e.FirstHalf), cases[i].Trace.Name, len(grid))
			continue
		}
		for g, s := range e.FirstHalf {
			if !(s.VsBaseline > 0) || s.SLO <= 0 || s.SLO > 1 || math.IsNaN(s.Loss) {
				t.Errorf("%s, %s: first-half score %+v", e.Trace, grid[g].Name, s)
			}
		}
		if want := argmin(i); e.Chosen != want {
			t.Errorf("%s: chose %q, want %q (least loss over the other traces)", e.Trace, e.Chosen, want)
		}
		checkEntry(t, e.Entry, cases[i].Trace, target)
	}
	if want := argmin(-1); rep.Defaults != want {
		t.Errorf("defaults %q, want %q (least loss over every trace)", rep.Defaults, want)
	}
	s := summarise(rep.entries())
	if rep.Worst != s.Worst || rep.WorstVsBaseline != s.WorstVsBaseline || rep.GeoMeanVsBaseline != s.GeoMeanVsBaseline || !slices.Equal(rep.MissedSLO, s.MissedSLO) {
		t.Errorf("summary %s %v %v %v, entries give %s %v %v %v", rep.Worst, rep.WorstVsBaseline, rep.GeoMeanVsBaseline, rep.MissedSLO,
			s.Worst, s.WorstVsBaseline, s.GeoMeanVsBaseline, s.MissedSLO)
	}
	// Three baselines, the first halves, then one line per second half.
	if len(told) != 3+1+3 {
		t.Errorf("progress told %d steps, want 7: %q", len(told), told)
	}
}
