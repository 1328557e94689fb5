package backtest

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/chart"
)

// plotRun is a policy's run of n steps with demand from f (NaN: no data)
// and the steps where demand passed capacity marked short.
func plotRun(name string, n int, f func(i int) float64) Result {
	r := Result{Name: name, CostVsStatic: 0.6, SLOAttainment: 0.995}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for i := range n {
		p := CapacityPoint{At: start.Add(time.Duration(i) * 30 * time.Minute), DemandRPS: f(i), Ready: 3}
		if p.DemandRPS > 3*10 {
			p.Underprovisioned = time.Minute
		}
		r.Capacity = append(r.Capacity, p)
	}
	return r
}

func TestPlotsAreValidAndLabelled(t *testing.T) {
	wave := func(i int) float64 { return 20 + 15*math.Sin(float64(i)/8) }
	runs := map[string]Result{
		"empty":    plotRun(PolicyHybrid, 0, wave),
		"constant": plotRun(PolicyHybrid, 48, func(int) float64 { return 7 }),
		"no data":  plotRun(PolicyHybrid, 48, func(int) float64 { return math.NaN() }),
		"wave":     plotRun(PolicyHybrid, 200, wave),
	}
	for name, r := range runs {
		rep := Report{Trace: "trace-" + name, Policies: []Result{r, {Name: PolicyStatic, CostVsStatic: 1, SLOAttainment: 1}}}
		trials := []FrontierTrial{{Policy: PolicyHybrid, CostVsStatic: 0.5, SLOAttainment: 0.99}, {Policy: PolicyReactive, CostVsStatic: 0.7, SLOAttainment: 0.999}}
		if name == "empty" {
			trials = nil
		}
		plots := map[string][]string{
			"capacity": {"time (UTC)", "requests/s", "ready capacity", "demand", "policy hybrid", `data-series="capacity"`, `data-series="demand"`},
			"tradeoff": {"cost relative to static", "SLO attainment (%)", ">static<", ">hybrid<", "cost vs SLO attainment per policy"},
			"frontier": {"SLO attainment (share of requests within the latency SLO)", "cost relative to static", "hybrid (defaults)", "every setting tried"},
		}
		if name == "wave" {
			plots["capacity"] = append(plots["capacity"], "under-provisioned")
		}
		for plot, wants := range plots {
			c := map[string]*chart.Canvas{
				"capacity": PlotCapacity(r, rep.Trace, 10, CapacityWindows(r)[0]),
				"tradeoff": PlotTradeoff(rep, 0.995),
				"frontier": PlotFrontier(rep.Trace, trials, []float64{0.99, 0.999}, rep.Policies),
			}[plot]
			var svg, img bytes.Buffer
			if err := c.WriteSVG(&svg); err != nil {
				t.Fatal(err)
			}
			doc := svg.String()
			if err := xml.Unmarshal(svg.Bytes(), new(struct{})); err != nil {
				t.Errorf("%s %s: not XML: %v", name, plot, err)
			}
			if strings.Contains(doc, "NaN") || strings.Contains(doc, "Inf") {
				t.Errorf("%s %s: a non-finite coordinate", name, plot)
			}
			for _, want := range wants {
				if !strings.Contains(doc, want) {
					t.Errorf("%s %s: lacks %q", name, plot, want)
				}
			}
			if err := c.WritePNG(&img); err != nil {
				t.Fatal(err)
			}
			if _, err := png.Decode(&img); err != nil {
				t.Errorf("%s %s: %v", name, plot, err)
			}
		}
	}
}

func TestFrontierTicksSpeakNines(t *testing.T) {
	doc := new(bytes.Buffer)
	trials := []FrontierTrial{{Policy: PolicyHybrid, CostVsStatic: 0.5, SLOAttainment: 0.95}, {Policy: PolicyHybrid, CostVsStatic: 0.6, SLOAttainment: 0.9995}}
	if err := WritePlot(doc, PlotFrontier("t", trials, []float64{0.99}, nil), "svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">95%<", ">99%<", ">99.9%<", "class=\"target\""} {
		if !strings.Contains(doc.String(), want) {
			t.Errorf("the frontier's x axis lacks %s", want)
		}
	}
	if strings.Contains(doc.String(), ">50%<") {
		t.Error("the frontier labels 50%, outside its trials and targets")
	}
}

func TestWritePlotFormats(t *testing.T) {
	c := PlotTradeoff(Report{Trace: "t", Policies: []Result{{Name: PolicyStatic, CostVsStatic: 1, SLOAttainment: 1}}}, 0.995)
	for _, tc := range []struct {
		format, prefix string
	}{{"png", "\x89PNG"}, {"svg", "<?xml"}} {
		var b bytes.Buffer
		if err := WritePlot(&b, c, tc.format); err != nil || !strings.HasPrefix(b.String(), tc.prefix) {
			t.Errorf("%s: %v, starts %q", tc.format, err, b.String()[:min(8, b.Len())])
		}
	}
	if err := WritePlot(io.Discard, c, "pdf"); err == nil || !strings.Contains(err.Error(), "--plot-format") {
		t.Errorf("pdf: %v, want a refusal naming --plot-format", err)
	}
}

// A run of up to two weeks is plotted whole; a longer one as the week
// around its busiest step, clipped to the run, and the week of median
// demand: a readable window, not months squeezed into the width.
func TestCapacityWindows(t *testing.T) {
	run := func(days, peakDay int) Result {
		start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
		var r Result
		for h := range days * 24 {
			v := 10 + float64(h/24%7) // weeks alike: a weekly rhythm
			if h/24 == peakDay && h%24 == 12 {
				v = 100
			}
			r.Capacity = append(r.Capacity, CapacityPoint{At: start.Add(time.Duration(h) * time.Hour), DemandRPS: v})
		}
		return r
	}
	week := 7 * 24
	cases := []struct {
		name    string
		days    int
		peakDay int
		want    []Window
	}{
		{"ten days: whole", 10, 3, []Window{{0, 10 * 24, ""}}},
		{"sixty days, peak on day 40", 60, 40, []Window{{40*24 + 12 - week/2, 40*24 + 12 + week/2, "busiest week"}}},
		{"peak on the last day: clipped to the end", 60, 59, []Window{{60*24 - week, 60 * 24, "busiest week"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CapacityWindows(run(tc.days, tc.peakDay))
			if got[0] != tc.want[0] {
				t.Errorf("first window %+v, want %+v", got[0], tc.want[0])
			}
			if tc.days > 14 {
				if len(got) != 2 || got[1].Name != "typical week" || got[1].To-got[1].From != week {
					t.Errorf("windows %+v, want a typical week after the busiest", got)
				}
			} else if len(got) != 1 {
				t.Errorf("windows %+v, want the whole run only", got)
			}
		})
	}
}
