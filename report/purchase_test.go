package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// flatConfig sizes one instance per request/s (utilisation sizing at
// 100%), so a rate's need is ⌈rate⌉.
func flatConfig() planner.Config {
	c := planner.DefaultConfig()
	c.Sizing = planner.SizingUtilisation
	c.TargetUtilisation = 1
	c.Fleet.RPSPerInstance = 1
	c.Fleet.MinInstances = 0
	c.Fleet.MaxInstances = 1000
	c.Prices = planner.Prices{OnDemandPerHour: 2.5, ReservedPerHour: 1.6, SpotPerHour: 1}
	return c
}

// certain returns a forecast of hours at each rate, without a band.
func certain(rates ...float64) Forecast {
	fc := Forecast{Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), Step: Duration(time.Hour)}
	for i, r := range rates {
		fc.Points = append(fc.Points, ForecastPoint{At: fc.Start.Add(time.Duration(i) * time.Hour),
			Mean: r, Lower80: r, Upper80: r, Lower95: r, Upper95: r})
	}
	return fc
}

// planOf is a plan asking for each forecast step's need.
func planOf(c planner.Config, fc Forecast) Plan {
	p := Plan{Start: fc.Start, End: fc.Start.Add(time.Duration(len(fc.Points)) * time.Hour)}
	for _, pt := range fc.Points {
		n := c.InstancesFor(pt.Mean)
		p.Changes = append(p.Changes, planner.Step{At: pt.At, Desired: n})
		p.Peak = max(p.Peak, n)
	}
	p.ExpectedRequests = 1
	return p
}

func TestQuantileRunsThroughTheBands(t *testing.T) {
	p := ForecastPoint{Mean: 10, Lower80: 8, Upper80: 13, Lower95: 5, Upper95: 16}
	for _, tc := range []struct{ z, want float64 }{
		{0, 10}, {z80, 13}, {-z80, 8}, {z95, 16}, {-z95, 5},
		{z80 / 2, 11.5},                 // halfway between the mean and U80
		{z95 + (z95 - z80), 19},         // beyond U95 at the last segment's slope
		{-4, 0},                         // never below zero
		{(z80 + z95) / 2, 14.5},         // halfway between U80 and U95
		{-(z80 + z95) / 2, 6.5},         // halfway between L95 and L80
		{-z95 - (z95-z80)/3, 5 - 3.0/3}, // below L95 at its slope
	} {
		if got := p.quantile(tc.z); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Q(%.3f) = %v, want %v", tc.z, got, tc.want)
		}
	}
}

// TestReservedBaselineRule: k* is the largest level needed at least r/p of
// the hours, and minimises C(k) = r·k·T + p·Σ E[(N−k)⁺]·Δt.
func TestReservedBaselineRule(t *testing.T) {
	c := flatConfig()
	// 10 hours at 5 req/s and 10 hours at 10: levels 1–5 busy all the
	// time, 6–10 half of it.
	rates := make([]float64, 20)
	for i := range rates {
		rates[i] = 5
		if i >= 10 {
			rates[i] = 10
		}
	}
	for _, tc := range []struct {
		name     string
		reserved float64
		want     int
	}{
		{"a reservation at 64% of on demand pays for the always-busy levels only", 1.6, 5},
		{"at 40% it pays for the half-busy levels too", 1.0, 10},
		{"at exactly 50% the half-busy levels break even: the smaller baseline", 1.25, 5},
		{"dearer than on demand: reserve nothing", 2.6, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			c.Prices.ReservedPerHour = tc.reserved
			fc := certain(rates...)
			rep := &Report{Forecast: fc, Plan: planOf(c, fc)}
			res, _, cost := advise(c, rep, 0.05)
			if res.Recommended != tc.want {
				t.Fatalf("k* = %d, want %d (levels %+v)", res.Recommended, tc.want, res.Levels)
			}
			// C(k) by hand, and k* its minimum.
			for _, l := range res.Levels {
				burst := 0.0
				for _, r := range rates {
					burst += math.Max(r-float64(l.Instances), 0)
				}
				want := tc.reserved*float64(l.Instances)*20 + 2.5*burst
				if math.Abs(l.ExpectedCost-want) > 1e-6 {
					t.Errorf("C(%d) = %v, want %v", l.Instances, l.ExpectedCost, want)
				}
				if l.ExpectedCost < res.Levels[res.Recommended].ExpectedCost-1e-9 {
					t.Errorf("C(%d) = %v is below C(k*=%d)", l.Instances, l.ExpectedCost, res.Recommended)
				}
			}
			if got := res.BreakEven; math.Abs(got-tc.reserved/2.5) > 1e-12 {
				t.Errorf("break-even %v", got)
			}
			// The plan is the need here: all on demand is 150 GPU-h.
			if math.Abs(cost.GPUHours-150) > 1e-9 || math.Abs(cost.AllOnDemand-375) > 1e-9 {
				t.Errorf("plan %v GPU-h at %v", cost.GPUHours, cost.AllOnDemand)
			}
		})
	}
}

// TestBusyShareFollowsTheBand: with a normal band, the busy share of level
// k is P(D > k−1) = 1 − Φ((k−1−μ)/σ), to the integration grid's precision.
func TestBusyShareFollowsTheBand(t *testing.T) {
	c := flatConfig()
	const mu, sigma = 20.0, 3.0
	fc := certain(mu, mu, mu)
	for i := range fc.Points {
		p := &fc.Points[i]
		p.Lower80, p.Upper80 = mu-z80*sigma, mu+z80*sigma
		p.Lower95, p.Upper95 = mu-z95*sigma, mu+z95*sigma
	}
	m := needDistribution(c, fc)
	for _, k := range []int{15, 18, 20, 21, 23, 26} {
		busy, _ := m.busyHours(k)
		want := 1 - 0.5*math.Erfc(-(float64(k-1)-mu)/sigma/math.Sqrt2)
		if got := busy / m.total; math.Abs(got-want) > 0.025 {
			t.Errorf("b_%d = %.3f, want %.3f", k, got, want)
		}
	}
	if _, burst := m.busyHours(0); math.Abs(burst/m.total-(mu+0.5)) > 0.1 {
		t.Errorf("E[N] = %.3f, want about %.1f (⌈D⌉ ≈ D + ½)", burst/m.total, mu+0.5)
	}
}

