package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"
)

// The charts are inline SVG drawn here, so the HTML needs no script and no
// fetch. Every data path carries data-series and data-points (the page
// tests count them, as uitest does for the status page).

const (
	chartW      = 760.0
	chartLeft   = 54.0
	chartRight  = 16.0
	chartTop    = 26.0
	chartBottom = 34.0
)

// svg builds one chart.
type svg struct {
	b    strings.Builder
	h    float64
	x0   float64 // data area
	x1   float64
	y0   float64 // top
	y1   float64 // bottom
	yMax float64
}

func newSVG(id, title string, height float64) *svg {
	s := &svg{h: height, x0: chartLeft, x1: chartW - chartRight, y0: chartTop, y1: height - chartBottom}
	fmt.Fprintf(&s.b, `<svg class="chart" id="%s" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		id, chartW, height, html.EscapeString(title))
	fmt.Fprintf(&s.b, `<title>%s</title>`, html.EscapeString(title))
	return s
}

func (s *svg) html() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String()) // built here from numbers and escaped text only
}

// y maps a value to the vertical pixel.
func (s *svg) y(v float64) float64 {
	if s.yMax <= 0 {
		return s.y1
	}
	return s.y1 - (s.y1-s.y0)*math.Min(v, s.yMax*1.02)/s.yMax
}

func (s *svg) path(class, series string, points int, d string) {
	fmt.Fprintf(&s.b, `<path class="%s" data-series="%s" data-points="%d" d="%s"/>`, class, series, points, d)
}

func (s *svg) line(x1, y1, x2, y2 float64, class string) {
	fmt.Fprintf(&s.b, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, class, x1, y1, x2, y2)
}

func (s *svg) text(x, y float64, anchor, class, text string) {
	fmt.Fprintf(&s.b, `<text class="%s" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, class, x, y, anchor, html.EscapeString(text))
}

func (s *svg) rect(x, y, w, h float64, class string) {
	fmt.Fprintf(&s.b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, class, x, y, math.Max(w, 0), math.Max(h, 0))
}

// legend draws swatches and labels along the top.
func (s *svg) legend(items ...[2]string) {
	x := s.x0
	for _, it := range items {
		s.rect(x, 8, 14, 9, "swatch "+it[0])
		s.text(x+18, 16.5, "start", "legend", it[1])
		x += 24 + 6.2*float64(len(it[1]))
	}
}

// yAxis sets the scale to a round maximum above top and draws its grid.
func (s *svg) yAxis(top float64, format func(float64) string) {
	step := niceStep(top, 5)
	s.yMax = math.Ceil(top/step-1e-9) * step
	if s.yMax <= 0 {
		s.yMax, step = 1, 0.2
	}
	for v := 0.0; v <= s.yMax+step/2; v += step {
		y := s.y(v)
		s.line(s.x0, y, s.x1, y, "grid")
		s.text(s.x0-6, y+4, "end", "tick", format(v))
	}
}

