package chart

import (
	"math"
	"strings"
)

// Rect is a pixel rectangle: X0 left, X1 right, Y0 top, Y1 bottom.
type Rect struct{ X0, X1, Y0, Y1 float64 }

// Margins are the pixels between a canvas's edges and its plot area.
type Margins struct{ Left, Right, Top, Bottom float64 }

// Anchor is where a text's x lies along it.
type Anchor string

// The anchors, as SVG's text-anchor names them.
const (
	Start  Anchor = "start"
	Middle Anchor = "middle"
	End    Anchor = "end"
)

// Style is how a class of marks looks in a standalone SVG or a PNG (a
// page that embeds the chart inline styles the classes itself). A zero
// field is unset: a later class of the same mark, or SVG's default,
// decides it. Colours are "#rrggbb" or "none".
type Style struct {
	Fill, Stroke string
	StrokeWidth  float64   // pixels
	Dash         []float64 // on, off, … pixels
	Opacity      float64   // of the fill and the stroke, 0 < o ≤ 1
	FontSize     float64   // pixels
	Bold         bool
}

// Canvas is one chart being drawn: its size, its plot area and its marks
// in the order drawn (later marks over earlier ones).
type Canvas struct {
	ID, Title     string // the SVG's id and accessible title
	Width, Height float64
	Area          Rect // the plot area
	// Styles style the classes for WriteSVG and WritePNG. Where two of a
	// mark's classes set one property, the class later in alphabetical
	// order wins, as it does in the stylesheet.
	Styles map[string]Style
	marks  []mark
}

// mark is one path or one text.
type mark struct {
	class string
	// a path
	path   *Path
	series string // data-series, when the path draws one
	points int    // data-points, with series
	// a text
	text    string
	x, y    float64
	anchor  Anchor
	rotated bool // reads bottom to top
}

// New returns an empty canvas of width × height pixels whose plot area
// lies inside the margins.
func New(id, title string, width, height float64, m Margins) *Canvas {
	return &Canvas{ID: id, Title: title, Width: width, Height: height,
		Area: Rect{X0: m.Left, X1: width - m.Right, Y0: m.Top, Y1: height - m.Bottom}}
}

// Path draws p with class.
func (c *Canvas) Path(class string, p *Path) {
	if p != nil && !p.empty() {
		c.marks = append(c.marks, mark{class: class, path: p})
	}
}

// Series draws p with class as the data series name of points points: the
// SVG's path carries data-series and data-points, which page tests count.
// It is drawn even when empty, so a series with no data is still there to
// find.
func (c *Canvas) Series(class, name string, points int, p *Path) {
	if p == nil {
		p = &Path{}
	}
	c.marks = append(c.marks, mark{class: class, path: p, series: name, points: points})
}

// Line draws a straight line.
func (c *Canvas) Line(class string, x1, y1, x2, y2 float64) {
	p := &Path{}
	p.MoveTo(x1, y1)
	p.LineTo(x2, y2)
	c.Path(class, p)
}

// Rect draws a rectangle from its top-left corner; a negative size is
// drawn as none.
func (c *Canvas) Rect(class string, x, y, w, h float64) {
	c.Path(class, RectPath(x, y, math.Max(w, 0), math.Max(h, 0)))
}

// Text writes text with its baseline at y.
func (c *Canvas) Text(class string, x, y float64, anchor Anchor, text string) {
	if finite(x, y) && text != "" {
		c.marks = append(c.marks, mark{class: class, text: text, x: x, y: y, anchor: anchor})
	}
}

// TextUp writes text reading bottom to top, centred on y, with its
// baseline at x (a y axis's label).
func (c *Canvas) TextUp(class string, x, y float64, text string) {
	if finite(x, y) && text != "" {
		c.marks = append(c.marks, mark{class: class, text: text, x: x, y: y, anchor: Middle, rotated: true})
	}
}

// Heading writes the chart's visible title, centred above the legend, in
// class "title".
func (c *Canvas) Heading(text string) {
	c.Text("title", c.Width/2, 18, Middle, text)
}

// XLabel names the x axis under its tick labels, in class "axis-label".
func (c *Canvas) XLabel(text string) {
	c.Text("axis-label", (c.Area.X0+c.Area.X1)/2, c.Height-6, Middle, text)
}

// YLabel names the y axis left of its tick labels, in class "axis-label".
func (c *Canvas) YLabel(text string) {
	c.TextUp("axis-label", 14, (c.Area.Y0+c.Area.Y1)/2, text)
}

// LegendKind is how a legend item shows its series.
type LegendKind int

// The legend's keys: a filled box, a dot, a ring, a short line.
const (
	Swatch LegendKind = iota
	Dot
	Ring
	Stroke
)

// LegendItem is one key: the class its mark is drawn in (the series'
// colour), and its label.
type LegendItem struct {
	Class, Label string
	Kind         LegendKind
}

// Legend draws the keys in a row just above the plot area, from its left
// edge; each key's mark has class "swatch" and the item's class.
func (c *Canvas) Legend(items ...LegendItem) {
	x, top := c.Area.X0, c.Area.Y0-18
	for _, it := range items {
		class := "swatch " + it.Class
		switch it.Kind {
		case Dot:
			c.Path(class, CirclePath(x+7, top+4.5, 3.5))
		case Ring:
			c.Path(class, CirclePath(x+7, top+4.5, 4))
		case Stroke:
			c.Line(class, x, top+4.5, x+14, top+4.5)
		default:
			c.Rect(class, x, top, 14, 9)
		}
		c.Text("legend", x+18, top+8.5, Start, it.Label)
		x += 24 + 6.6*float64(len(it.Label))
	}
}

// classes splits a mark's class into its names.
func classes(class string) []string { return strings.Fields(class) }

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
