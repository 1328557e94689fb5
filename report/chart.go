package report

import (
	"fmt"
	"html/template"
	"math"
	"time"

	"github.com/prewarm/prewarm/chart"
)

// The charts are inline SVG drawn with package chart, so the HTML needs
// no script and no fetch; the page's CSS styles the marks' classes. Every
// data path carries data-series and data-points (the page tests count
// them, as uitest does for the status page).

const chartW = 760.0

// chartMargins leave room for the legend above and the ticks left and
// below.
var chartMargins = chart.Margins{Left: 54, Right: 16, Top: 26, Bottom: 34}

// inline is the canvas as page HTML.
func inline(c *chart.Canvas) template.HTML {
	return template.HTML(c.Inline()) // built from numbers and escaped text only
}

// valueAxis sets a y scale from 0 to a round maximum above top, on c's
// plot area, and draws its grid.
func valueAxis(c *chart.Canvas, top float64, format func(float64) string) chart.Scale {
	upper, step := chart.NiceMax(top, 5)
	y := chart.Scale{Min: 0, Max: upper, From: c.Area.Y1, To: c.Area.Y0}
	c.YGrid(y, chart.LinearTicks(0, upper, step, format))
	return y
}

// demandChart draws the recent history, the forecast mean and its bands.
func demandChart(rep *Report) template.HTML {
	fc, hist := rep.Forecast, rep.recent
	c := chart.New("demand-chart", "Demand: the last two weeks and the forecast with its 80% and 95% bands (requests/s)", chartW, 300, chartMargins)
	step := time.Duration(fc.Step)
	a := chart.TimeScale{Start: hist.start, End: fc.Start.Add(time.Duration(len(fc.Points)) * step), From: c.Area.X0, To: c.Area.X1}
	if len(hist.values) == 0 {
		a.Start = fc.Start
	}
	top := 0.0
	for _, v := range hist.values {
		if !math.IsNaN(v) {
			top = math.Max(top, v)
		}
	}
	for _, p := range fc.Points {
		top = math.Max(top, p.Upper95)
	}
	y := valueAxis(c, top*1.05, chart.Compact)
	c.TimeTicks(a, rep.loc)
	band := func(lo, hi func(ForecastPoint) float64) *chart.Path {
		p := &chart.Path{}
		for _, f := range fc.Points {
			p.LineTo(a.At(f.At.Add(step/2)), y.At(hi(f)))
		}
		for i := len(fc.Points) - 1; i >= 0; i-- {
			f := fc.Points[i]
			p.LineTo(a.At(f.At.Add(step/2)), y.At(lo(f)))
		}
		p.Close()
		return p
	}
	c.Series("band95", "band95", len(fc.Points), band(func(p ForecastPoint) float64 { return p.Lower95 }, func(p ForecastPoint) float64 { return p.Upper95 }))
	c.Series("band80", "band80", len(fc.Points), band(func(p ForecastPoint) float64 { return p.Lower80 }, func(p ForecastPoint) float64 { return p.Upper80 }))
	var pts []chart.Point
	for i, v := range hist.values {
		pts = append(pts, chart.Point{X: a.At(hist.start.Add(time.Duration(i)*hist.step + hist.step/2)), Y: y.At(v)})
	}
	d, n := chart.Polyline(pts)
	c.Series("line history", "history", n, d)
	pts = pts[:0]
	for _, p := range fc.Points {
		pts = append(pts, chart.Point{X: a.At(p.At.Add(step / 2)), Y: y.At(p.Mean)})
	}
	d, n = chart.Polyline(pts)
	c.Series("line forecast", "forecast", n, d)
	x := a.At(fc.Start)
	c.Line("now", x, c.Area.Y0, x, c.Area.Y1)
	c.Text("note", x+4, c.Area.Y0+10, chart.Start, "forecast from "+fc.Start.In(rep.loc).Format("Mon 2 Jan 15:04"))
	c.Legend(chart.LegendItem{Class: "history", Label: "recorded"}, chart.LegendItem{Class: "forecast", Label: "forecast (mean)"},
		chart.LegendItem{Class: "band80", Label: "80% band"}, chart.LegendItem{Class: "band95", Label: "95% band"})
	return inline(c)
}

