package chart

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// defaultFontSize is the text size, in pixels, of a class with none.
const defaultFontSize = 12

// WritePNG rasterizes the chart at its size in pixels, on white, with
// Styles deciding each class's look (anti-aliased, the Go fonts for
// text).
func (c *Canvas) WritePNG(w io.Writer) error {
	if !finite(c.Width, c.Height) || c.Width < 1 || c.Height < 1 || c.Width > 1<<14 || c.Height > 1<<14 {
		return fmt.Errorf("chart size %gx%g pixels: want 1 to 16384 each way", c.Width, c.Height)
	}
	wd, ht := int(math.Ceil(c.Width)), int(math.Ceil(c.Height))
	img := image.NewRGBA(image.Rect(0, 0, wd, ht))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	r := &raster{img: img, z: vector.NewRasterizer(wd, ht), faces: map[faceKey]font.Face{}}
	order := slices.Sorted(maps.Keys(c.Styles)) // the stylesheet's order
	for _, m := range c.marks {
		st := c.resolve(m, order)
		var err error
		if m.path != nil {
			r.path(m.path, st)
		} else {
			err = r.text(m, st)
		}
		if err != nil {
			return err
		}
	}
	return png.Encode(w, img)
}

// resolved is a mark's style once its classes and SVG's defaults apply:
// where two of its classes set one property, the class later in
// alphabetical order wins, as it does in WriteSVG's stylesheet.
type resolved struct {
	fill, stroke color.NRGBA // alpha 0: none
	width        float64
	dash         []float64
	size         float64
	bold         bool
}

func (c *Canvas) resolve(m mark, order []string) resolved {
	st := Style{Fill: "#000000", StrokeWidth: 1, Opacity: 1, FontSize: defaultFontSize}
	has := classes(m.class)
	for _, name := range order {
		if !slices.Contains(has, name) {
			continue
		}
		s := c.Styles[name]
		if s.Fill != "" {
			st.Fill = s.Fill
		}
		if s.Stroke != "" {
			st.Stroke = s.Stroke
		}
		if s.StrokeWidth > 0 {
			st.StrokeWidth = s.StrokeWidth
		}
		if len(s.Dash) > 0 {
			st.Dash = s.Dash
		}
		if s.Opacity > 0 {
			st.Opacity = s.Opacity
		}
		if s.FontSize > 0 {
			st.FontSize = s.FontSize
		}
		st.Bold = st.Bold || s.Bold
	}
	return resolved{fill: colour(st.Fill, st.Opacity), stroke: colour(st.Stroke, st.Opacity),
		width: st.StrokeWidth, dash: st.Dash, size: st.FontSize, bold: st.Bold}
}

// colour parses "#rrggbb" at an opacity; anything else is none.
func colour(s string, opacity float64) color.NRGBA {
	if len(s) != 7 || s[0] != '#' {
		return color.NRGBA{}
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.NRGBA{}
	}
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: uint8(math.Round(255 * math.Min(1, opacity)))}
}

type faceKey struct {
	size float64
	bold bool
}

// raster draws marks onto an image.
type raster struct {
	img   *image.RGBA
	z     *vector.Rasterizer
	faces map[faceKey]font.Face
}

// fillPolygons paints the polygons' union with col.
func (r *raster) fillPolygons(polys [][]Point, col color.NRGBA) {
	if col.A == 0 || len(polys) == 0 {
		return
	}
	b := r.img.Bounds()
	r.z.Reset(b.Dx(), b.Dy())
	for _, poly := range polys {
		if len(poly) < 3 {
			continue
		}
		r.z.MoveTo(float32(poly[0].X), float32(poly[0].Y))
		for _, p := range poly[1:] {
			r.z.LineTo(float32(p.X), float32(p.Y))
		}
		r.z.ClosePath()
	}
	r.z.Draw(r.img, b, image.NewUniform(col), image.Point{})
}

func (r *raster) path(p *Path, st resolved) {
	subs := p.drawn()
	var fill [][]Point
	for _, s := range subs {
		fill = append(fill, s.pts)
	}
	r.fillPolygons(fill, st.fill)
	if st.stroke.A == 0 || st.width <= 0 {
		return
	}
	var stroke [][]Point
	for _, s := range subs {
		pts := s.pts
		if s.closed && len(pts) > 1 {
			pts = append(append([]Point(nil), pts...), pts[0])
		}
		for _, piece := range dashes(pts, st.dash) {
			stroke = append(stroke, strokePolygons(piece, st.width/2)...)
		}
	}
	r.fillPolygons(stroke, st.stroke)
}