// niceStep is a 1, 2 or 5 × 10^k step giving about n intervals up to top.
func niceStep(top float64, n int) float64 {
	if !(top > 0) || math.IsInf(top, 0) {
		return 1
	}
	raw := top / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// timeAxis maps [from, to) onto the data area and draws day ticks in loc.
type timeAxis struct {
	from, to time.Time
	x0, x1   float64
}

func (a timeAxis) x(t time.Time) float64 {
	span := a.to.Sub(a.from).Seconds()
	if span <= 0 {
		return a.x0
	}
	return a.x0 + (a.x1-a.x0)*t.Sub(a.from).Seconds()/span
}

func (s *svg) timeTicks(a timeAxis, loc *time.Location) {
	days := a.to.Sub(a.from).Hours() / 24
	every := 1
	switch {
	case days > 42:
		every = 14
	case days > 21:
		every = 7
	case days > 10:
		every = 2
	}
	if days <= 2 { // hours
		h := a.from.In(loc).Truncate(time.Hour)
		stepH := 6
		if days <= 0.5 {
			stepH = 2
		}
		for t := h; t.Before(a.to); t = t.Add(time.Hour) {
			if t.Before(a.from) || t.In(loc).Hour()%stepH != 0 {
				continue
			}
			x := a.x(t)
			s.line(x, s.y1, x, s.y1+4, "axis")
			s.text(x, s.y1+16, "middle", "tick", t.In(loc).Format("15:04"))
		}
		return
	}
	local := a.from.In(loc)
	d := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	for i := 0; d.Before(a.to); d, i = d.AddDate(0, 0, 1), i+1 {
		if d.Before(a.from) {
			continue
		}
		x := a.x(d)
		s.line(x, s.y0, x, s.y1, "daygrid")
		if i%every == 0 && x < s.x1-20 {
			s.text(x+3, s.y1+16, "start", "tick", d.Format("Mon 2"))
		}
	}
	s.line(s.x0, s.y1, s.x1, s.y1, "axis")
}

// demandChart draws the recent history, the forecast mean and its bands.
func demandChart(rep *Report) template.HTML {
	fc, hist := rep.Forecast, rep.recent
	s := newSVG("demand-chart", "Demand: the last two weeks and the forecast with its 80% and 95% bands (requests/s)", 300)
	a := timeAxis{from: hist.start, to: fc.Start.Add(time.Duration(len(fc.Points)) * time.Duration(fc.Step)), x0: s.x0, x1: s.x1}
	if len(hist.values) == 0 {
		a.from = fc.Start
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
	s.yAxis(top*1.05, func(v float64) string { return compact(v) })
	s.timeTicks(a, rep.loc)
	step := time.Duration(fc.Step)
	band := func(lo, hi func(ForecastPoint) float64) (string, int) {
		var b strings.Builder
		for i, p := range fc.Points {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&b, "%s%.1f %.1f", cmd, a.x(p.At.Add(step/2)), s.y(hi(p)))
		}
		for i := len(fc.Points) - 1; i >= 0; i-- {
			p := fc.Points[i]
			fmt.Fprintf(&b, "L%.1f %.1f", a.x(p.At.Add(step/2)), s.y(lo(p)))
		}
		if len(fc.Points) > 0 {
			b.WriteString("Z")
		}
		return b.String(), len(fc.Points)
	}
	d, n := band(func(p ForecastPoint) float64 { return p.Lower95 }, func(p ForecastPoint) float64 { return p.Upper95 })
	s.path("band95", "band95", n, d)
	d, n = band(func(p ForecastPoint) float64 { return p.Lower80 }, func(p ForecastPoint) float64 { return p.Upper80 })
	s.path("band80", "band80", n, d)
	var pts []xy
	for i, v := range hist.values {
		pts = append(pts, xy{a.x(hist.start.Add(time.Duration(i)*hist.step + hist.step/2)), v})
	}
	d, n = polyline(s, pts)
	s.path("line history", "history", n, d)
	pts = pts[:0]
	for _, p := range fc.Points {
		pts = append(pts, xy{a.x(p.At.Add(step / 2)), p.Mean})
	}
	d, n = polyline(s, pts)
	s.path("line forecast", "forecast", n, d)
	x := a.x(fc.Start)
	s.line(x, s.y0, x, s.y1, "now")
	s.text(x+4, s.y0+10, "start", "note", "forecast from "+fc.Start.In(rep.loc).Format("Mon 2 Jan 15:04"))
	s.legend([2]string{"history", "recorded"}, [2]string{"forecast", "forecast (mean)"}, [2]string{"band80", "80% band"}, [2]string{"band95", "95% band"})
	return s.html()
}

type xy struct{ x, v float64 }

// polyline joins the points, breaking at NaN.
func polyline(s *svg, pts []xy) (string, int) {
	var b strings.Builder
	n, pen := 0, false
	for _, p := range pts {
		if math.IsNaN(p.v) {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&b, "%s%.1f %.1f", cmd, p.x, s.y(p.v))
		pen = true
		n++
	}
	return b.String(), n
}

// planChart draws the plan's instances over the horizon, the need of the
// forecast mean, the reserved baseline and max.
func planChart(rep *Report) template.HTML {
	p := rep.Plan
	k := rep.Reserved.Recommended
	s := newSVG("plan-chart", "The pre-warm plan: instances asked for over the horizon, the reserved baseline and max", 280)
	a := timeAxis{from: p.Start, to: p.End, x0: s.x0, x1: s.x1}
	top := float64(max(p.Peak, k, 1))
	showMax := float64(rep.Capacity.Max) <= 1.5*top
	if showMax {
		top = math.Max(top, float64(rep.Capacity.Max))
	}
	s.yAxis(top*1.08, func(v float64) string { return compact(v) })
	s.timeTicks(a, rep.loc)
	// The plan as a step area, the baseline over it.
	var area, line strings.Builder
	fmt.Fprintf(&area, "M%.1f %.1f", a.x(p.Start), s.y(0))
	for i, st := range p.Changes {
		next := p.End
		if i+1 < len(p.Changes) {
			next = p.Changes[i+1].At
		}
		y := s.y(float64(st.Desired))
		fmt.Fprintf(&area, "L%.1f %.1fL%.1f %.1f", a.x(st.At), y, a.x(next), y)
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&line, "%s%.1f %.1fL%.1f %.1f", cmd, a.x(st.At), y, a.x(next), y)
	}
	fmt.Fprintf(&area, "L%.1f %.1fZ", a.x(p.End), s.y(0))
	s.path("burst-area", "plan-area", len(p.Changes), area.String())
	if k > 0 {
		s.rect(s.x0, s.y(float64(k)), s.x1-s.x0, s.y(0)-s.y(float64(k)), "reserved-area")
		s.line(s.x0, s.y(float64(k)), s.x1, s.y(float64(k)), "reserved-line")
	}
	var need []xy
	for _, h := range p.Hours {
		need = append(need, xy{a.x(h.Start.Add(30 * time.Minute)), float64(h.NeedMean)})
	}
	d, n := polyline(s, need)
	s.path("line need", "need", n, d)
	s.path("line plan", "plan", len(p.Changes), line.String())
	if showMax {
		y := s.y(float64(rep.Capacity.Max))
		s.line(s.x0, y, s.x1, y, "max-line")
		s.text(s.x0+4, y-4, "start", "note warn", fmt.Sprintf("max %d", rep.Capacity.Max))
	} else {
		s.text(s.x1-4, s.y0+10, "end", "note", fmt.Sprintf("max %d (off the chart)", rep.Capacity.Max))
	}
	s.legend([2]string{"plan", "instances asked for"}, [2]string{"reserved-area", fmt.Sprintf("reserved baseline (%d)", k)},
		[2]string{"burst-area", "burst (on demand / spot)"}, [2]string{"need", "need at the mean"})
	return s.html()
}

