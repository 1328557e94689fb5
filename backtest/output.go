package backtest

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CapacityCSVHeader is the header of WriteCapacityCSV's output.
var CapacityCSVHeader = []string{"timestamp", "demand_rps", "ready", "desired", "billed"}

// WriteCapacityCSV writes one row per trace step of a policy's run:
// timestamp (RFC 3339), demand_rps (empty for a step with no data), and the
// time-averaged ready, desired and billed instance counts over the step.
// Billed counts booting and draining instances too, so Σ billed × step is
// the run's GPU-hours.
func WriteCapacityCSV(w io.Writer, r Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CapacityCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range r.Capacity {
		demand := ""
		if !math.IsNaN(p.DemandRPS) {
			demand = f(p.DemandRPS)
		}
		rec := []string{p.At.Format(time.RFC3339), demand, f(round6(p.Ready)), f(round6(p.Desired)), f(round6(p.Billed))}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// Plot sizes for WritePlot.
const (
	PlotWidth  = 30 * vg.Centimeter
	PlotHeight = 11 * vg.Centimeter
)

// PlotCapacity draws one policy's run: demand (requests/s) against the
// requests/s its ready instances could serve (ready × rpsPerInstance),
// with the under-provisioned steps marked.
func PlotCapacity(r Result, trace string, rpsPerInstance float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: demand vs capacity, policy %s (cost x%.2f of static, SLO %.2f%%)",
		trace, r.Name, r.CostVsStatic, 100*r.SLOAttainment)
	p.X.Label.Text = "time (UTC)"
	p.Y.Label.Text = "requests/s"
	p.X.Tick.Marker = plot.TimeTicks{Format: "01-02"}
	p.Legend.Top = true
	p.Legend.YOffs = vg.Points(-4)
	p.Legend.XOffs = vg.Points(-8)
	demand := make(plotter.XYs, 0, len(r.Capacity))
	capacity := make(plotter.XYs, len(r.Capacity))
	var short plotter.XYs
	for i, c := range r.Capacity {
		x := float64(c.At.Unix())
		capacity[i] = plotter.XY{X: x, Y: c.Ready * rpsPerInstance}
		if math.IsNaN(c.DemandRPS) {
			continue // no data: no demand drawn
		}
		demand = append(demand, plotter.XY{X: x, Y: c.DemandRPS})
		if c.Underprovisioned > 0 {
			short = append(short, plotter.XY{X: x, Y: c.DemandRPS})
		}
	}
	capLine, err := plotter.NewLine(capacity)
	if err != nil {
		return nil, err
	}
	capLine.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	capLine.FillColor = color.NRGBA{R: 31, G: 119, B: 180, A: 60}
	capLine.Width = vg.Points(0.8)
	demLine, err := plotter.NewLine(demand)
	if err != nil {
		return nil, err
	}
	demLine.Color = color.RGBA{R: 40, G: 40, B: 40, A: 255}
	demLine.Width = vg.Points(0.6)
	p.Add(capLine, demLine)
	p.Legend.Add("ready capacity", capLine)
	p.Legend.Add("demand", demLine)
	if len(short) > 0 {
		sc, err := plotter.NewScatter(short)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{R: 214, G: 39, B: 40, A: 255}, Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		p.Legend.Add("under-provisioned", sc)
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// PlotTradeoff draws each policy as a point: cost relative to static
// against SLO attainment, the trade-off a user chooses on.
func PlotTradeoff(rep Report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = rep.Trace + ": cost vs SLO attainment per policy"
	p.X.Label.Text = "cost relative to static"
	p.Y.Label.Text = "SLO attainment (%)"
	pts := make(plotter.XYs, len(rep.Policies))
	labels := make([]string, len(rep.Policies))
	for i, r := range rep.Policies {
		pts[i] = plotter.XY{X: r.CostVsStatic, Y: 100 * r.SLOAttainment}
		labels[i] = r.Name
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{R: 31, G: 119, B: 180, A: 255}, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = draw.XLeft
		lb.TextStyle[i].YAlign = draw.YBottom
	}
	lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(3)}
	p.Add(plotter.NewGrid(), sc, lb)
	// Room right of static (x1) for its label, and for any policy that
	// costs more than static (over-eager reactive rules, say).
	p.X.Min, p.X.Max = 0, 1.15
	lo := 100.0
	for _, pt := range pts {
		lo = min(lo, pt.Y)
		p.X.Max = max(p.X.Max, 1.15*pt.X)
	}
	p.Y.Min, p.Y.Max = lo-0.1*(100.5-lo)-0.1, 100.3
	return p, nil
}

// WritePlot renders p as format ("png" or "svg") at the standard size.
func WritePlot(w io.Writer, p *plot.Plot, format string, width, height vg.Length) error {
	wt, err := p.WriterTo(width, height, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// policyColours are the frontier plot's colours per policy.
var policyColours = map[string]color.RGBA{
	PolicyReactive:   {R: 214, G: 39, B: 40, A: 255},
	PolicyPredictive: {R: 44, G: 160, B: 44, A: 255},
	PolicyHybrid:     {R: 31, G: 119, B: 180, A: 255},
	PolicyFlat:       {R: 127, G: 127, B: 127, A: 255},
	PolicyOracle:     {R: 0, G: 0, B: 0, A: 255},
}

// nines maps an SLO attainment to −log10(1 − a), so 99%, 99.9% and 99.99%
// are evenly spaced; it is capped at 4 nines (100% is drawn at 99.99%).
func nines(a float64) float64 { return math.Min(4, -math.Log10(math.Max(1-a, 1e-4))) }

// ninesTicks labels the nines axis with attainments.
type ninesTicks struct{}

func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, label := range []string{"50", "80", "90", "95", "99", "99.5", "99.9", "99.99"} {
		a, _ := strconv.ParseFloat(label, 64)
		if x := nines(a / 100); x >= lo && x <= hi {
			out = append(out, plot.Tick{Value: x, Label: label + "%"})
		}
	}
	return out
}

// PlotFrontier draws every frontier trial as a point, cost relative to
// static against SLO attainment (on a scale of nines), one colour per
// policy, each policy's cheapest-at-each-attainment front as a line, and
// the SLO targets as vertical lines: where a policy's front crosses a
// target is its cost at that SLO. defaults, the report's runs, are ringed:
// where the defaults sit against the sweep.
func PlotFrontier(trace string, trials []FrontierTrial, targets []float64, defaults []Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = trace + ": cost vs SLO attainment, every setting tried"
	p.X.Label.Text = "SLO attainment (share of requests within the latency SLO)"
	p.Y.Label.Text = "cost relative to static"
	p.X.Tick.Marker = ninesTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	loX, hiX, hiY := 5.0, 0.0, 1.0
	for _, t := range trials {
		hiY = math.Max(hiY, t.CostVsStatic)
	}
	for _, policy := range []string{PolicyReactive, PolicyPredictive, PolicyHybrid, PolicyFlat, PolicyOracle} {
		var pts plotter.XYs
		for _, t := range trials {
			if t.Policy == policy {
				pts = append(pts, plotter.XY{X: nines(t.SLOAttainment), Y: t.CostVsStatic})
			}
		}
		if len(pts) == 0 {
			continue
		}
		col := policyColours[policy]
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		p.Legend.Add(policy, sc)
		front := paretoFront(pts)
		if len(front) > 1 {
			l, err := plotter.NewLine(front)
			if err != nil {
				return nil, err
			}
			l.Color = col
			l.Width = vg.Points(1)
			p.Add(l)
		}
		for _, pt := range pts {
			loX, hiX = math.Min(loX, pt.X), math.Max(hiX, pt.X)
		}
	}
	for _, r := range defaults {
		col, ok := policyColours[r.Name]
		if !ok || r.Name == PolicyFlat || r.Name == PolicyOracle {
			continue
		}
		pt := plotter.XYs{{X: nines(r.SLOAttainment), Y: r.CostVsStatic}}
		sc, err := plotter.NewScatter(pt)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
		p.Add(sc)
		p.Legend.Add(r.Name+" (defaults)", sc)
		loX, hiX = math.Min(loX, pt[0].X), math.Max(hiX, pt[0].X)
	}
	for _, q := range targets {
		x := nines(q)
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: 1.05 * hiY}})
		if err != nil {
			return nil, err
		}
		l.Color = color.RGBA{R: 150, G: 150, B: 150, A: 255}
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(l)
		loX, hiX = math.Min(loX, x), math.Max(hiX, x)
	}
	p.X.Min, p.X.Max = math.Max(0, loX-0.2), hiX+0.2
	p.Y.Min = 0
	return p, nil
}

// paretoFront returns, sorted by attainment, the points no other point
// beats on both attainment (higher) and cost (lower).
func paretoFront(pts plotter.XYs) plotter.XYs {
	s := append(plotter.XYs(nil), pts...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].X != s[j].X {
			return s[i].X > s[j].X
		}
		return s[i].Y < s[j].Y
	})
	var front plotter.XYs
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
