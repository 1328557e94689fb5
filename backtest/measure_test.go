package backtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
)

type variant struct {
	name string
	set  func(*Config)
}

func measureTraces(t *testing.T) []Trace {
	nyc := loadTrace(t, "nyc_taxi.csv", 30*time.Minute)
	ali := loadTrace(t, "alibaba_sd_requests_hourly.csv", time.Hour)
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := datasets.BurstySynthetic().Generate(start, time.Minute, 28*24*60)
	burst := Trace{Name: "bursty", Start: s.Start, Step: s.Step, RPS: s.Values}
	return []Trace{nyc, ali, burst}
}

func baseFor(t *testing.T, tr Trace, sizing string) Config {
	cfg := DefaultConfig()
	c := &cfg.Planner
	c.Fleet.BootDelay = 10 * time.Minute
	if sizing == "" {
		sizing = planner.SizingErlangC
	}
	c.Fleet.MaxInstances = 1000
	c.Sizing = sizing
	sized, err := c.SizeForPeak(tr.Peak(), 20)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Planner = sized
	return cfg
}

func TestMeasure(t *testing.T) {
	if os.Getenv("MEASURE") == "" {
		t.Skip("set MEASURE")
	}
	sel := os.Getenv("MEASURE")
	policies := strings.Split(os.Getenv("POLICIES"), ",")
	if policies[0] == "" {
		policies = []string{PolicyHybrid}
	}
	variants := measureVariants()
	for _, tr := range measureTraces(t) {
		if sel != "all" && !strings.Contains(tr.Name, sel) {
			continue
		}
		mid := tr.Start.Add(tr.End().Sub(tr.Start) / 2).Truncate(24 * time.Hour)
		var b *bench
		sizing := ""
		for _, v := range variants {
			if only := os.Getenv("VARIANTS"); only != "" && !strings.Contains(only, v.name) {
				continue
			}
			probe := baseFor(t, tr, planner.SizingErlangC)
			v.set(&probe)
			if b == nil || probe.Planner.Sizing != sizing || probe.Forecast.IntervalLevel != b.cfg.Forecast.IntervalLevel {
				sizing = probe.Planner.Sizing
				var err error
				pc := baseFor(t, tr, sizing)
				pc.Forecast.IntervalLevel = probe.Forecast.IntervalLevel
				if b, err = prepare(context.Background(), tr, pc, true); err != nil {
					t.Fatal(err)
				}
			}
			cfg := baseFor(t, tr, sizing)
			cfg = cfg.withDefaults(tr)
			v.set(&cfg)
			for _, win := range []struct {
				name        string
				from, until time.Time
			}{{"all", time.Time{}, time.Time{}}, {"1st", time.Time{}, mid}, {"2nd", mid, time.Time{}}} {
				if w := os.Getenv("WINDOWS"); w != "" && !strings.Contains(w, win.name) {
					continue
				}
				c := cfg
				c.ScoreFrom, c.ScoreUntil = win.from, win.until
				rep, err := b.run(context.Background(), policies, c)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rep.Policies {
					fmt.Printf("%-8s %-28s %-4s %-10s cost %6.1f%% x%5.2f orc  SLO %8.4f%%  afterD1 %8.4f%%  p99w %6.1f  GPUh %9.1f act %5d q=%v\n",
						shortName(tr.Name), v.name, win.name, r.Name, 100*r.CostVsStatic, r.CostVsOracle, 100*r.SLOAttainment,
						100*r.SLOAttainmentAfterWarmUp, r.P99WaitS, r.GPUHours, r.Actions, r.ForecastMinutes)
				}
			}
		}
	}
}

func shortName(s string) string {
	if i := strings.IndexAny(s, "_."); i > 0 {
		return s[:i]
	}
	return s
}

