package chart

import "math"

// Point is a pixel position.
type Point struct{ X, Y float64 }

// Path is a sequence of subpaths, each a polyline, closed or open. A
// non-finite point ends the current subpath: the gap is left undrawn.
type Path struct {
	subs []subpath
}

type subpath struct {
	pts    []Point
	closed bool
}

// MoveTo starts a new subpath at (x, y).
func (p *Path) MoveTo(x, y float64) {
	if !finite(x, y) {
		p.subs = append(p.subs, subpath{})
		return
	}
	p.subs = append(p.subs, subpath{pts: []Point{{x, y}}})
}

// LineTo extends the current subpath to (x, y), or starts one there.
func (p *Path) LineTo(x, y float64) {
	if !finite(x, y) {
		p.subs = append(p.subs, subpath{})
		return
	}
	if n := len(p.subs); n > 0 && !p.subs[n-1].closed {
		p.subs[n-1].pts = append(p.subs[n-1].pts, Point{x, y})
		return
	}
	p.MoveTo(x, y)
}

// Close joins the current subpath's end to its start.
func (p *Path) Close() {
	if n := len(p.subs); n > 0 && len(p.subs[n-1].pts) > 0 {
		p.subs[n-1].closed = true
	}
}

// Append adds q's subpaths to p.
func (p *Path) Append(q *Path) { p.subs = append(p.subs, q.subs...) }

// drawn are the subpaths with a segment.
func (p *Path) drawn() []subpath {
	var out []subpath
	for _, s := range p.subs {
		if len(s.pts) > 1 {
			out = append(out, s)
		}
	}
	return out
}

func (p *Path) empty() bool { return len(p.drawn()) == 0 }

// Polyline joins the points in order, breaking at any with a non-finite
// coordinate, and returns the path with how many points it drew.
func Polyline(pts []Point) (*Path, int) {
	p, n, pen := &Path{}, 0, false
	for _, pt := range pts {
		if !finite(pt.X, pt.Y) {
			pen = false
			continue
		}
		if pen {
			p.LineTo(pt.X, pt.Y)
		} else {
			p.MoveTo(pt.X, pt.Y)
		}
		pen = true
		n++
	}
	return p, n
}

// RectPath is the closed rectangle with top-left corner (x, y).
func RectPath(x, y, w, h float64) *Path {
	p := &Path{}
	p.MoveTo(x, y)
	p.LineTo(x+w, y)
	p.LineTo(x+w, y+h)
	p.LineTo(x, y+h)
	p.Close()
	return p
}

// circleSides is how many sides a drawn circle has: at a chart's dot
// sizes, a polygon this fine is round to the eye.
const circleSides = 20

// CirclePath is a circle of radius r about (x, y), as a closed polygon
// (so every renderer draws it the same way).
func CirclePath(x, y, r float64) *Path {
	p := &Path{}
	if !finite(x, y, r) || r <= 0 {
		return p
	}
	for i := range circleSides {
		a := -2 * math.Pi * float64(i) / circleSides
		p.LineTo(x+r*math.Cos(a), y+r*math.Sin(a))
	}
	p.Close()
	return p
}
