package backtest

import (
	"bytes"
	"context"
	"encoding/csv"
	"maps"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/seasonal"
)

// The actuator limits serve applies hold in the backtest: no change moves
// more than max_step instances, and changes are at least min_interval
// apart.
func TestSafeLimitsApply(t *testing.T) {
	tr := squareWave(2, 10, 95)
	cfg := testConfig()
	cfg.Planner.Fleet.MaxStep, cfg.Planner.Fleet.MinInterval = 2, 10*time.Minute
	rep, err := Run(context.Background(), tr, cfg, PolicyReactive, PolicyOracle)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{PolicyReactive, PolicyOracle} {
		r := result(t, rep, name)
		prev := startFleet(tr)
		var last time.Time
		for _, d := range r.Decisions {
			if diff := d.Desired - prev; diff > 2 || diff < -2 {
				t.Errorf("%s: %s %d → %d, more than max_step 2", name, d.At.Format("15:04"), prev, d.Desired)
			}
			if !last.IsZero() && d.At.Sub(last) < 10*time.Minute {
				t.Errorf("%s: changes at %s and %s, closer than min_interval", name, last.Format("15:04"), d.At.Format("15:04"))
			}
			prev, last = d.Desired, d.At
		}
		if len(r.Decisions) == 0 {
			t.Errorf("%s made no change", name)
		}
	}
	// Unlimited, the oracle jumps by more than 2 at 08:50.
	free, err := Run(context.Background(), tr, testConfig(), PolicyOracle)
	if err != nil {
		t.Fatal(err)
	}
	jumped := false
	prev := startFleet(tr)
	for _, d := range result(t, free, PolicyOracle).Decisions {
		jumped = jumped || d.Desired-prev > 2
		prev = d.Desired
	}
	if !jumped {
		t.Error("without limits the oracle never steps by more than 2: the test is not sensitive")
	}
}

// startFleet is the fleet a testConfig run starts with: the first step's
// need at 10 req/s an instance.
func startFleet(tr Trace) int { return int(math.Ceil(tr.RPS[0] / 10)) }