// steps are the changes, applied cumulatively from the old policies.
var steps = []struct {
	name string
	set  func(*Config)
}{
	{"0-before", func(c *Config) {
		p := &c.Planner
		p.Sizing = planner.SizingUtilisation
		p.SLO.Quantile, p.ForecastQuantile = 0.99, 0.99
		p.Calibration.Off = true
		p.Bounds.FromInterval = true
		p.Bounds.PeakHeadroom = -1
		p.Bounds.NoWarmUpPeak = true
		p.Bounds.WarmUpWidening = 1
		p.Reactive.ReturnToPlanAfter = -1
		p.Reactive.IgnoreSLO = true
		c.Forecast.IntervalLevel = 0.98
	}},
	{"1-slo995", func(c *Config) {
		c.Planner.SLO.Quantile, c.Planner.ForecastQuantile = 0.995, 0.995
		c.Forecast.IntervalLevel = 0.99
	}},
	{"2-erlangc", func(c *Config) { c.Planner.Sizing = planner.SizingErlangC }},
	{"2b-slo-rule", func(c *Config) { c.Planner.Reactive.IgnoreSLO = false }},
	{"3-calibrated", func(c *Config) { c.Planner.ForecastQuantile = 0.9; c.Planner.Calibration.Off = false }},
	{"4-slot-errors", func(c *Config) { c.Planner.Bounds.FromInterval = false; c.Forecast.IntervalLevel = 0.8 }},
	{"5-peak-cap", func(c *Config) { c.Planner.Bounds.PeakHeadroom = 0 }},
	{"6-return", func(c *Config) { c.Planner.Reactive.ReturnToPlanAfter = 0 }},
	{"7-warmup", func(c *Config) { c.Planner.Bounds.NoWarmUpPeak = false; c.Planner.Bounds.WarmUpWidening = 0 }},
}

// ablations are the defaults with one change undone each.
var ablations = []variant{
	{"D-defaults", func(c *Config) {}},
	{"D-no-calibration", func(c *Config) { c.Planner.Calibration.Off = true }},
	{"D-no-slot-errors", func(c *Config) { c.Planner.Bounds.FromInterval = true }},
	{"D-no-peak-cap", func(c *Config) { c.Planner.Bounds.PeakHeadroom = -1 }},
	{"D-no-return", func(c *Config) { c.Planner.Reactive.ReturnToPlanAfter = -1 }},
	{"D-no-warmup", func(c *Config) { c.Planner.Bounds.NoWarmUpPeak = true; c.Planner.Bounds.WarmUpWidening = 1 }},
	{"D-no-slo-rule", func(c *Config) { c.Planner.Reactive.IgnoreSLO = true }},
	{"D-utilisation", func(c *Config) { c.Planner.Sizing = planner.SizingUtilisation }},
}

func measureVariants() []variant {
	if os.Getenv("ABLATE") != "" {
		return ablations
	}
	var out []variant
	for k := range steps {
		out = append(out, variant{name: steps[k].name, set: func(c *Config) {
			for _, s := range steps[:k+1] {
				s.set(c)
			}
		}})
	}
	return out
}

// diagPolicy wraps the hybrid and prints the calibrated quantile per day.
type diagPolicy struct {
	*hybridPolicy
	day int
}

func (d *diagPolicy) decide(now time.Time, obs planner.Observation, ok bool, current int) planner.Step {
	st := d.hybridPolicy.decide(now, obs, ok, current)
	if day := int(now.Sub(d.plans.start).Hours() / 24); day != d.day {
		d.day = day
		fmt.Printf("day %3d %s q=%.5f level=%s\n", day, now.Format("Mon 01-02"), d.ctl.Quantile(), d.ctl.Level())
	}
	return st
}

