package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/model/stats"
	"github.com/prewarm/prewarm/planner"
)

// riskCase is a report with one measured figure set, and whether the rule
// under test fires, at which severity.
type riskCase struct {
	name     string
	edit     func(*Report, *trend)
	severity string // "" when the rule must not fire
}

func baseReport() (*Report, trend) {
	end := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	rep := &Report{
		History:  History{Days: 60},
		Demand:   Demand{Gate: Gate{Level: planner.GateModel, Reason: "model trusted"}},
		Plan:     Plan{Start: end, End: end.Add(7 * 24 * time.Hour), Peak: 20},
		Capacity: Capacity{Max: 100, MeanPeak: 18, SLOPeak: 25},
		Forecast: certain(10, 10, 10),
	}
	return rep, trend{}
}

func checkRule(t *testing.T, rule func(planner.Config, *Report, trend) (Risk, bool), cases []riskCase) {
	t.Helper()
	c := flatConfig()
	c.Fleet.MaxInstances = 100
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, tr := baseReport()
			tc.edit(rep, &tr)
			r, ok := rule(c, rep, tr)
			switch {
			case tc.severity == "" && ok:
				t.Errorf("fired: %+v", r)
			case tc.severity != "" && !ok:
				t.Errorf("did not fire, want %s", tc.severity)
			case ok && r.Severity != tc.severity:
				t.Errorf("severity %s, want %s: %+v", r.Severity, tc.severity, r)
			case ok && (r.Title == "" || r.Detail == "" || r.Rule == "" || r.ID == ""):
				t.Errorf("a risk must say what, why and by which rule: %+v", r)
			}
		})
	}
}

func TestRiskShortHistory(t *testing.T) {
	checkRule(t, riskShortHistory, []riskCase{
		{"60 days", func(*Report, *trend) {}, ""},
		{"14 days: two weeks, enough", func(r *Report, _ *trend) { r.History.Days = 14 }, ""},
		{"13.9 days: no second week", func(r *Report, _ *trend) { r.History.Days = 13.9 }, SeverityWarning},
		{"2 days: the model's two seasons", func(r *Report, _ *trend) { r.History.Days = 2 }, SeverityWarning},
		{"1.9 days", func(r *Report, _ *trend) { r.History.Days = 1.9 }, SeverityHigh},
	})
}

func TestRiskGate(t *testing.T) {
	checkRule(t, riskGate, []riskCase{
		{"model trusted", func(*Report, *trend) {}, ""},
		{"profile", func(r *Report, _ *trend) {
			r.Demand.Gate = Gate{Level: planner.GateProfile, Reason: "model MAE 2 > seasonal naive 1"}
		}, SeverityHigh},
		{"reactive", func(r *Report, _ *trend) { r.Demand.Gate = Gate{Level: planner.GateReactive, Reason: "both lost"} }, SeverityHigh},
		{"warming up is the short-history risk's", func(r *Report, _ *trend) {
			r.Demand.Gate, r.Demand.WarmingUp = Gate{Level: planner.GateProfile}, true
		}, ""},
	})
}

func TestRiskLosesToNaive(t *testing.T) {
	with := func(ratio float64) func(*Report, *trend) {
		return func(r *Report, _ *trend) {
			r.Demand.Accuracy = &Accuracy{Origins: 4, MASERatio: ratio, NaivePeriod: Duration(7 * 24 * time.Hour),
				Model: Scores{MASE: ratio}, Naive: Scores{MASE: 1}}
		}
	}
	checkRule(t, riskLosesToNaive, []riskCase{
		{"no holdout", func(*Report, *trend) {}, ""},
		{"better", with(0.8), ""},
		{"just beyond the margin", with(0.94), ""},
		{"within the margin", with(1 - RuleNaiveMargin), SeverityNote},
		{"a hair better", with(0.998), SeverityNote},
		{"equal", with(RuleNaiveRatio), SeverityNote},
		{"worse", with(1.01), SeverityWarning},
		{"NaN", with(math.NaN()), ""},
	})
}

func TestRiskAboveMax(t *testing.T) {
	checkRule(t, riskAboveMax, []riskCase{
		{"well under", func(*Report, *trend) {}, ""},
		{"95% band at max", func(r *Report, _ *trend) { r.Capacity.SLOPeak = 100 }, ""},
		{"95% band above", func(r *Report, _ *trend) { r.Capacity.SLOPeak = 101 }, SeverityWarning},
		{"mean above", func(r *Report, _ *trend) { r.Capacity.MeanPeak, r.Capacity.SLOPeak = 101, 130 }, SeverityHigh},
	})
}