// The oracle knows the rise at 09:00 and has it ready, a boot delay ahead:
// it is never short where reactive is; flat is the smallest fixed fleet
// that reaches the SLO, one fewer does not.
func TestOracleAndFlat(t *testing.T) {
	tr := squareWave(2, 10, 45)
	cfg := testConfig()
	cfg.Planner.SLO.Quantile = 0.99
	rep, err := Run(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := result(t, rep, PolicyOracle)
	if o.UnderprovisionedMinutes != 0 || o.SLOAttainment < 0.9999 || o.CostVsOracle != 1 {
		t.Errorf("oracle: short %v min, SLO %v, x%v oracle; want never short", o.UnderprovisionedMinutes, o.SLOAttainment, o.CostVsOracle)
	}
	for _, r := range rep.Policies {
		if r.Cost < o.Cost*(1-1e-9) && r.SLOAttainment >= o.SLOAttainment {
			t.Errorf("%s costs %.1f at SLO %v, less than the oracle's %.1f at %v", r.Name, r.Cost, r.SLOAttainment, o.Cost, o.SLOAttainment)
		}
	}
	f := result(t, rep, PolicyFlat)
	if f.SLOAttainment < 0.99 || rep.Flat != f.Instances || f.Instances > rep.Static {
		t.Errorf("flat %d instances: SLO %v, want ≥ 0.99 with at most static's %d", f.Instances, f.SLOAttainment, rep.Static)
	}
	b, err := prepare(context.Background(), tr, cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	fewer, err := simulate(context.Background(), tr, b.cfg, "fewer", 9, staticPolicy{n: f.Instances - 1})
	if err != nil {
		t.Fatal(err)
	}
	if fewer.SLOAttainment >= 0.99 {
		t.Errorf("%d instances reach %v too: flat is not the smallest", f.Instances-1, fewer.SLOAttainment)
	}
}

// Steps with no data: no demand, written empty, never short, and the
// policies hold through them (the service would find no sample).
func TestGapsAreNotDemand(t *testing.T) {
	tr := squareWave(2, 10, 45)
	for i := 60; i < 64; i++ { // 06:00-08:00 on day 2
		tr.RPS[i] = math.NaN()
	}
	rep, err := Run(context.Background(), tr, testConfig(), PolicyReactive, PolicyHybrid)
	if err != nil {
		t.Fatal(err)
	}
	want := (10*32+45*16)*3600.0 - 10*4*1800 // two days, less 2 h at 10 req/s
	if math.Abs(rep.TraceRequests-want) > 1e-6*want {
		t.Errorf("trace requests %v, want %v", rep.TraceRequests, want)
	}
	for _, name := range []string{PolicyReactive, PolicyHybrid} {
		r := result(t, rep, name)
		if math.Abs(r.Requests-want) > 1e-6*want {
			t.Errorf("%s: %v requests, want %v", name, r.Requests, want)
		}
		var buf bytes.Buffer
		if err := WriteCapacityCSV(&buf, r); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range rows[1:] {
			gap := i >= 60 && i < 64
			if (row[1] == "") != gap {
				t.Errorf("%s row %d (%s): demand %q", name, i, row[0], row[1])
			}
			if gap && r.Capacity[i].Underprovisioned != 0 {
				t.Errorf("%s: short %v in a gap", name, r.Capacity[i].Underprovisioned)
			}
		}
		for _, d := range r.Decisions {
			if d.At.After(tr.Start.Add(30*time.Hour+2*time.Minute)) && d.At.Before(tr.Start.Add(32*time.Hour)) && d.Desired < 1 {
				t.Errorf("%s scaled to %d during the gap", name, d.Desired)
			}
		}
	}
}

// GPU-hours are Σ billed × step of the capacity CSV, drains included: a
// scale-in bills the drain, and no drain bills less.
func TestBilledColumnAndDrains(t *testing.T) {
	tr := squareWave(2, 10, 45)
	run := func(drain time.Duration) Result {
		cfg := testConfig()
		cfg.Drain = drain
		rep, err := Run(context.Background(), tr, cfg, PolicyReactive)
		if err != nil {
			t.Fatal(err)
		}
		return result(t, rep, PolicyReactive)
	}
	drained, none := run(5*time.Minute), run(-1)
	for _, r := range []Result{drained, none} {
		var buf bytes.Buffer
		if err := WriteCapacityCSV(&buf, r); err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n")[1:] {
			f := strings.Split(line, ",")
			b, _ := strconv.ParseFloat(f[4], 64)
			sum += b * 0.5
		}
		if math.Abs(sum-r.GPUHours) > 1e-6*r.GPUHours {
			t.Errorf("Σ billed × step = %v h, GPU-hours %v", sum, r.GPUHours)
		}
	}
	// Each scale-in of the reactive run drains 5 minutes.
	var ins int
	for i, d := range drained.Decisions {
		if i > 0 && d.Desired < drained.Decisions[i-1].Desired {
			ins += drained.Decisions[i-1].Desired - d.Desired
		}
	}
	if got, want := drained.GPUHours-none.GPUHours, float64(ins)*5/60; ins == 0 || math.Abs(got-want) > 0.2*want {
		t.Errorf("drains billed %.3f h more for %d removals, want about %.3f", got, ins, want)
	}
}

// The scored window: figures of two halves add up to the whole.
func TestScoreWindowsAddUp(t *testing.T) {
	tr := squareWave(4, 10, 45)
	mid := tr.Start.Add(48 * time.Hour)
	run := func(from, until time.Time) Result {
		cfg := testConfig()
		cfg.ScoreFrom, cfg.ScoreUntil = from, until
		rep, err := Run(context.Background(), tr, cfg, PolicyReactive)
		if err != nil {
			t.Fatal(err)
		}
		return result(t, rep, PolicyReactive)
	}
	all, first, second := run(time.Time{}, time.Time{}), run(time.Time{}, mid), run(mid, time.Time{})
	for _, c := range []struct {
		name        string
		whole, a, b float64
	}{{"requests", all.Requests, first.Requests, second.Requests}, {"GPU-hours", all.GPUHours, first.GPUHours, second.GPUHours},
		{"cost", all.Cost, first.Cost, second.Cost}, {"short minutes", all.UnderprovisionedMinutes, first.UnderprovisionedMinutes, second.UnderprovisionedMinutes}} {
		if math.Abs(c.a+c.b-c.whole) > 1e-6*math.Max(1, c.whole) {
			t.Errorf("%s: %v + %v ≠ %v", c.name, c.a, c.b, c.whole)
		}
	}
	if first.Requests == 0 || second.Requests == 0 {
		t.Error("an empty half")
	}
}

// Metrics arrive one collection interval late: without the lag the first
// scale-out of TestReactiveLagsARise comes a minute earlier.
func TestMetricsLag(t *testing.T) {
	tr := squareWave(1, 8, 45)
	first := func(lag time.Duration) time.Time {
		cfg := testConfig()
		cfg.MetricsLag = lag
		rep, err := Run(context.Background(), tr, cfg, PolicyReactive)
		if err != nil {
			t.Fatal(err)
		}
		return result(t, rep, PolicyReactive).Decisions[0].At
	}
	if a, b := first(-1), first(0); b.Sub(a) != time.Minute {
		t.Errorf("first scale-out at %s without the lag and %s with one tick, want a minute apart", a.Format("15:04"), b.Format("15:04"))
	}
}

// The frontier reports, per policy and target, a setting it tried: the
// cheapest that reaches the target, or, when none does, the closest.
func TestFrontierPicksTheCheapestThatReaches(t *testing.T) {
	tr := squareWave(5, 10, 45)
	cfg := testConfig()
	cfg.Forecast.NewModel = func(periods []int) model.Forecaster { return seasonal.SeasonalNaive{Period: 48} }
	targets := []float64{0.99, 0.999}
	rep, f, err := RunFrontier(context.Background(), tr, cfg, targets, PolicyHybrid, PolicyFlat)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Policies) != 2 || rep.Policies[1].Name != PolicyFlat || rep.Flat == 0 {
		t.Fatalf("report %+v", rep.Policies)
	}
	if len(f.Points) != 5*len(targets) {
		t.Fatalf("%d points, want one per policy (reactive, predictive, hybrid, flat, oracle) and target", len(f.Points))
	}
	for _, p := range f.Points {
		if p.Reached != (p.SLOAttainment >= p.SLOTarget) {
			t.Errorf("%+v: reached says otherwise", p)
		}
		for _, tr := range f.Trials {
			if tr.Policy != p.Policy || p.Policy == PolicyFlat {
				continue
			}
			if p.Reached && tr.SLOAttainment >= p.SLOTarget && tr.CostVsStatic < p.CostVsStatic-1e-12 {
				t.Errorf("%s at %v: %+v reaches it cheaper than the reported %v", p.Policy, p.SLOTarget, tr, p.CostVsStatic)
			}
			if !p.Reached && tr.SLOAttainment > p.SLOAttainment {
				t.Errorf("%s at %v: none reaches it, but %+v comes closer than %v", p.Policy, p.SLOTarget, tr, p.SLOAttainment)
			}
		}
	}
	reactive := 0
	for _, tr := range f.Trials {
		if tr.Policy == PolicyReactive {
			reactive++
		}
	}
	if reactive != len(reactiveGrid()) {
		t.Errorf("%d reactive trials, want the grid's %d", reactive, len(reactiveGrid()))
	}
}

