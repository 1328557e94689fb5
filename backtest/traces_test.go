package backtest

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
)

// datasetsDir is where the shared traces live: $PREWARM_DATASETS, or
// ../shared/datasets relative to the repository root.
func datasetsDir() string {
	if d := os.Getenv("PREWARM_DATASETS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "datasets")
}

// loadTrace reads a counts-per-row trace at the given step and turns it
// into requests/s, as `forecaster backtest --counts --step` does.
func loadTrace(t testing.TB, name string, step time.Duration) Trace {
	t.Helper()
	path := filepath.Join(datasetsDir(), "traces", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("trace %s not available (set PREWARM_DATASETS to the datasets folder): %v", path, err)
	}
	return loadTraceStep(t, path, step)
}

// loadTraceFile reads a counts-per-row trace at its own step.
func loadTraceFile(t testing.TB, path string) Trace { return loadTraceStep(t, path, 0) }

func loadTraceStep(t testing.TB, path string, step time.Duration) Trace {
	t.Helper()
	name := filepath.Base(path)
	s, err := datasets.LoadCSV(path, datasets.CSVOptions{Counts: true, Step: step})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	s = s.PerSecond()
	return Trace{Name: name, Start: s.Start, Step: s.Step, RPS: s.Values}
}

// burstyTrace is four weeks of per-minute synthetic demand with bursts
// (datasets.BurstySynthetic): 4-5× for 5-12 minutes about every 2 hours,
// jittered by ±30 minutes.
func burstyTrace() Trace { return burstyTraceSeed(datasets.BurstySynthetic().Seed) }

// burstyTraceSeed is burstyTrace drawn with another seed: other noise and
// other burst times and sizes.
func burstyTraceSeed(seed uint64) Trace {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	g := datasets.BurstySynthetic()
	g.Seed = seed
	s := g.Generate(start, time.Minute, 28*24*60)
	return Trace{Name: "synthetic-bursts", Start: s.Start, Step: s.Step, RPS: s.Values}
}

// barConfig is `forecaster backtest --peak-instances N --boot 10m --slo
// 10s` with every other flag at its default: Erlang-C sizing, each
// instance sized so that the trace's peak needs staticPeak of them.
func barConfig(tr Trace, staticPeak int) Config {
	cfg := DefaultConfig()
	c := &cfg.Planner
	c.Fleet.BootDelay = 10 * time.Minute
	c.Fleet.MaxInstances = 1000
	c.Sizing = planner.SizingErlangC
	sized, err := c.SizeForPeak(tr.Peak(), staticPeak)
	if err != nil {
		panic(err) // the test traces have a peak
	}
	cfg.Planner = sized
	return cfg
}

// The acceptance bars of the recorded traces, with the documented command (`forecaster
// backtest --input F --counts --step S --peak-instances 20 --boot 10m
// --slo 10s --frontier`) and every default untouched:
//   - the default hybrid serves at least 99.5% of requests within the SLO
//     from the second day on;
//   - it costs at most 0.9× the cheapest reactive setting of the frontier
//     that reaches 99.5% (where one does);
//   - on NYC taxi it costs at most twice the oracle;
//   - the GPU-hours are Σ billed × step of its capacity rows, its demand
//     the trace's.
func TestBarNYCTaxi(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 7 months at one-minute ticks, 1,700 refits and the reactive frontier (~1 min)")
	}
	checkBar(t, loadTrace(t, "nyc_taxi.csv", 30*time.Minute), 2)
}

func TestBarAlibabaStableDiffusion(t *testing.T) {
	checkBar(t, loadTrace(t, "alibaba_sd_requests_hourly.csv", time.Hour), 0)
}

func TestBarSyntheticBursts(t *testing.T) {
	if testing.Short() {
		t.Skip("replays four weeks per minute and the reactive frontier (~30 s)")
	}
	checkBar(t, burstyTrace(), 0)
}

// checkBar asserts the bars; maxVsOracle 0 states the ratio without a bar.
func checkBar(t *testing.T, tr Trace, maxVsOracle float64) {
	ctx := context.Background()
	b, err := prepare(ctx, tr, barConfig(tr, 20), true)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := b.run(ctx, Policies(), b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: static %d instances of %.4g req/s (%.3g s a request)", tr.Name, rep.Static, b.cfg.Planner.Fleet.RPS(), b.cfg.serviceTime().Seconds())
	for _, r := range rep.Policies {
		t.Logf("%-10s GPU-h %9.1f  cost x%.3f static x%.2f oracle  SLO %.4f%% (after day 1 %.4f%%)  p99 wait %5.1fs  actions %5d",
			r.Name, r.GPUHours, r.CostVsStatic, r.CostVsOracle, 100*r.SLOAttainment, 100*r.SLOAttainmentAfterWarmUp, r.P99WaitS, r.Actions)
	}
	if rep.Static != 20 {
		t.Errorf("static peak needs %d instances, want 20", rep.Static)
	}
	hybrid := result(t, rep, PolicyHybrid)
	if hybrid.SLOAttainmentAfterWarmUp < 0.995 {
		t.Errorf("hybrid serves %.4f%% within the SLO from day 2, want at least 99.5%%", 100*hybrid.SLOAttainmentAfterWarmUp)
	}
	if maxVsOracle > 0 && hybrid.CostVsOracle > maxVsOracle {
		t.Errorf("hybrid costs %.2f× the oracle, want at most %v×", hybrid.CostVsOracle, maxVsOracle)
	}
	t.Logf("hybrid costs %.2f× the oracle", hybrid.CostVsOracle)

	// The reactive frontier: the cheapest setting reaching 99.5%.
	best := math.Inf(1)
	for _, knobs := range reactiveGrid() {
		c := b.cfg
		for _, k := range knobs {
			k.set(&c)
		}
		p, err := b.newPolicy(PolicyReactive, c)
		if err != nil {
			t.Fatal(err)
		}
		r, err := simulate(ctx, tr, c, PolicyReactive, 7, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.SLOAttainment >= 0.995 {
			best = math.Min(best, r.Cost)
		}
	}
	if math.IsInf(best, 1) {
		t.Logf("no reactive setting of the frontier reaches 99.5%%")
	} else {
		t.Logf("cheapest reactive setting reaching 99.5%%: x%.3f of static; hybrid x%.3f (%.2f of it)",
			best/rep.static.Cost, hybrid.CostVsStatic, hybrid.Cost/best)
		if hybrid.Cost > 0.9*best {
			t.Errorf("hybrid costs %.3f of the cheapest reactive setting reaching 99.5%%, want at most 0.9", hybrid.Cost/best)
		}
	}

	// GPU-hours from the capacity rows, demand from the trace.
	billed := 0.0
	for _, p := range hybrid.Capacity {
		billed += round6(p.Billed) * tr.Step.Hours()
	}
	if math.Abs(billed-hybrid.GPUHours) > 1e-3*hybrid.GPUHours {
		t.Errorf("Σ billed × step = %.3f GPU-h, the result says %.3f", billed, hybrid.GPUHours)
	}
	trace := 0.0
	for _, v := range tr.RPS {
		if !math.IsNaN(v) {
			trace += v * tr.Step.Seconds()
		}
	}
	if math.Abs(hybrid.Requests-trace) > 1e-9*trace || math.Abs(rep.TraceRequests-trace) > 1e-9*trace {
		t.Errorf("hybrid saw %.0f requests, the report %.0f, the trace holds %.0f", hybrid.Requests, rep.TraceRequests, trace)
	}
}