func TestRiskTrend(t *testing.T) {
	// The line through daily peaks, day 0 at day0: limit 100 req/s is
	// max's need (100 instances of 1 req/s at 100%), so 101 needs more.
	grow := func(intercept, slope float64) func(*Report, *trend) {
		return func(r *Report, tr *trend) {
			*tr = trend{line: stats.Line{Intercept: intercept, Slope: slope}, day0: r.Plan.Start.Add(-28 * 24 * time.Hour),
				days: 28, meanPeak: intercept + 14*slope}
		}
	}
	checkRule(t, riskTrend, []riskCase{
		{"no trend fitted", func(*Report, *trend) {}, ""},
		{"flat", grow(50, 0), ""},
		{"shrinking", grow(90, -1), ""},
		// 60 + 1.2·d reaches 100 at d = 33.3: 5.3 days into the plan.
		{"reaches max within the week", grow(60, 1.2), SeverityHigh},
		// 20 + 0.5·d reaches 100 at d = 160: 132 days after the start, beyond 90 after the end.
		{"beyond the look-ahead", grow(20, 0.5), ""},
		// 50 + 0.8·d reaches 100 at d = 62.5: 27.5 days after the plan ends.
		{"within the look-ahead", grow(50, 0.8), SeverityNote},
		// growth of 0.05/day on a mean peak of 50: 0.7% a week, below the rule.
		{"too slow to count", grow(50, 0.05), ""},
	})
	// When: 60 + 1.2·d = 100 ⇒ d = 33.33 days after day0.
	rep, tr := baseReport()
	grow(60, 1.2)(rep, &tr)
	c := flatConfig()
	c.Fleet.MaxInstances = 100
	r, _ := riskTrend(c, rep, tr)
	want := tr.day0.Add(time.Duration(40.0 / 1.2 * float64(24*time.Hour)))
	if r.At == nil || r.At.Sub(want).Abs() > 5*time.Minute || !strings.Contains(r.Detail, "Sat 7 Mar") {
		t.Errorf("reaches max at %v, want about %v: %s", r.At, want, r.Detail)
	}
}

func TestRiskBands(t *testing.T) {
	band := func(width float64) func(*Report, *trend) {
		return func(r *Report, _ *trend) {
			for i := range r.Forecast.Points {
				p := &r.Forecast.Points[i]
				p.Lower80, p.Upper80 = p.Mean*(1-width/2), p.Mean*(1+width/2)
			}
		}
	}
	checkRule(t, riskWideBands, []riskCase{
		{"narrow", band(0.3), ""},
		{"as wide as the mean", band(RuleWideBand), ""},
		{"wider", band(1.2), SeverityWarning},
		{"twice", band(2.2), SeverityHigh},
	})
	cover := func(c80, c95 float64) func(*Report, *trend) {
		return func(r *Report, _ *trend) {
			r.Demand.Accuracy = &Accuracy{Model: Scores{Coverage80: c80, Coverage95: c95}}
		}
	}
	checkRule(t, riskNarrowBands, []riskCase{
		{"no holdout", func(*Report, *trend) {}, ""},
		{"well covered", cover(0.8, 0.95), ""},
		{"at both thresholds", cover(RuleMinCoverage80, RuleMinCoverage95), ""},
		{"80% band too narrow", cover(0.5, 0.95), SeverityWarning},
		{"95% band too narrow", cover(0.79, 0.84), SeverityWarning},
	})
}

// The model against seasonal naive is one statement from the MASE ratio,
// the same in section 1 and in the risks.
func TestVersusNaiveWords(t *testing.T) {
	for _, tc := range []struct {
		ratio      float64
		want, risk string
	}{
		{0.8, "the model's error was 20% smaller than that of seasonal naive, which repeats the demand a week earlier " +
			"(MASE 0.800 against 1.000, a ratio of 0.80): the model beats it.", ""},
		{0.998, "the model's error was within 5% of that of seasonal naive, which repeats the demand a week earlier " +
			"(MASE 0.998 against 1.000, a ratio of 1.00): at this horizon the model adds little to it.", "no-better-than-naive"},
		{1.65, "the model's error was 65% larger than that of seasonal naive, which repeats the demand a week earlier " +
			"(MASE 1.650 against 1.000, a ratio of 1.65): the model lost.", "loses-to-naive"},
	} {
		a := &Accuracy{Origins: 4, Horizon: Duration(7 * 24 * time.Hour), NaivePeriod: Duration(7 * 24 * time.Hour), MASERatio: tc.ratio,
			Model: Scores{MASE: tc.ratio}, Naive: Scores{MASE: 1}}
		got := a.VersusNaive()
		if want := "In 4 holdout forecasts of a week each, made from the history before them, " + tc.want; got != want {
			t.Errorf("ratio %v:\n got %q\nwant %q", tc.ratio, got, want)
		}
		rep, tr := baseReport()
		rep.Demand.Accuracy = a
		r, ok := riskLosesToNaive(flatConfig(), rep, tr)
		if ok != (tc.risk != "") || r.ID != tc.risk || ok && !strings.HasPrefix(r.Detail, got) {
			t.Errorf("ratio %v: risk %+v, want %q saying %q", tc.ratio, r, tc.risk, got)
		}
	}
}