// reservedChart draws each level's busy share against the break-even.
func reservedChart(rep *Report) template.HTML {
	r := rep.Reserved
	s := newSVG("reserved-chart", "Busy share of each instance level under the forecast, against the break-even of a reservation", 250)
	// The levels from 1 up to the last one needed at least 0.5% of the
	// time (and a few past the advice).
	var levels []Level
	for _, l := range r.Levels {
		if l.Instances >= 1 && (l.BusyShare >= 0.005 || l.Instances <= r.Recommended+3) {
			levels = append(levels, l)
		}
	}
	s.yAxis(1, func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) })
	n := max(len(levels), 1)
	w := (s.x1 - s.x0) / float64(n)
	labelEvery := int(math.Ceil(float64(n) / 20))
	for i, l := range levels {
		class := "bar burst"
		if l.Instances <= r.Recommended {
			class = "bar reserved"
		}
		x := s.x0 + float64(i)*w
		fmt.Fprintf(&s.b, `<path class="%s" data-series="busy" data-points="1" d="M%.1f %.1fh%.1fV%.1fh%.1fZ"/>`,
			class, x+w*0.12, s.y(0), w*0.76, s.y(l.BusyShare), -w*0.76)
		if (l.Instances)%labelEvery == 0 || l.Instances == r.Recommended {
			s.text(x+w/2, s.y1+14, "middle", "tick", fmt.Sprint(l.Instances))
		}
	}
	if r.BreakEven > 0 && r.BreakEven <= 1 {
		y := s.y(r.BreakEven)
		s.line(s.x0, y, s.x1, y, "breakeven")
		s.text(s.x1-4, y-5, "end", "note", fmt.Sprintf("break-even %.0f%%: reserve below, burst above", 100*r.BreakEven))
	}
	s.text((s.x0+s.x1)/2, s.h-4, "middle", "tick", "k-th instance (1 = the first)")
	s.legend([2]string{"reserved", "reserve"}, [2]string{"burst", "buy by the hour"})
	return s.html()
}

// backtestChart draws each policy's cost and SLO attainment.
func backtestChart(rep *Report) template.HTML {
	b := rep.Backtest
	s := newSVG("backtest-chart", "Cost of each policy over the backtest's weeks", 44+34*float64(len(b.Policies)))
	s.x0 = 110
	top := 0.0
	for _, p := range b.Policies {
		top = math.Max(top, p.Cost)
	}
	scale := (s.x1 - s.x0 - 260) / math.Max(top, 1e-9)
	for i, p := range b.Policies {
		y := s.y0 + float64(i)*34
		class := "bar burst"
		if p.Name == "hybrid" {
			class = "bar reserved"
		}
		fmt.Fprintf(&s.b, `<path class="%s" data-series="cost" data-points="1" d="M%.1f %.1fh%.1fv22h%.1fZ"/>`, class, s.x0, y, p.Cost*scale, -p.Cost*scale)
		s.text(s.x0-8, y+15, "end", "label", p.Name)
		s.text(s.x0+p.Cost*scale+6, y+15, "start", "tick", fmt.Sprintf("%s · %.0f GPU-h · SLO %.2f%%", money(p.Cost), p.GPUHours, 100*p.SLOAttainment))
	}
	return s.html()
}

// compact formats an axis value: 0, 2.5, 40, 1.2k.
func compact(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 10 || a == 0:
		return fmt.Sprintf("%.0f", v)
	default:
		return trimZero(fmt.Sprintf("%.2f", v))
	}
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