// joinHalfWidth is the half-width above which a stroke's joints get round
// joins: below it, the notch between two segments is under a pixel, and
// a disc over a segment's anti-aliased edge would darken it (the
// rasterizer adds the coverage of overlapping polygons).
const joinHalfWidth = 1.0

// strokePolygons covers a polyline of half-width hw: a quadrilateral per
// segment and, for a wide stroke, a disc at each inner joint (round joins,
// butt ends), all wound one way so that the rasterizer unions them.
func strokePolygons(pts []Point, hw float64) [][]Point {
	var out [][]Point
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		dx, dy := b.X-a.X, b.Y-a.Y
		l := math.Hypot(dx, dy)
		if l == 0 {
			continue
		}
		nx, ny := -dy/l*hw, dx/l*hw
		out = append(out, []Point{{a.X + nx, a.Y + ny}, {b.X + nx, b.Y + ny}, {b.X - nx, b.Y - ny}, {a.X - nx, a.Y - ny}})
		if i < len(pts)-1 && hw > joinHalfWidth {
			out = append(out, CirclePath(b.X, b.Y, hw).subs[0].pts)
		}
	}
	return out
}

// dashes cuts a polyline into its dashes; with no pattern, it is whole.
func dashes(pts []Point, pattern []float64) [][]Point {
	total := 0.0
	for _, v := range pattern {
		total += v
	}
	if len(pattern) == 0 || !(total > 0) || len(pts) < 2 {
		return [][]Point{pts}
	}
	var out [][]Point
	cur := []Point{pts[0]}
	k, left, on := 0, pattern[0], true // left: what remains of the dash or gap
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		seg := math.Hypot(b.X-a.X, b.Y-a.Y)
		pos := 0.0
		for seg-pos > left {
			pos += left
			t := pos / seg
			p := Point{a.X + t*(b.X-a.X), a.Y + t*(b.Y-a.Y)}
			if on {
				out = append(out, append(cur, p))
				cur = nil
			} else {
				cur = []Point{p}
			}
			on = !on
			k = (k + 1) % len(pattern)
			left = pattern[k]
		}
		left -= seg - pos
		if on {
			cur = append(cur, b)
		}
	}
	if on && len(cur) > 1 {
		out = append(out, cur)
	}
	return out
}

// face is the Go font at size pixels.
func (r *raster) face(size float64, bold bool) (font.Face, error) {
	key := faceKey{size, bold}
	if f, ok := r.faces[key]; ok {
		return f, nil
	}
	ttf := goregular.TTF
	if bold {
		ttf = gobold.TTF
	}
	parsed, err := opentype.Parse(ttf)
	if err != nil {
		return nil, fmt.Errorf("the chart font: %w", err)
	}
	f, err := opentype.NewFace(parsed, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, fmt.Errorf("the chart font at %g pixels: %w", size, err)
	}
	r.faces[key] = f
	return f, nil
}

// text draws a text mark: its glyphs are rendered into a mask, turned a
// quarter for a rotated one, and painted in the fill colour.
func (r *raster) text(m mark, st resolved) error {
	if st.fill.A == 0 {
		return nil
	}
	f, err := r.face(st.size, st.bold)
	if err != nil {
		return err
	}
	met := f.Metrics()
	asc, desc := met.Ascent.Ceil(), met.Descent.Ceil()
	adv := font.MeasureString(f, m.text).Ceil()
	if adv <= 0 {
		return nil
	}
	mask := image.NewAlpha(image.Rect(0, 0, adv, asc+desc))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: f, Dot: fixed.P(0, asc)}
	d.DrawString(m.text)
	shift := map[Anchor]float64{Start: 0, Middle: float64(adv) / 2, End: float64(adv)}[m.anchor]
	var at image.Point
	if m.rotated {
		mask = turnUp(mask)
		at = image.Pt(int(math.Round(m.x))-asc, int(math.Round(m.y-float64(adv)+shift)))
	} else {
		at = image.Pt(int(math.Round(m.x-shift)), int(math.Round(m.y))-asc)
	}
	dst := mask.Bounds().Add(at)
	draw.DrawMask(r.img, dst, image.NewUniform(st.fill), image.Point{}, mask, image.Point{}, draw.Over)
	return nil
}

// turnUp turns a mask a quarter counter-clockwise: its left edge becomes
// its bottom.
func turnUp(m *image.Alpha) *image.Alpha {
	b := m.Bounds()
	out := image.NewAlpha(image.Rect(0, 0, b.Dy(), b.Dx()))
	for y := range b.Dy() {
		for x := range b.Dx() {
			out.SetAlpha(y, b.Dx()-1-x, m.AlphaAt(x, y))
		}
	}
	return out
}
