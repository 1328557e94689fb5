package backtest

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/prewarm/prewarm/chart"
)

// Plot sizes, in pixels (the PNG's; the SVG's user units).
const (
	capacityWidth, capacityHeight = 1134, 420
	tradeoffWidth, tradeoffHeight = 720, 480
	frontierWidth, frontierHeight = 900, 500
)

// plotMargins leave room for the title and legend above, the y axis's
// label and ticks on the left, and the x axis's ticks and label below.
var plotMargins = chart.Margins{Left: 72, Right: 24, Top: 52, Bottom: 48}

// policyColours are each policy's colour in the frontier plot.
var policyColours = map[string]string{
	PolicyReactive:   "#d62728",
	PolicyPredictive: "#2ca02c",
	PolicyHybrid:     "#1f77b4",
	PolicyFlat:       "#7f7f7f",
	PolicyOracle:     "#000000",
}

// plotStyles style the plots' classes, in the SVG and the PNG alike.
func plotStyles() map[string]chart.Style {
	st := map[string]chart.Style{
		"title":         {FontSize: 15, Bold: true, Fill: "#222222"},
		"axis-label":    {FontSize: 12, Fill: "#222222"},
		"tick":          {FontSize: 11, Fill: "#555555"},
		"legend":        {FontSize: 11, Fill: "#222222"},
		"point-label":   {FontSize: 11, Fill: "#222222"},
		"grid":          {Stroke: "#e4e4e4"},
		"daygrid":       {Stroke: "#eeeeee"},
		"axis":          {Stroke: "#888888"},
		"line":          {Fill: "none", StrokeWidth: 1.2},
		"ring":          {Fill: "none", StrokeWidth: 1.6},
		"target":        {Stroke: "#969696", Dash: []float64{4, 4}},
		"capacity":      {Stroke: "#1f77b4"},
		"capacity-area": {Fill: "#1f77b4", Opacity: 0.24},
		"demand":        {Stroke: "#282828"},
		"short":         {Fill: "#d62728"},
		"point":         {Fill: "#1f77b4"},
	}
	for policy, col := range policyColours {
		st[policy] = chart.Style{Stroke: col}
		st[policy+"-dot"] = chart.Style{Fill: col}
	}
	return st
}

// newPlot is a standalone canvas with its title and the plots' styles.
func newPlot(id, title string, width, height float64) *chart.Canvas {
	c := chart.New(id, title, width, height, plotMargins)
	c.Styles = plotStyles()
	c.Heading(title)
	return c
}

// Window is the part of a run a capacity plot draws: Capacity rows
// [From, To), and Name, its place in the plot's title and file name
// ("" for the whole run).
type Window struct {
	From, To int
	Name     string
}

// windowSpan is how much of a run one plot shows readably: a longer run
// is drawn as its busiest week and a typical one, and the CSV holds all
// of it.
const windowSpan = 7 * 24 * time.Hour

// CapacityWindows are the windows to plot of r: the whole run when it is
// at most two weeks, else the week around its busiest step ("busiest
// week") and the week whose demand is the median of the run's weeks
// ("typical week").
func CapacityWindows(r Result) []Window {
	rows := r.Capacity
	if len(rows) < 2 || rows[len(rows)-1].At.Sub(rows[0].At) <= 2*windowSpan {
		return []Window{{From: 0, To: len(rows)}}
	}
	per := max(1, int(windowSpan/rows[1].At.Sub(rows[0].At)))
	peak := 0
	for i, p := range rows {
		if p.DemandRPS > rows[peak].DemandRPS || math.IsNaN(rows[peak].DemandRPS) {
			peak = i
		}
	}
	from := min(max(peak-per/2, 0), len(rows)-per)
	busiest := Window{From: from, To: from + per, Name: "busiest week"}
	type week struct {
		from int
		sum  float64
	}
	var weeks []week
	for w := 0; w+per <= len(rows); w += per {
		sum := 0.0
		for _, p := range rows[w : w+per] {
			sum += nanToZero(p.DemandRPS)
		}
		weeks = append(weeks, week{w, sum})
	}
	slices.SortFunc(weeks, func(a, b week) int { return cmp.Compare(a.sum, b.sum) })
	typical := weeks[len(weeks)/2].from
	return []Window{busiest, {From: typical, To: typical + per, Name: "typical week"}}
}

