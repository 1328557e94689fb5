package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
)

// syntheticInput is three weeks of the default synthetic demand at 30m,
// sized so its peak needs 20 instances.
func syntheticInput(t testing.TB, days int) Input {
	t.Helper()
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := datasets.DefaultSynthetic().Generate(start, 30*time.Minute, days*48)
	tr := backtest.Trace{Name: "synthetic", Start: s.Start, Step: s.Step, RPS: s.Values}
	cfg := backtest.DefaultConfig()
	pc, err := cfg.Planner.SizeForPeak(tr.Peak(), 20)
	if err != nil {
		t.Fatal(err)
	}
	pc.Fleet.MaxInstances = 40
	cfg.Planner = pc
	return Input{Trace: tr, Backtest: cfg, Title: "synthetic", Source: "synthetic demand", Horizon: 7 * 24 * time.Hour,
		BacktestWeeks: 1, WarmUp: 3 * 24 * time.Hour, SpotInterruptionsPerHour: 0.05}
}

// builtReport is one report built once for the tests that read it.
type builtReport struct {
	once sync.Once
	rep  *Report
	err  error
}

// get builds the report of 21 synthetic days, edited by edit, once.
func (b *builtReport) get(t *testing.T, edit func(*Input)) *Report {
	t.Helper()
	b.once.Do(func() {
		in := syntheticInput(t, 21)
		edit(&in)
		b.rep, b.err = Build(context.Background(), in)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.rep
}

var full, euro builtReport

// fullReport is the whole report at the default prices.
func fullReport(t *testing.T) *Report { return full.get(t, func(*Input) {}) }

// euroReport is the full report with every price set, in euros.
func euroReport(t *testing.T) *Report {
	return euro.get(t, func(in *Input) {
		in.Backtest.Planner.Prices = planner.Prices{OnDemandPerHour: 3.1, ReservedPerHour: 1.9, SpotPerHour: 1.2, Currency: "EUR"}
	})
}

func TestBuild(t *testing.T) {
	rep := fullReport(t)
	if n := len(rep.Forecast.Points); n != 7*48 {
		t.Errorf("%d forecast steps, want a week of 30m", n)
	}
	if n := len(rep.Plan.Hours); n != 7*24 {
		t.Errorf("%d plan hours, want 168", n)
	}
	for _, h := range rep.Plan.Hours {
		if h.Desired < 1 || h.Desired > 40 || h.Reason == "" {
			t.Fatalf("hour %+v", h)
		}
	}
	if rep.Demand.Accuracy == nil || rep.Demand.Accuracy.Origins != holdoutOrigins || !(rep.Demand.Accuracy.Model.MASE > 0) {
		t.Errorf("accuracy %+v", rep.Demand.Accuracy)
	}
	if rep.Backtest == nil || len(rep.Backtest.Policies) != len(BacktestPolicies) || rep.Backtest.Days != 7 {
		t.Fatalf("backtest: %d policies over %v days, want %d over 7", len(rep.Backtest.Policies), rep.Backtest.Days, len(BacktestPolicies))
	}
	if bl := rep.Backtest.Baseline; bl == nil || (bl.Policy != "reactive" && bl.Policy != "flat") || !(bl.HybridVs > 0) {
		t.Errorf("baseline %+v, want the cheaper of reactive and flat and the hybrid's cost over it", bl)
	}
	for i, name := range BacktestPolicies {
		if rep.Backtest.Policies[i].Name != name {
			t.Errorf("policy %d is %s, want %s", i, rep.Backtest.Policies[i].Name, name)
		}
	}
	r := rep.Reserved
	if r.Recommended < 1 || r.Recommended > rep.Plan.Peak || r.BusyShare < r.BreakEven || r.Hindsight == nil {
		t.Errorf("reserved %+v (plan peak %d)", r, rep.Plan.Peak)
	}
	c := rep.Cost
	if !(c.Recommended < c.AllOnDemand) || math.Abs(c.AllOnDemand-2.5*rep.Plan.GPUHours) > 1e-6 ||
		math.Abs(c.Recommended-(c.ReservedCost+c.BurstCost)) > 1e-9 || c.ExpectedGPUHours < rep.Plan.GPUHours-1e-9 {
		t.Errorf("cost %+v", c)
	}
	if rep.Capacity.Headroom != 40-max(rep.Plan.Peak, rep.Capacity.SLOPeak) {
		t.Errorf("capacity %+v", rep.Capacity)
	}
	if rep.Risks == nil {
		t.Error("risks must be a list, empty when none fired")
	}
}

// TestColdStartGateIsTheControllers: without a warm-up the report's gate
// is the one control.Controller gives at its first refit (there is no
// other gate in the report).
func TestColdStartGateIsTheControllers(t *testing.T) {
	in := syntheticInput(t, 15)
	in.WarmUp, in.PlanOnly, in.Horizon = 0, true, 6*time.Hour
	rep, err := Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := control.New(in.Backtest.Planner, control.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ctl.Refit(in.Trace.End(), in.Trace.RPS) // 15 days: all of it is within forecast.history
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Demand.Gate; got != Gate(r.Gate) || r.Gate.Level != planner.GateModel {
		t.Errorf("gate %+v, the controller's %+v", got, r.Gate)
	}
	if rep.Demand.Model != r.Model {
		t.Errorf("model %q, the controller's %q", rep.Demand.Model, r.Model)
	}
}

// TestForecastGridIsTheBacktests: the report's controller runs on the
// forecast step and refit interval the backtest picks for the trace.
func TestForecastGridIsTheBacktests(t *testing.T) {
	for _, step := range []time.Duration{time.Minute, 5 * time.Minute, 45 * time.Minute, 30 * time.Minute, time.Hour, 4 * time.Hour} {
		n := int(3 * 24 * time.Hour / step)
		tr := backtest.Trace{Name: "flat", Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), Step: step, RPS: make([]float64, n)}
		for i := range tr.RPS {
			tr.RPS[i] = 5
		}
		cfg := backtest.DefaultConfig()
		cfg.Planner.Fleet.RPSPerInstance = 1
		rep, err := backtest.Run(context.Background(), tr, cfg, backtest.PolicyStatic)
		if err != nil {
			t.Fatal(err)
		}
		s, err := forecastSettings(cfg.Forecast, step)
		if err != nil {
			t.Fatal(err)
		}
		if s.Step != rep.ForecastStep || s.RefitEvery != rep.RefitEvery {
			t.Errorf("trace step %v: report %v/%v, backtest %v/%v", step, s.Step, s.RefitEvery, rep.ForecastStep, rep.RefitEvery)
		}
	}
}

func TestRenderJSON(t *testing.T) {
	rep := fullReport(t)
	var buf bytes.Buffer
	if err := Render(&buf, rep, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"forecast", "cost", "reserved", "burst", "plan", "backtest", "demand", "capacity", "risks"} {
		if len(doc[key]) == 0 {
			t.Errorf("no %q in the JSON", key)
		}
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Reserved.Recommended != rep.Reserved.Recommended || back.Cost.Recommended != rep.Cost.Recommended ||
		len(back.Forecast.Points) != len(rep.Forecast.Points) || back.Settings.ForecastStep != rep.Settings.ForecastStep {
		t.Error("the JSON does not read back to the same figures")
	}
}

// TestRenderHTMLSelfContained: one file, nothing fetched, no script; the
// charts are drawn with data.
func TestRenderHTMLSelfContained(t *testing.T) {
	rep := fullReport(t)
	var buf bytes.Buffer
	if err := Render(&buf, rep, FormatHTML); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"<script", "<link", "<img", "@import", "url(", "@font-face", "src=", "href="} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q: it must need nothing outside itself", bad)
		}
	}
	if urls := regexp.MustCompile(`https?://[^"\s<]+`).FindAllString(page, -1); len(urls) != strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("URLs other than the SVG namespace: %v", urls)
	}
	charts := regexp.MustCompile(`<svg class="chart" id="([a-z-]+)"`).FindAllStringSubmatch(page, -1)
	if len(charts) != 4 {
		t.Errorf("%d charts, want demand, plan, backtest and reserved", len(charts))
	}
	for _, series := range []string{"history", "forecast", "band80", "band95", "plan", "need", "busy", "cost"} {
		m := regexp.MustCompile(`data-series="` + series + `" data-points="(\d+)"`).FindStringSubmatch(page)
		if m == nil || m[1] == "0" {
			t.Errorf("series %s not drawn: %v", series, m)
		}
	}
	for _, want := range []string{"@page { size: A4", "Commit to <b>", "id=\"risks\"", "Appendix A. Hour-by-hour schedule", "forecaster backtest"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestRenderMarkdown(t *testing.T) {
	rep := fullReport(t)
	var buf bytes.Buffer
	if err := Render(&buf, rep, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"# Capacity plan: synthetic", "## Risks", "## 1. Demand", "## 2. Plan", "## 3. Purchase advice",
		"| static (", "| hour | ", "Commit to **"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "<svg") || strings.Contains(md, "&lt;") {
		t.Error("the Markdown holds HTML")
	}
}

func TestBuildRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"horizon", func(in *Input) { in.Horizon = 30 * 24 * time.Hour }, "horizon 720h0m0s must be between"},
		{"weeks", func(in *Input) { in.BacktestWeeks = 99 }, "backtest weeks 99"},
		{"warm-up", func(in *Input) { in.WarmUp = -time.Hour }, "warm-up -1h0m0s"},
		{"spot rate", func(in *Input) { in.SpotInterruptionsPerHour = math.NaN() }, "spot interruptions per hour NaN"},
		{"no data", func(in *Input) {
			for i := range in.Trace.RPS {
				in.Trace.RPS[i] = math.NaN()
			}
		}, ErrNoDemand.Error()},
	} {
		in := syntheticInput(t, 3)
		in.PlanOnly = true
		tc.edit(&in)
		if _, err := Build(context.Background(), in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// amount is a printed figure with two decimals (a cost or a price, but
// for the holdout's scores and a few rates).
var amount = regexp.MustCompile(`\d[\d,]*\.\d\d\b`)

// tags strips HTML tags.
var tags = regexp.MustCompile(`<[^>]*>`)

// TestRenderedWords: every cost carries its currency (and the placeholder
// mark while the prices are the defaults); spans are words; the formulas
// are in the appendix only; counts agree with their nouns; the holdout's
// band coverage is stated.
func TestRenderedWords(t *testing.T) {
	for _, tc := range []struct {
		name, unit string
		build      func(*testing.T) *Report
	}{
		{"default prices", "USD" + PlaceholderMark, fullReport},
		{"prices set, in euros", "EUR", euroReport},
	} {
		rep := tc.build(t)
		for _, format := range []string{FormatHTML, FormatMarkdown} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := Render(&buf, rep, format); err != nil {
					t.Fatal(err)
				}
				text := html.UnescapeString(buf.String())
				body := text
				if i := strings.Index(body, "<body>"); i >= 0 {
					body = body[i:] // not the stylesheet
				}
				prose := stripAccuracy(body[:strings.LastIndex(body, "ppendix")])
				for _, at := range amount.FindAllStringIndex(prose, -1) {
					after := tags.ReplaceAllString(prose[at[1]:min(at[1]+60, len(prose))], "")
					rate := strings.HasPrefix(after, "%") || strings.HasPrefix(after, " per spot") || strings.HasPrefix(after, " interruptions") ||
						strings.HasSuffix(prose[max(0, at[0]-12):at[0]], "a ratio of ")
					if !rate && !strings.HasPrefix(after, " "+tc.unit) {
						t.Errorf("%q: an amount without %q", prose[at[0]:at[1]]+after, tc.unit)
					}
				}
				placeholder := tc.unit != "EUR"
				if strings.Contains(text, PlaceholderMark) != placeholder || strings.Contains(text, "Placeholder prices") != placeholder {
					t.Errorf("placeholder mark shown %v, want %v", !placeholder, placeholder)
				}
				if other := map[bool]string{true: "EUR", false: "USD"}[placeholder]; strings.Contains(body, " "+other) {
					t.Errorf("the report shows %s", other)
				}
				for _, want := range []string{"Planning the next week from", "busy share " + pct(rep.Reserved.BusyShare, 0),
					rep.Demand.Accuracy.BandCoverage(), rep.Demand.Accuracy.VersusNaive(),
					costVersus(rep.Backtest.Baseline.HybridVs) + " the baseline without a forecast"} {
					if !strings.Contains(text, want) {
						t.Errorf("the report lacks %q", want)
					}
				}
				if format == FormatHTML && !strings.Contains(text, "(1 slot,") {
					t.Error("the fleet's slots are not counted in words")
				}
				for _, bad := range []string{"next 1w", "1w earlier", " 1 slots", " 1 instances", "0m0s", "plan_busy_share", "r/p of the hours"} {
					if strings.Contains(text, bad) {
						t.Errorf("the report reads %q", bad)
					}
				}
				appendix := strings.LastIndex(text, "ppendix")
				for _, formula := range []string{"C(k)", "argmin", "E[(N", "λ·b"} {
					if i := strings.Index(text, formula); i < appendix {
						t.Errorf("formula %q before the appendix (at %d, the appendix at %d)", formula, i, appendix)
					}
				}
			})
		}
	}
}

// stripAccuracy drops the holdout's score table, whose two-decimal
// figures are not amounts.
func stripAccuracy(s string) string {
	if i, j := strings.Index(s, `<table id="accuracy">`), strings.Index(s, "</table>"); i >= 0 {
		for j >= 0 && j < i {
			k := strings.Index(s[j+1:], "</table>")
			if k < 0 {
				return s
			}
			j += k + 1
		}
		return s[:i] + s[j:]
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "| model `") && !strings.HasPrefix(line, "| profile `") && !strings.HasPrefix(line, "| seasonal naive (") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// A cost ratio is worded as a saving, an excess, or a tie within half a
// percent.
func TestCostVersus(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		want  string
	}{{0.73, "27% less than"}, {1.04, "4% more than"}, {1.004, "the same as"}, {0.996, "the same as"}, {1, "the same as"}} {
		if got := costVersus(tc.ratio); got != tc.want {
			t.Errorf("costVersus(%v) = %q, want %q", tc.ratio, got, tc.want)
		}
	}
}
