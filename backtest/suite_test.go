package backtest

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SplitPoint is the UTC midnight at or before the trace's middle: the
// middle itself when it falls on a midnight, else the midnight before it,
// whatever the trace's step or start time.
func TestSplitPoint(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		name  string
		start time.Time
		step  time.Duration
		n     int
		want  time.Time
	}{
		{"whole days, even", start, time.Hour, 14 * 24, start.Add(7 * day)},
		{"whole days, odd", start, time.Hour, 15 * 24, start.Add(7 * day)},
		{"per minute", start, time.Minute, 28 * 24 * 60, start.Add(14 * day)},
		{"starts mid-morning", start.Add(6 * time.Hour), 30 * time.Minute, 14 * 48, start.Add(7 * day)},
		{"middle just before midnight", start, time.Hour, 2*7*24 - 2, start.Add(6 * day)},
		{"starts late, middle past a midnight", start.Add(20 * time.Hour), time.Hour, 10, start.Add(day)},
		{"one day from midnight: the start", start, time.Hour, 24, start},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := Trace{Start: tc.start, Step: tc.step, RPS: make([]float64, tc.n)}
			got := SplitPoint(tr)
			if !got.Equal(tc.want) {
				t.Errorf("SplitPoint = %v, want %v", got, tc.want)
			}
			mid := tr.Start.Add(tr.End().Sub(tr.Start) / 2)
			if got.After(mid) || got.Add(24*time.Hour).Compare(mid) <= 0 || got.UTC().Truncate(24*time.Hour) != got.UTC() {
				t.Errorf("SplitPoint %v is not the midnight at or before the middle %v", got, mid)
			}
		})
	}
}

// choice is a Choice whose scored run has a cost and an attainment.
func choice(policy string, cost, slo float64) Choice {
	return Choice{Policy: policy, Scored: Result{Name: policy, Cost: cost, SLOAttainment: slo}}
}

// baselineOf keeps the cheaper of two choices that reach the target, the
// one that reaches it when only one does, and the higher attainment when
// neither does (the first on ties).
func TestBaselineOf(t *testing.T) {
	const target = 0.995
	cases := []struct {
		name string
		a, b Choice
		want string
	}{
		{"both reach, second cheaper", choice("reactive", 10, 0.999), choice("flat", 8, 0.996), "flat"},
		{"both reach, first cheaper", choice("reactive", 7, 0.999), choice("flat", 8, 0.996), "reactive"},
		{"both reach, same cost", choice("reactive", 8, 0.999), choice("flat", 8, 1), "reactive"},
		{"exactly the target reaches", choice("reactive", 9, target), choice("flat", 5, 0.99), "reactive"},
		{"only the dearer reaches", choice("reactive", 5, 0.99), choice("flat", 20, 0.997), "flat"},
		{"neither, second closer", choice("reactive", 5, 0.98), choice("flat", 20, 0.99), "flat"},
		{"neither, first closer", choice("reactive", 50, 0.994), choice("flat", 2, 0.99), "reactive"},
		{"neither, tied", choice("reactive", 50, 0.99), choice("flat", 2, 0.99), "reactive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := baselineOf(tc.a, tc.b, target); got.Policy != tc.want {
				t.Errorf("baselineOf = %s, want %s", got.Policy, tc.want)
			}
		})
	}
}