// A frontier's trial skips the wait and latency distributions, which only
// its P99s read: its cost and SLO attainment are exactly those of the same
// setting replayed in full.
func TestFrontierTrialsCountAsFullRuns(t *testing.T) {
	tr := squareWave(5, 10, 45)
	cfg := testConfig()
	frep, f, err := RunFrontier(context.Background(), tr, cfg, []float64{0.99}, PolicyReactive)
	if err != nil {
		t.Fatal(err)
	}
	staticCost := frep.static.Cost // the trials are priced against it
	checked := 0
	for _, knobs := range reactiveGrid()[:4] {
		c := cfg
		settings := map[string]string{}
		for _, k := range knobs {
			k.set(&c)
			settings[k.name] = k.value
		}
		rep, err := Run(context.Background(), tr, c, PolicyReactive)
		if err != nil {
			t.Fatal(err)
		}
		full := result(t, rep, PolicyReactive)
		if full.P99WaitS == 0 && full.P99LatencyS == 0 {
			t.Fatalf("%v: the full run has no P99s to leave out", settings)
		}
		for _, trial := range f.Trials {
			if trial.Policy != PolicyReactive || !maps.Equal(trial.Settings, settings) {
				continue
			}
			checked++
			if want := full.Cost / staticCost; trial.CostVsStatic != want || trial.SLOAttainment != full.SLOAttainment {
				t.Errorf("%v: trial %v of static at %v, full run %v at %v", settings, trial.CostVsStatic, trial.SLOAttainment, want, full.SLOAttainment)
			}
		}
	}
	if checked != 4 {
		t.Errorf("%d trials matched, want 4", checked)
	}
}