func TestDiag(t *testing.T) {
	sel := os.Getenv("DIAG")
	if sel == "" {
		t.Skip("set DIAG")
	}
	for _, tr := range measureTraces(t) {
		if !strings.Contains(tr.Name, sel) {
			continue
		}
		cfg := baseFor(t, tr, planner.SizingErlangC)
		b, err := prepare(context.Background(), tr, cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := b.newPolicy(PolicyHybrid, b.cfg)
		res, err := simulate(context.Background(), tr, b.cfg, "hybrid", 1, &diagPolicy{hybridPolicy: p.(*hybridPolicy), day: -1})
		if err != nil {
			t.Fatal(err)
		}
		perDay := map[int][4]float64{}
		for _, cp := range res.Capacity {
			d := int(cp.At.Sub(tr.Start).Hours() / 24)
			v := perDay[d]
			v[0] += cp.Underprovisioned.Minutes()
			v[1] += cp.Billed
			v[2] += cp.Requests
			v[3] += cp.Late
			perDay[d] = v
		}
		for d := 0; d < len(perDay); d++ {
			fmt.Printf("day %3d under %5.0f min billed %6.0f requests %9.0f late %8.1f (%.3f%%)\n", d, perDay[d][0], perDay[d][1], perDay[d][2], perDay[d][3], 100*perDay[d][3]/perDay[d][2])
		}
		fmt.Printf("SLO %.4f after %.4f cost %.3f\n", res.SLOAttainment, res.SLOAttainmentAfterWarmUp, res.Cost)
	}
}

// TestTune searches the defaults one knob at a time on the first half of
// each trace (the second half is never scored): the cheapest setting, by
// mean cost relative to the oracle, whose hybrid reaches 99.5% after its
// first day on every trace.
func TestTune(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip("set TUNE")
	}
	type prepared struct {
		b   *bench
		mid time.Time
	}
	var benches []prepared
	for _, tr := range measureTraces(t) {
		b, err := prepare(context.Background(), tr, baseFor(t, tr, planner.SizingErlangC), true)
		if err != nil {
			t.Fatal(err)
		}
		benches = append(benches, prepared{b, tr.Start.Add(tr.End().Sub(tr.Start) / 2).Truncate(24 * time.Hour)})
	}
	knobs := []struct {
		name   string
		values []float64
		set    func(*Config, float64)
	}{
		{"rate", []float64{0.0001, 0.0002, 0.0004, 0.0008}, func(c *Config, v float64) { c.Planner.Calibration.Rate = v }},
		{"start_q", []float64{0.8, 0.9, 0.95}, func(c *Config, v float64) { c.Planner.ForecastQuantile = v }},
		{"spread", []float64{-1, 1, 2}, func(c *Config, v float64) { c.Planner.Bounds.SlotSpread = int(v) }},
		{"min_errors", []float64{3, 6, 12}, func(c *Config, v float64) { c.Planner.Bounds.MinErrors = int(v) }},
		{"headroom", []float64{1.0, 1.1, 1.25}, func(c *Config, v float64) { c.Planner.Bounds.PeakHeadroom = v }},
		{"return_min", []float64{2, 5, 10}, func(c *Config, v float64) {
			c.Planner.Reactive.ReturnToPlanAfter = time.Duration(v) * time.Minute
		}},
		{"widening", []float64{1.5, 2, 3}, func(c *Config, v float64) { c.Planner.Bounds.WarmUpWidening = v }},
	}
	chosen := map[string]float64{"rate": 0.0002, "start_q": 0.9, "spread": 1, "min_errors": 6, "headroom": 1.1, "return_min": 5, "widening": 2}
	score := func(sel map[string]float64) (float64, bool, string) {
		total, ok := 0.0, true
		var line []string
		for _, p := range benches {
			c := p.b.cfg
			for _, k := range knobs {
				k.set(&c, sel[k.name])
			}
			c.ScoreUntil = p.mid
			rep, err := p.b.run(context.Background(), []string{PolicyHybrid}, c)
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Policies[0]
			total += r.CostVsOracle
			ok = ok && r.SLOAttainmentAfterWarmUp >= 0.995
			line = append(line, fmt.Sprintf("%s %.3fx %.2f%% %.3f%%", shortName(rep.Trace), r.CostVsOracle, 100*r.CostVsStatic, 100*r.SLOAttainmentAfterWarmUp))
		}
		return total / float64(len(benches)), ok, strings.Join(line, " | ")
	}
	for round := range 2 {
		for _, k := range knobs {
			best, bestScore := chosen[k.name], 0.0
			for _, v := range k.values {
				sel := map[string]float64{}
				for n, x := range chosen {
					sel[n] = x
				}
				sel[k.name] = v
				s, ok, line := score(sel)
				fmt.Printf("round %d %-10s %-7g mean %.3fx ok=%v  %s\n", round, k.name, v, s, ok, line)
				if ok && (bestScore == 0 || s < bestScore-1e-9) {
					best, bestScore = v, s
				}
			}
			chosen[k.name] = best
			fmt.Printf("round %d chose %s = %g\n", round, k.name, best)
		}
	}
	fmt.Println("chosen", chosen)
}