// firstHalfBaseline applies the baseline's rule to the best reactive run
// scored on the first half (the runs scored on the second are ignored)
// and the flat run.
func TestFirstHalfBaseline(t *testing.T) {
	const target = 0.995
	runs := []suiteRun{{policy: PolicyReactive}, {policy: PolicyReactive}, {policy: PolicyReactive, second: true}, {policy: PolicyReactive}}
	results := []Result{
		{Name: "r0", Cost: 9, SLOAttainment: 0.999},
		{Name: "r1", Cost: 6, SLOAttainment: 0.996},
		{Name: "r2-second-half", Cost: 1, SLOAttainment: 1},
		{Name: "r3", Cost: 3, SLOAttainment: 0.99},
	}
	cases := []struct {
		name string
		flat Result
		want string
	}{
		{"flat dearer", Result{Name: "flat", Cost: 7, SLOAttainment: 1}, "r1"},
		{"flat cheaper", Result{Name: "flat", Cost: 5, SLOAttainment: 0.997}, "flat"},
		{"flat short of the target", Result{Name: "flat", Cost: 1, SLOAttainment: 0.994}, "r1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := firstHalfBaseline(runs, results, tc.flat, target); got.Name != tc.want {
				t.Errorf("first-half baseline %s, want %s", got.Name, tc.want)
			}
		})
	}
	t.Run("no reactive reaches", func(t *testing.T) {
		rs := []Result{{Name: "r0", Cost: 9, SLOAttainment: 0.98}, {Name: "r1", Cost: 6, SLOAttainment: 0.97},
			{Name: "r2-second-half", Cost: 1, SLOAttainment: 1}, {Name: "r3", Cost: 3, SLOAttainment: 0.99}}
		flat := Result{Name: "flat", Cost: 2, SLOAttainment: 0.985}
		if got := firstHalfBaseline(runs, rs, flat, target); got.Name != "r3" {
			t.Errorf("first-half baseline %s, want the closest, r3", got.Name)
		}
	})
}