// The bands' coverage on the holdout is stated with its figures, and the
// judgement follows the coverage rule.
func TestBandCoverageWords(t *testing.T) {
	for _, tc := range []struct {
		c80, c95 float64
		want     string
	}{
		{0.81, 0.95, "On the holdout the demand stayed inside the 95% band 95% of the time (the rule asks at least 90%) " +
			"and inside the 80% band 81% (at least 60%): the bands are wide enough to plan from."},
		{0.79, 0.90, "On the holdout the demand stayed inside the 95% band 90% of the time (the rule asks at least 90%) " +
			"and inside the 80% band 79% (at least 60%): the bands are wide enough to plan from."},
		{0.79, 0.84, "On the holdout the demand stayed inside the 95% band 84% of the time (the rule asks at least 90%) " +
			"and inside the 80% band 79% (at least 60%): the bands are too narrow to plan from as drawn; " +
			"demand falls outside them more often than they say."},
		{0.79, 0.8996, "On the holdout the demand stayed inside the 95% band 89.9% of the time (the rule asks at least 90%) " +
			"and inside the 80% band 79% (at least 60%): the bands are too narrow to plan from as drawn;"},
		{0.55, 0.92, "On the holdout the demand stayed inside the 95% band 92% of the time (the rule asks at least 90%) " +
			"and inside the 80% band 55% (at least 60%): the bands are too narrow to plan from as drawn;"},
	} {
		a := &Accuracy{Model: Scores{Coverage80: tc.c80, Coverage95: tc.c95}}
		if got := a.BandCoverage(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("coverage %v/%v:\n got %q\nwant %q", tc.c80, tc.c95, got, tc.want)
		}
	}
}

func TestRiskBacktestSLO(t *testing.T) {
	with := func(att float64) func(*Report, *trend) {
		return func(r *Report, _ *trend) {
			r.Backtest = &Backtest{Days: 28, Policies: []backtest.Result{{Name: "hybrid", SLOAttainment: att}}}
		}
	}
	checkRule(t, riskBacktestSLO, []riskCase{
		{"no backtest", func(*Report, *trend) {}, ""},
		{"met", with(0.996), ""},
		{"missed", with(0.99), SeverityWarning},
	})
}

// TestTrendFit: the daily peaks of a series growing linearly give the
// line's slope.
func TestTrendFit(t *testing.T) {
	step := time.Hour
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var v []float64
	for i := range 40 * 24 {
		day := float64(i / 24)
		v = append(v, 10+0.5*day+5*math.Sin(2*math.Pi*float64(i%24)/24))
	}
	r := &run{g: grid{start: start, step: step, values: v}}
	r.end = r.g.end()
	tr := r.trend()
	if tr.days != RuleTrendDays || math.Abs(tr.line.Slope-0.5) > 1e-6 {
		t.Errorf("trend over %d days, slope %v; want %d days, 0.5 a day", tr.days, tr.line.Slope, RuleTrendDays)
	}
	short := &run{g: grid{start: start, step: step, values: v[:5*24]}}
	short.end = short.g.end()
	if tr := short.trend(); tr.days >= RuleTrendMinDays {
		t.Errorf("5 days fitted a trend: %+v", tr)
	}
}

// Prices left at their defaults are flagged as placeholders; any price
// set (here the on-demand one, then only spot) clears the flag.
func TestRiskPlaceholderPrices(t *testing.T) {
	cases := []struct {
		name string
		edit func(*planner.Prices)
		want bool
	}{
		{"every price the default", func(*planner.Prices) {}, true},
		{"the on-demand price set", func(p *planner.Prices) { p.OnDemandPerHour = 3.9 }, false},
		{"only the spot price set", func(p *planner.Prices) { p.SpotPerHour = 0.8 }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planner.DefaultConfig()
			tc.edit(&c.Prices)
			rep, tr := baseReport()
			rep.Settings.Prices = Prices{Currency: "USD", Placeholder: placeholderPrices(c.Prices)}
			r, ok := riskPlaceholderPrices(c, rep, tr)
			if ok != tc.want {
				t.Fatalf("fires %v, want %v", ok, tc.want)
			}
			if ok && (r.Severity != SeverityWarning || !strings.Contains(r.Detail, "prices.on_demand_per_hour") || !strings.Contains(r.Detail, "--price") ||
				!strings.Contains(r.Detail, "prices.currency") || !strings.Contains(r.Detail, "2.50 USD"+PlaceholderMark+" an instance-hour on demand")) {
				t.Errorf("risk %+v: want a warning naming the keys, the flags and the prices in their currency", r)
			}
		})
	}
}