func TestSpotRule(t *testing.T) {
	for _, tc := range []struct {
		name         string
		spot, lambda float64
		boot         time.Duration
		peak         int
		wantLimit    int
		wantWhy      string
	}{
		{"no spot price", 0, 0.05, 10 * time.Minute, 20, 0, "no spot price is given"},
		{"spot with re-boots dearer than on demand", 2.49, 1, time.Hour, 20, 0, "spot costs 4.98 EUR an hour with its re-boots"},
		{"never interrupted: all burst", 1, 0, 10 * time.Minute, 20, 20, "all burst is on spot"},
		// ½·0.005·20 / (0.05·1/6) = 6
		{"capped by half the SLO's miss budget", 1, 0.05, 10 * time.Minute, 20, 6,
			"spot is cheaper (1.0083 EUR an hour with its re-boots); at most 6 instances run on it at a time"},
		// ½·0.005·4 / (0.05·1/6) = 1.2: one instance, and its verb singular
		{"capped at one instance", 1, 0.05, 10 * time.Minute, 4, 1, "at most 1 instance runs on it at a time"},
		// ½·0.005·20 / (0.5·1/6) = 0.6: not one instance
		{"frequent interruptions: none", 1, 0.5, 10 * time.Minute, 20, 0, "0.5 per spot instance-hour, 10 minutes each)"},
		{"one instance at the peak", 1, 0.05, 10 * time.Minute, 1, 0, "at the peak of 1 instance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := flatConfig()
			c.Prices.SpotPerHour = tc.spot
			c.Fleet.BootDelay = tc.boot
			sp := spotFor(c, Prices{Currency: "EUR"}, tc.lambda, tc.peak)
			if sp.limit != tc.wantLimit {
				t.Errorf("limit %d, want %d (%s)", sp.limit, tc.wantLimit, sp.why)
			}
			if !strings.Contains(sp.why, tc.wantWhy) {
				t.Errorf("why %q, want %q", sp.why, tc.wantWhy)
			}
			if want := tc.spot * (1 + tc.lambda*tc.boot.Hours()); math.Abs(sp.effective-want) > 1e-12 {
				t.Errorf("effective price %v, want %v", sp.effective, want)
			}
		})
	}
}

// TestBurstSplitOnThePlan: the spot layer is the instances just above the
// baseline, priced at the effective spot price; the rest on demand.
func TestBurstSplitOnThePlan(t *testing.T) {
	c := flatConfig()
	fc := certain(4, 8, 8, 4) // a plan of 4, 8, 8, 4 instances
	p := planOf(c, fc)
	cost, b := priceOnPlan(c, p, 4, spotPlan{limit: 3, effective: 1.2}, 0.1)
	// Above 4: 0, 4, 4, 0 → spot min(·, 3) = 6 GPU-h, on demand 2.
	if b.GPUHours != 8 || b.SpotGPUHours != 6 || b.OnDemandGPUHours != 2 || math.Abs(b.ExpectedInterruptions-0.6) > 1e-12 {
		t.Fatalf("burst %+v", b)
	}
	want := 4*4*1.6 + 6*1.2 + 2*2.5
	if math.Abs(cost.Recommended-want) > 1e-9 || math.Abs(cost.AllOnDemand-24*2.5) > 1e-9 ||
		math.Abs(cost.Saving-(60-want)) > 1e-9 {
		t.Errorf("cost %+v, want %.2f with the advice", cost, want)
	}
}

func TestExpectedFleetTopsUpThePlan(t *testing.T) {
	c := flatConfig()
	fc := certain(10, 10)
	p := planOf(c, fc)
	if got := expectedFleetHours(c, fc, p); math.Abs(got-20) > 1e-9 {
		t.Errorf("a certain forecast met by its plan: %v GPU-h, want 20", got)
	}
	// A band above the plan: the reactive share shows.
	for i := range fc.Points {
		fc.Points[i].Upper80, fc.Points[i].Upper95 = 14, 18
	}
	got := expectedFleetHours(c, fc, p)
	if !(got > 20) {
		t.Errorf("demand above the plan in its band: %v GPU-h, want more than 20", got)
	}
	// The same through advise: the hours above the plan priced on demand.
	rep := &Report{Forecast: fc, Plan: p}
	_, _, cost := advise(c, rep, 0)
	if math.Abs(cost.ExpectedGPUHours-got) > 1e-9 || math.Abs(cost.ExpectedRecommended-(cost.Recommended+(got-20)*2.5)) > 1e-9 {
		t.Errorf("cost %+v, expected %v GPU-h", cost, got)
	}
}

func TestRateFor(t *testing.T) {
	c := flatConfig()
	c.TargetUtilisation = 0.8
	for _, n := range []int{1, 2, 7, 100} {
		r := rateFor(c, n)
		if c.InstancesFor(r) < n || c.InstancesFor(r*(1-1e-5)) >= n {
			t.Errorf("rateFor(%d) = %v: needs %d, just below %d", n, r, c.InstancesFor(r), c.InstancesFor(r*(1-1e-5)))
		}
	}
	if rateFor(c, 0) != 0 {
		t.Error("rateFor(0) must be 0")
	}
}