// ratio divides, and is 0 when the divisor is not positive.
func TestRatio(t *testing.T) {
	cases := []struct{ a, b, want float64 }{
		{6, 3, 2},
		{1, 4, 0.25},
		{0, 5, 0},
		{1, 0, 0},
		{1, -2, 0},
		{1, math.NaN(), 0},
	}
	for _, tc := range cases {
		if got := ratio(tc.a, tc.b); got != tc.want {
			t.Errorf("ratio(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// The suite's summary names the trace with the highest ratio to its
// baseline, takes the geometric mean over the finite positive ratios and
// lists the traces that miss their SLO bar.
func TestSuiteSummary(t *testing.T) {
	rep := SuiteReport{Entries: []SuiteEntry{
		{Trace: "a", VsBaseline: 2, MeetsSLO: true},
		{Trace: "b", VsBaseline: 0.5, MeetsSLO: false},
		{Trace: "c", VsBaseline: 0, MeetsSLO: true},           // no baseline cost: left out
		{Trace: "d", VsBaseline: math.Inf(1), MeetsSLO: true}, // left out
		{Trace: "e", VsBaseline: 1, MeetsSLO: false},
	}}
	rep.SuiteSummary = summarise(rep.Entries)
	// (2 × 0.5 × 1)^(1/3) = 1.
	if rep.Worst != "a" || rep.WorstVsBaseline != 2 || math.Abs(rep.GeoMeanVsBaseline-1) > 1e-12 || !slices.Equal(rep.MissedSLO, []string{"b", "e"}) ||
		!slices.Equal(rep.AboveBaseline, []string{"a"}) {
		t.Errorf("summary worst %s %v, geomean %v, missed %v; want a 2, 1, [b e]", rep.Worst, rep.WorstVsBaseline,
			rep.GeoMeanVsBaseline, rep.MissedSLO)
	}
}

// checkEntry checks the figures of one suite entry against one another.
func checkEntry(t *testing.T, e SuiteEntry, tr Trace, target float64) {
	t.Helper()
	rel := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if e.Trace != tr.Name || !e.ScoredFrom.Equal(SplitPoint(tr)) {
		t.Errorf("entry of %q scored from %v, want %q from %v", e.Trace, e.ScoredFrom, tr.Name, SplitPoint(tr))
	}
	if !(e.Hybrid.Cost > 0 && e.Baseline.Scored.Cost > 0 && e.Oracle.Cost > 0 && e.Static.Cost > 0) {
		t.Fatalf("costs hybrid %v, baseline %v, oracle %v, static %v; want all positive", e.Hybrid.Cost,
			e.Baseline.Scored.Cost, e.Oracle.Cost, e.Static.Cost)
	}
	if !rel(e.VsBaseline, e.Hybrid.Cost/e.Baseline.Scored.Cost) || !rel(e.VsOracle, e.Hybrid.Cost/e.Oracle.Cost) {
		t.Errorf("hybrid ÷ baseline %v, ÷ oracle %v; costs give %v, %v", e.VsBaseline, e.VsOracle,
			e.Hybrid.Cost/e.Baseline.Scored.Cost, e.Hybrid.Cost/e.Oracle.Cost)
	}
	if !rel(e.Hybrid.CostVsStatic, e.Hybrid.Cost/e.Static.Cost) || !rel(e.Baseline.Scored.CostVsStatic, e.Baseline.Scored.Cost/e.Static.Cost) {
		t.Errorf("hybrid %v and baseline %v of static; costs give %v, %v", e.Hybrid.CostVsStatic, e.Baseline.Scored.CostVsStatic,
			e.Hybrid.Cost/e.Static.Cost, e.Baseline.Scored.Cost/e.Static.Cost)
	}
	if want := baselineOf(e.Reactive, e.Flat, target); want.Policy != e.Baseline.Policy || want.Scored.Cost != e.Baseline.Scored.Cost {
		t.Errorf("baseline %s at %v, want %s at %v by the rule", e.Baseline.Policy, e.Baseline.Scored.Cost, want.Policy, want.Scored.Cost)
	}
	if e.Reactive.ChosenOn != "first" || e.Flat.ChosenOn != "first" || e.HindsightReactive.ChosenOn != "second" || e.HindsightFlat.ChosenOn != "second" {
		t.Errorf("halves chosen on: reactive %q, flat %q, hindsight %q, %q", e.Reactive.ChosenOn, e.Flat.ChosenOn,
			e.HindsightReactive.ChosenOn, e.HindsightFlat.ChosenOn)
	}
	if got := e.Flat.Settings["instances"]; got != strconv.Itoa(e.Flat.Scored.Instances) || e.Flat.Scored.Instances < 1 {
		t.Errorf("flat choice of %q instances, scored with %d", got, e.Flat.Scored.Instances)
	}
	if want := e.Hybrid.SLOAttainment >= math.Min(target, e.Baseline.Scored.SLOAttainment); e.MeetsSLO != want {
		t.Errorf("meets SLO %v with attainment %v against the baseline's %v", e.MeetsSLO, e.Hybrid.SLOAttainment, e.Baseline.Scored.SLOAttainment)
	}
}

// RunSuite on one small trace returns one entry whose figures agree with
// one another: the hybrid's ratio to its baseline is the ratio of their
// costs, the baseline is the rule's pick, and the summary's worst and
// geometric mean are that entry's; progress is told once.
func TestRunSuiteFiguresAreConsistent(t *testing.T) {
	tr := squareWave(14, 10, 45)
	cfg := testConfig()
	var calls []int
	var told SuiteEntry
	rep, err := RunSuite(context.Background(), []SuiteCase{{Trace: tr, Config: cfg}}, func(done int, e SuiteEntry) {
		calls, told = append(calls, done), e
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Entries) != 1 || rep.SLOTarget != cfg.Planner.SLO.Quantile {
		t.Fatalf("%d entries at target %v, want 1 at %v", len(rep.Entries), rep.SLOTarget, cfg.Planner.SLO.Quantile)
	}
	e := rep.Entries[0]
	checkEntry(t, e, tr, cfg.Planner.SLO.Quantile)
	if rep.Worst != tr.Name || rep.WorstVsBaseline != e.VsBaseline || math.Abs(rep.GeoMeanVsBaseline-e.VsBaseline) > 1e-12 {
		t.Errorf("summary worst %s %v, geomean %v; want the one entry's %v", rep.Worst, rep.WorstVsBaseline, rep.GeoMeanVsBaseline, e.VsBaseline)
	}
	if !slices.Equal(calls, []int{1}) || told.Trace != tr.Name || told.VsBaseline != e.VsBaseline {
		t.Errorf("progress called with %v (entry %q), want once with 1 and the entry", calls, told.Trace)
	}
}

// RunSuite tells progress after each case, in order, and keeps the
// entries in the cases' order.
func TestRunSuiteProgressOncePerCase(t *testing.T) {
	if testing.Short() {
		t.Skip("replays two traces through the whole suite (~3 s)")
	}
	a, b := squareWave(14, 10, 45), squareWave(14, 5, 30)
	a.Name, b.Name = "square-a", "square-b"
	var done []int
	var names []string
	rep, err := RunSuite(context.Background(), []SuiteCase{{Trace: a, Config: testConfig()}, {Trace: b, Config: testConfig()}},
		func(n int, e SuiteEntry) { done, names = append(done, n), append(names, e.Trace) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(done, []int{1, 2}) || !slices.Equal(names, []string{"square-a", "square-b"}) {
		t.Errorf("progress told %v of %v, want 1, 2 of square-a, square-b", done, names)
	}
	if len(rep.Entries) != 2 || rep.Entries[0].Trace != "square-a" || rep.Entries[1].Trace != "square-b" {
		t.Fatalf("entries %d", len(rep.Entries))
	}
	want := math.Sqrt(rep.Entries[0].VsBaseline * rep.Entries[1].VsBaseline)
	worst := rep.Entries[0]
	if rep.Entries[1].VsBaseline > worst.VsBaseline {
		worst = rep.Entries[1]
	}
	if math.Abs(rep.GeoMeanVsBaseline-want) > 1e-12 || rep.Worst != worst.Trace || rep.WorstVsBaseline != worst.VsBaseline {
		t.Errorf("summary worst %s %v, geomean %v; entries give %s %v, %v", rep.Worst, rep.WorstVsBaseline,
			rep.GeoMeanVsBaseline, worst.Trace, worst.VsBaseline, want)
	}
}

// A trace too short to split into two halves of whole days is refused,
// naming the trace, before anything is reported to progress.
func TestRunSuiteRejectsATraceTooShortToSplit(t *testing.T) {
	tr := squareWave(1, 10, 45)
	called := false
	_, err := RunSuite(context.Background(), []SuiteCase{{Trace: tr, Config: testConfig()}}, func(int, SuiteEntry) { called = true })
	if err == nil || !strings.Contains(err.Error(), "square") || !strings.Contains(err.Error(), "too short") || called {
		t.Errorf("err %v, progress called %v; want a 'too short' error naming the trace and no progress", err, called)
	}
}

// SuiteSynthetic makes a bursts and a spikes trace per seed, each days
// of per-minute demand from the suite's Monday, named by mode and seed.
func TestSuiteSynthetic(t *testing.T) {
	trs := SuiteSynthetic([]uint64{1, 2}, 14)
	var names []string
	for _, tr := range trs {
		names = append(names, tr.Name)
		if tr.Step != time.Minute || len(tr.RPS) != 14*24*60 || !tr.Start.Equal(start) || !(tr.Peak() > 0) {
			t.Errorf("%s: step %v, %d values from %v, peak %v", tr.Name, tr.Step, len(tr.RPS), tr.Start, tr.Peak())
		}
	}
	if want := []string{"bursts-seed1", "bursts-seed2", "spikes-seed1", "spikes-seed2"}; !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	if slices.Equal(trs[0].RPS, trs[1].RPS) {
		t.Error("two seeds drew the same trace")
	}
}

// The hybrid is measured against the baseline of the same run's reactive
// and flat results; a missing policy or a baseline that cost nothing gives
// no ratio.
func TestHybridAndBaseline(t *testing.T) {
	r := func(name string, cost, slo float64) Result { return Result{Name: name, Cost: cost, SLOAttainment: slo} }
	tests := []struct {
		name     string
		results  []Result
		wantBase string
		wantOK   bool
	}{
		{"flat cheaper and met", []Result{r(PolicyHybrid, 8, 0.999), r(PolicyReactive, 12, 0.996), r(PolicyFlat, 10, 0.999)}, PolicyFlat, true},
		{"reactive missed", []Result{r(PolicyHybrid, 8, 0.999), r(PolicyReactive, 5, 0.98), r(PolicyFlat, 10, 0.999)}, PolicyFlat, true},
		{"no flat", []Result{r(PolicyHybrid, 8, 0.999), r(PolicyReactive, 12, 0.996)}, "", false},
		{"a baseline that cost nothing", []Result{r(PolicyHybrid, 8, 0.999), r(PolicyReactive, 0, 0.996), r(PolicyFlat, 10, 0.99)}, PolicyReactive, false},
	}
	for _, tc := range tests {
		_, base, ok := HybridAndBaseline(tc.results, 0.995)
		if ok != tc.wantOK || (tc.wantBase != "" && base.Name != tc.wantBase) {
			t.Errorf("%s: baseline %q, ok %v; want %q, %v", tc.name, base.Name, ok, tc.wantBase, tc.wantOK)
		}
	}
}