// planChart draws the plan's instances over the horizon, the need of the
// forecast mean, the reserved baseline and max.
func planChart(rep *Report) template.HTML {
	p := rep.Plan
	k := rep.Reserved.Recommended
	c := chart.New("plan-chart", "The pre-warm plan: instances asked for over the horizon, the reserved baseline and max", chartW, 280, chartMargins)
	a := chart.TimeScale{Start: p.Start, End: p.End, From: c.Area.X0, To: c.Area.X1}
	top := float64(max(p.Peak, k, 1))
	showMax := float64(rep.Capacity.Max) <= 1.5*top
	if showMax {
		top = math.Max(top, float64(rep.Capacity.Max))
	}
	y := valueAxis(c, top*1.08, chart.Compact)
	c.TimeTicks(a, rep.loc)
	// The plan as a step area, the baseline over it.
	area, line := &chart.Path{}, &chart.Path{}
	area.MoveTo(a.At(p.Start), y.At(0))
	for i, st := range p.Changes {
		next := p.End
		if i+1 < len(p.Changes) {
			next = p.Changes[i+1].At
		}
		v := y.At(float64(st.Desired))
		area.LineTo(a.At(st.At), v)
		area.LineTo(a.At(next), v)
		line.LineTo(a.At(st.At), v)
		line.LineTo(a.At(next), v)
	}
	area.LineTo(a.At(p.End), y.At(0))
	area.Close()
	c.Series("burst-area", "plan-area", len(p.Changes), area)
	if k > 0 {
		c.Rect("reserved-area", c.Area.X0, y.At(float64(k)), c.Area.X1-c.Area.X0, y.At(0)-y.At(float64(k)))
		c.Line("reserved-line", c.Area.X0, y.At(float64(k)), c.Area.X1, y.At(float64(k)))
	}
	var need []chart.Point
	for _, h := range p.Hours {
		need = append(need, chart.Point{X: a.At(h.Start.Add(30 * time.Minute)), Y: y.At(float64(h.NeedMean))})
	}
	d, n := chart.Polyline(need)
	c.Series("line need", "need", n, d)
	c.Series("line plan", "plan", len(p.Changes), line)
	if showMax {
		v := y.At(float64(rep.Capacity.Max))
		c.Line("max-line", c.Area.X0, v, c.Area.X1, v)
		c.Text("note warn", c.Area.X0+4, v-4, chart.Start, fmt.Sprintf("max %d", rep.Capacity.Max))
	} else {
		c.Text("note", c.Area.X1-4, c.Area.Y0+10, chart.End, fmt.Sprintf("max %d (off the chart)", rep.Capacity.Max))
	}
	c.Legend(chart.LegendItem{Class: "plan", Label: "instances asked for"}, chart.LegendItem{Class: "reserved-area", Label: fmt.Sprintf("reserved baseline (%d)", k)},
		chart.LegendItem{Class: "burst-area", Label: "burst (on demand / spot)"}, chart.LegendItem{Class: "need", Label: "need at the mean"})
	return inline(c)
}

// reservedChart draws each level's busy share against the break-even.
func reservedChart(rep *Report) template.HTML {
	r := rep.Reserved
	c := chart.New("reserved-chart", "Busy share of each instance level under the forecast, against the break-even of a reservation", chartW, 250, chartMargins)
	// The levels from 1 up to the last one needed at least 0.5% of the
	// time (and a few past the advice).
	var levels []Level
	for _, l := range r.Levels {
		if l.Instances >= 1 && (l.BusyShare >= 0.005 || l.Instances <= r.Recommended+3) {
			levels = append(levels, l)
		}
	}
	y := valueAxis(c, 1, func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) })
	n := max(len(levels), 1)
	w := (c.Area.X1 - c.Area.X0) / float64(n)
	labelEvery := int(math.Ceil(float64(n) / 20))
	for i, l := range levels {
		class := "bar burst"
		if l.Instances <= r.Recommended {
			class = "bar reserved"
		}
		x := c.Area.X0 + float64(i)*w
		c.Series(class, "busy", 1, chart.RectPath(x+w*0.12, y.At(l.BusyShare), w*0.76, y.At(0)-y.At(l.BusyShare)))
		if (l.Instances)%labelEvery == 0 || l.Instances == r.Recommended {
			c.Text("tick", x+w/2, c.Area.Y1+14, chart.Middle, fmt.Sprint(l.Instances))
		}
	}
	if r.BreakEven > 0 && r.BreakEven <= 1 {
		v := y.At(r.BreakEven)
		c.Line("breakeven", c.Area.X0, v, c.Area.X1, v)
		c.Text("note", c.Area.X1-4, v-5, chart.End, fmt.Sprintf("break-even %.0f%%: reserve below, burst above", 100*r.BreakEven))
	}
	c.Text("tick", (c.Area.X0+c.Area.X1)/2, c.Height-4, chart.Middle, "k-th instance (1 = the first)")
	c.Legend(chart.LegendItem{Class: "reserved", Label: "reserve"}, chart.LegendItem{Class: "burst", Label: "buy by the hour"})
	return inline(c)
}

// backtestChart draws each policy's cost and SLO attainment.
func backtestChart(rep *Report) template.HTML {
	b := rep.Backtest
	c := chart.New("backtest-chart", "Cost of each policy over the backtest's weeks ("+rep.Settings.Prices.Currency+")", chartW, 44+34*float64(len(b.Policies)), chartMargins)
	c.Area.X0 = 110
	top := 0.0
	for _, p := range b.Policies {
		top = math.Max(top, p.Cost)
	}
	scale := (c.Area.X1 - c.Area.X0 - 300) / math.Max(top, 1e-9)
	for i, p := range b.Policies {
		y := c.Area.Y0 + float64(i)*34
		class := "bar burst"
		if p.Name == "hybrid" {
			class = "bar reserved"
		}
		c.Series(class, "cost", 1, chart.RectPath(c.Area.X0, y, p.Cost*scale, 22))
		c.Text("label", c.Area.X0-8, y+15, chart.End, p.Name)
		c.Text("tick", c.Area.X0+p.Cost*scale+6, y+15, chart.Start, fmt.Sprintf("%s · %s GPU-h · SLO %s", rep.Settings.Prices.cost(p.Cost), gpuHours(p.GPUHours), attainment(p.SLOAttainment)))
	}
	return inline(c)
}