// PlotCapacity draws one policy's run over window w: demand (requests/s)
// against the requests/s its ready instances could serve (ready ×
// rpsPerInstance), with the under-provisioned steps marked.
func PlotCapacity(r Result, trace string, rpsPerInstance float64, w Window) *chart.Canvas {
	title := fmt.Sprintf("%s: demand vs capacity, policy %s (cost x%.2f of static, SLO %.2f%%)",
		trace, r.Name, r.CostVsStatic, 100*r.SLOAttainment)
	r.Capacity = r.Capacity[max(w.From, 0):min(w.To, len(r.Capacity))]
	if w.Name != "" && len(r.Capacity) > 0 {
		title = fmt.Sprintf("%s: %s from %s, policy %s (whole run: cost x%.2f of static, SLO %.2f%%)", trace, w.Name,
			r.Capacity[0].At.Format("2 Jan 2006"), r.Name, r.CostVsStatic, 100*r.SLOAttainment)
	}
	c := newPlot("capacity-"+r.Name, title, capacityWidth, capacityHeight)
	c.XLabel("time (UTC)")
	c.YLabel("requests/s")
	top := 0.0
	for _, p := range r.Capacity {
		top = math.Max(top, math.Max(p.Ready*rpsPerInstance, nanToZero(p.DemandRPS)))
	}
	upper, step := chart.NiceMax(1.05*top, 5)
	y := chart.Scale{Min: 0, Max: upper, From: c.Area.Y1, To: c.Area.Y0}
	c.YGrid(y, chart.LinearTicks(0, upper, step, chart.Compact))
	x := chart.TimeScale{From: c.Area.X0, To: c.Area.X1}
	if n := len(r.Capacity); n > 0 {
		x.Start, x.End = r.Capacity[0].At, r.Capacity[n-1].At
	}
	c.TimeTicks(x, time.UTC)
	capacity := make([]chart.Point, len(r.Capacity))
	demand := make([]chart.Point, len(r.Capacity))
	short := &chart.Path{}
	shortSteps := 0
	for i, p := range r.Capacity {
		at := x.At(p.At)
		capacity[i] = chart.Point{X: at, Y: y.At(p.Ready * rpsPerInstance)}
		demand[i] = chart.Point{X: at, Y: y.At(p.DemandRPS)} // NaN, no data: a gap
		if p.Underprovisioned > 0 && !math.IsNaN(p.DemandRPS) {
			short.Append(chart.CirclePath(at, demand[i].Y, 2.4))
			shortSteps++
		}
	}
	capLine, n := chart.Polyline(capacity)
	c.Series("capacity-area", "capacity-area", n, area(capacity, y.At(0)))
	c.Series("line capacity", "capacity", n, capLine)
	demLine, n := chart.Polyline(demand)
	c.Series("line demand", "demand", n, demLine)
	keys := []chart.LegendItem{{Class: "capacity-area", Label: "ready capacity"}, {Class: "line demand", Label: "demand", Kind: chart.Stroke}}
	if shortSteps > 0 {
		c.Series("short", "under-provisioned", shortSteps, short)
		keys = append(keys, chart.LegendItem{Class: "short", Label: "under-provisioned", Kind: chart.Dot})
	}
	c.Legend(keys...)
	return c
}

// area closes a line of points down to the baseline at pixel y0.
func area(pts []chart.Point, y0 float64) *chart.Path {
	p := &chart.Path{}
	if len(pts) == 0 {
		return p
	}
	p.MoveTo(pts[0].X, y0)
	for _, pt := range pts {
		p.LineTo(pt.X, pt.Y)
	}
	p.LineTo(pts[len(pts)-1].X, y0)
	p.Close()
	return p
}

func nanToZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// PlotTradeoff draws each policy as a point: cost relative to static
// against SLO attainment, the trade-off a user chooses on, with the SLO
// target (a share, e.g. 0.995; 0: none) as a dashed line. The attainment
// axis is labelled up to 100% and no further.
func PlotTradeoff(rep Report, sloTarget float64) *chart.Canvas {
	c := newPlot("tradeoff", rep.Trace+": cost vs SLO attainment per policy", tradeoffWidth, tradeoffHeight)
	c.XLabel("cost relative to static")
	c.YLabel("SLO attainment (%)")
	// Room right of static (x1) for its label, and for any policy that
	// costs more than static (over-eager reactive rules, say).
	hiX, lo := 1.15, 100.0
	for _, r := range rep.Policies {
		lo = min(lo, 100*r.SLOAttainment)
		hiX = max(hiX, 1.15*r.CostVsStatic)
	}
	if sloTarget > 0 {
		lo = min(lo, 100*sloTarget)
	}
	loY := lo - 0.1*(100.5-lo) - 0.1
	// The points at 100% need room above the axis's last label.
	x := chart.Scale{Min: 0, Max: hiX, From: c.Area.X0, To: c.Area.X1}
	y := chart.Scale{Min: loY, Max: 100 + 0.03*(100-loY), From: c.Area.Y1, To: c.Area.Y0}
	xs, ys := chart.NiceStep(hiX, 6), chart.NiceStep(100-loY, 5)
	c.YGrid(y, chart.LinearTicks(loY, 100, ys, chart.StepFormat(ys)))
	c.XGrid(x, chart.LinearTicks(0, hiX, xs, chart.StepFormat(xs)))
	if sloTarget > 0 {
		at := y.At(100 * sloTarget)
		c.Line("target", c.Area.X0, at, c.Area.X1, at)
		c.Text("point-label", c.Area.X1-4, at-4, chart.End, "SLO target "+strconv.FormatFloat(100*sloTarget, 'g', 4, 64)+"%")
	}
	dots := &chart.Path{}
	for _, r := range rep.Policies {
		dots.Append(chart.CirclePath(x.At(r.CostVsStatic), y.At(100*r.SLOAttainment), 4))
	}
	c.Series("point", "policies", len(rep.Policies), dots)
	for _, r := range rep.Policies {
		c.Text("point-label", x.At(r.CostVsStatic)+5, y.At(100*r.SLOAttainment)-4, chart.Start, r.Name)
	}
	return c
}

// nines maps an SLO attainment to −log10(1 − a), so 99%, 99.9% and 99.99%
// are evenly spaced; it is capped at 4 nines (100% is drawn at 99.99%).
func nines(a float64) float64 { return math.Min(4, -math.Log10(math.Max(1-a, 1e-4))) }

// ninesTicks label the nines axis from lo to hi with attainments.
func ninesTicks(lo, hi float64) []chart.Tick {
	var out []chart.Tick
	for _, label := range []string{"50", "80", "90", "95", "99", "99.5", "99.9", "99.99"} {
		a, _ := strconv.ParseFloat(label, 64)
		if x := nines(a / 100); x >= lo && x <= hi {
			out = append(out, chart.Tick{Value: x, Label: label + "%"})
		}
	}
	return out
}

