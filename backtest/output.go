package backtest

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CapacityCSVHeader is the header of WriteCapacityCSV's output.
var CapacityCSVHeader = []string{"timestamp", "demand_rps", "ready", "desired"}

// WriteCapacityCSV writes one row per trace step of a policy's run:
// timestamp (RFC 3339), demand_rps, and the time-averaged ready and desired
// instance counts over the step.
func WriteCapacityCSV(w io.Writer, r Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CapacityCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range r.Capacity {
		rec := []string{p.At.Format(time.RFC3339), f(p.DemandRPS), f(round3(p.Ready)), f(round3(p.Desired))}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

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
	demand := make(plotter.XYs, len(r.Capacity))
	capacity := make(plotter.XYs, len(r.Capacity))
	var short plotter.XYs
	for i, c := range r.Capacity {
		x := float64(c.At.Unix())
		demand[i] = plotter.XY{X: x, Y: c.DemandRPS}
		capacity[i] = plotter.XY{X: x, Y: c.Ready * rpsPerInstance}
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
