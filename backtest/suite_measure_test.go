package backtest

import (
	"context"

	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSuiteMeasure runs the policy suite on the shared traces (and, with
// PREWARM_SUITE_EXTRA, on every CSV of another folder) and prints one line
// per trace. It skips unless PREWARM_SUITE is set:
//
//	PREWARM_SUITE=1 go test ./backtest -run TestSuiteMeasure -v -timeout 60m
//
// PREWARM_SUITE may name traces (comma-separated substrings) to run only
// those.
func TestSuiteMeasure(t *testing.T) {
	sel := os.Getenv("PREWARM_SUITE")
	if sel == "" {
		t.Skip("set PREWARM_SUITE: replays every trace many times")
	}
	cases := suiteCases(t, sel)
	if dir := os.Getenv("PREWARM_SUITE_EXTRA"); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
		for _, f := range files {
			if tr := loadTraceFile(t, f); sel == "1" || sel == "all" || containsAny(tr.Name, strings.Split(sel, ",")) {
				cases = append(cases, SuiteCase{Trace: tr, Config: barConfig(tr, 20)})
			}
		}
	}
	start := time.Now()
	rep, err := RunSuite(context.Background(), cases, func(done int, e SuiteEntry) {
		fmt.Println(suiteLine(e), time.Since(start).Round(time.Second))
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("worst %s %.3fx  geomean %.3fx  missed %v\n", rep.Worst, rep.WorstVsBaseline, rep.GeoMeanVsBaseline, rep.MissedSLO)
}

// suiteCases are the shared traces and the generator seeds (56 days),
// those whose names contain one of sel's comma-separated parts ("1" or
// "all": every one).
func suiteCases(t *testing.T, sel string) []SuiteCase {
	var cases []SuiteCase
	add := func(tr Trace) {
		if sel != "1" && sel != "all" && !containsAny(tr.Name, strings.Split(sel, ",")) {
			return
		}
		cases = append(cases, SuiteCase{Trace: tr, Config: barConfig(tr, 20)})
	}
	for _, name := range SuiteFiles {
		add(loadTrace(t, name, 0))
	}
	for _, tr := range SuiteSynthetic([]uint64{1, 2, 3}, 56) {
		add(tr)
	}
	return cases
}

// TestLOTOMeasure runs the leave-one-trace-out protocol over the tuner's
// defaults on the suite's shared traces and generator seeds; it skips
// unless PREWARM_LOTO is set (it may name traces as PREWARM_SUITE does):
//
//	PREWARM_LOTO=1 go test ./backtest -run TestLOTOMeasure -v -timeout 120m
func TestLOTOMeasure(t *testing.T) {
	sel := os.Getenv("PREWARM_LOTO")
	if sel == "" {
		t.Skip("set PREWARM_LOTO: replays every trace's first half for each setting")
	}
	grid := DefaultsGrid()
	start := time.Now()
	rep, err := LeaveOneTraceOut(context.Background(), suiteCases(t, sel), grid, func(s string) {
		fmt.Println(time.Since(start).Round(time.Second), s)
	})
	if err != nil {
		t.Fatal(err)
	}
	for g, name := range rep.Grid {
		line := fmt.Sprintf("%-40s", name)
		loss := 0.0
		for _, e := range rep.Entries {
			line += fmt.Sprintf(" %5.3f/%6.3f%%", e.FirstHalf[g].VsBaseline, 100*e.FirstHalf[g].SLO)
			loss += e.FirstHalf[g].Loss
		}
		fmt.Printf("%s  loss %.3f\n", line, loss)
	}
	fmt.Println("defaults:", rep.Defaults)
	for _, e := range rep.Entries {
		fmt.Println(e.Chosen, "|", suiteLine(e.Entry))
	}
	fmt.Printf("LOTO worst %s %.3fx  geomean %.3fx  missed %v\n", rep.Worst, rep.WorstVsBaseline, rep.GeoMeanVsBaseline, rep.MissedSLO)
}

func suiteLine(e SuiteEntry) string {
	h := e.Hybrid
	return fmt.Sprintf("%-32s hybrid %5.1f%% %7.3f%% | base %-8s %5.1f%% %7.3f%% (react %5.1f%% %7.3f%%, flat %s %5.1f%% %7.3f%%) | hind react %5.1f%% %7.3f%% flat %5.1f%% | oracle %5.1f%% | x%.3f base x%.3f orc %v",
		shortTrace(e.Trace), 100*h.CostVsStatic, 100*h.SLOAttainment, e.Baseline.Policy, 100*e.Baseline.Scored.CostVsStatic, 100*e.Baseline.Scored.SLOAttainment,
		100*e.Reactive.Scored.CostVsStatic, 100*e.Reactive.Scored.SLOAttainment, e.Flat.Settings["instances"], 100*e.Flat.Scored.CostVsStatic, 100*e.Flat.Scored.SLOAttainment,
		100*e.HindsightReactive.Scored.CostVsStatic, 100*e.HindsightReactive.Scored.SLOAttainment, 100*e.HindsightFlat.Scored.CostVsStatic,
		100*e.Oracle.CostVsStatic, e.VsBaseline, e.VsOracle, map[bool]string{true: "ok", false: "SLO-MISS"}[e.MeetsSLO]) + " " + topMinutes(h.CandidateMinutes) +
		fmt.Sprintf(" {react1st %v, react2nd %v}", e.Reactive.Settings, e.HindsightReactive.Settings)
}

// topMinutes lists the candidates followed longest, with their shares.
func topMinutes(m map[string]float64) string {
	total := 0.0
	type kv struct {
		k string
		v float64
	}
	var l []kv
	for k, v := range m {
		total += v
		l = append(l, kv{k, v})
	}
	slices.SortFunc(l, func(a, b kv) int { return int(b.v - a.v) })
	var out []string
	for i, e := range l {
		if i >= 3 {
			break
		}
		out = append(out, fmt.Sprintf("%s %.0f%%", e.k, 100*e.v/total))
	}
	return strings.Join(out, ",")
}

func shortTrace(s string) string { return strings.TrimSuffix(s, ".csv") }

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