// PlotFrontier draws every frontier trial as a point, cost relative to
// static against SLO attainment (on a scale of nines), one colour per
// policy, each policy's cheapest-at-each-attainment front as a line, and
// the SLO targets as dashed vertical lines: where a policy's front crosses
// a target is its cost at that SLO. defaults, the report's runs, are
// ringed: where the defaults sit against the sweep.
func PlotFrontier(trace string, trials []FrontierTrial, targets []float64, defaults []Result) *chart.Canvas {
	c := newPlot("frontier", trace+": cost vs SLO attainment, every setting tried", frontierWidth, frontierHeight)
	c.XLabel("SLO attainment (share of requests within the latency SLO)")
	c.YLabel("cost relative to static")
	type ring struct {
		policy string
		at     chart.Point // data units
	}
	byPolicy := map[string][]chart.Point{}
	var rings []ring
	loX, hiX, hiY := 5.0, 0.0, 1.0
	widen := func(v float64) { loX, hiX = math.Min(loX, v), math.Max(hiX, v) }
	for _, t := range trials {
		hiY = math.Max(hiY, t.CostVsStatic)
		if _, ok := policyColours[t.Policy]; ok {
			byPolicy[t.Policy] = append(byPolicy[t.Policy], chart.Point{X: nines(t.SLOAttainment), Y: t.CostVsStatic})
			widen(nines(t.SLOAttainment))
		}
	}
	for _, r := range defaults {
		if _, ok := policyColours[r.Name]; ok && r.Name != PolicyFlat && r.Name != PolicyOracle {
			rings = append(rings, ring{r.Name, chart.Point{X: nines(r.SLOAttainment), Y: r.CostVsStatic}})
			widen(nines(r.SLOAttainment))
		}
	}
	for _, q := range targets {
		widen(nines(q))
	}
	upper, step := chart.NiceMax(1.05*hiY, 5)
	x := chart.Scale{Min: math.Max(0, loX-0.2), Max: hiX + 0.2, From: c.Area.X0, To: c.Area.X1}
	y := chart.Scale{Min: 0, Max: upper, From: c.Area.Y1, To: c.Area.Y0}
	c.YGrid(y, chart.LinearTicks(0, upper, step, chart.StepFormat(step)))
	c.XGrid(x, ninesTicks(x.Min, x.Max))
	px := func(p chart.Point) chart.Point { return chart.Point{X: x.At(p.X), Y: y.At(p.Y)} }
	for _, q := range targets {
		c.Line("target", x.At(nines(q)), c.Area.Y0, x.At(nines(q)), c.Area.Y1)
	}
	var keys []chart.LegendItem
	for _, policy := range []string{PolicyReactive, PolicyPredictive, PolicyHybrid, PolicyFlat, PolicyOracle} {
		pts := byPolicy[policy]
		if len(pts) == 0 {
			continue
		}
		dots := &chart.Path{}
		for _, p := range pts {
			q := px(p)
			dots.Append(chart.CirclePath(q.X, q.Y, 3))
		}
		c.Series(policy+"-dot", policy, len(pts), dots)
		keys = append(keys, chart.LegendItem{Class: policy + "-dot", Label: policy, Kind: chart.Dot})
		if front := paretoFront(pts); len(front) > 1 {
			for i := range front {
				front[i] = px(front[i])
			}
			line, n := chart.Polyline(front)
			c.Series("line "+policy, policy+"-front", n, line)
		}
	}
	for _, r := range rings {
		q := px(r.at)
		c.Series("ring "+r.policy, r.policy+"-defaults", 1, chart.CirclePath(q.X, q.Y, 6))
		keys = append(keys, chart.LegendItem{Class: "ring " + r.policy, Label: r.policy + " (defaults)", Kind: chart.Ring})
	}
	c.Legend(keys...)
	return c
}

// WritePlot writes c as format: "png" or "svg".
func WritePlot(w io.Writer, c *chart.Canvas, format string) error {
	switch format {
	case "png":
		return c.WritePNG(w)
	case "svg":
		return c.WriteSVG(w)
	}
	return fmt.Errorf("plot format %q: want png or svg (--plot-format)", format)
}

// paretoFront returns, sorted by attainment, the points no other point
// beats on both attainment (higher) and cost (lower).
func paretoFront(pts []chart.Point) []chart.Point {
	s := append([]chart.Point(nil), pts...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].X != s[j].X {
			return s[i].X > s[j].X
		}
		return s[i].Y < s[j].Y
	})
	var front []chart.Point
	best := math.Inf(1)
	for _, pt := range s {
		if pt.Y < best {
			front = append(front, pt)
			best = pt.Y
		}
	}
	slices.Reverse(front)
	return front
}
