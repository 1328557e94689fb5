package chart

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sampleChart draws values over a day as a line with a grid, a legend and
// labels, the way the report and the backtest use a canvas.
func sampleChart(values []float64) *Canvas {
	c := New("sample", `demand <a & b> (requests/s)`, 400, 240, Margins{Left: 50, Right: 10, Top: 50, Bottom: 40})
	c.Styles = map[string]Style{
		"line":  {Fill: "none", StrokeWidth: 2},
		"value": {Stroke: "#1f77b4"},
		"bar":   {Fill: "#d62728"},
		"area":  {Fill: "#1f77b4", Opacity: 0.24},
		"grid":  {Stroke: "#dddddd", Dash: []float64{3, 2}},
		"title": {FontSize: 14, Bold: true},
	}
	c.Heading(c.Title)
	c.XLabel("time (UTC)")
	c.YLabel("requests/s")
	top := 0.0
	for _, v := range values {
		if finite(v) {
			top = math.Max(top, v)
		}
	}
	upper, step := NiceMax(top, 5)
	y := Scale{Min: 0, Max: upper, From: c.Area.Y1, To: c.Area.Y0}
	c.YGrid(y, LinearTicks(0, upper, step, Compact))
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	x := TimeScale{Start: start, End: start.Add(24 * time.Hour), From: c.Area.X0, To: c.Area.X1}
	c.TimeTicks(x, time.UTC)
	pts := make([]Point, len(values))
	for i, v := range values {
		pts[i] = Point{X: x.At(start.Add(time.Duration(i) * time.Hour)), Y: y.At(v)}
	}
	line, n := Polyline(pts)
	c.Series("line value", "value", n, line)
	c.Rect("bar", c.Area.X0, c.Area.Y0, 20, 20)
	c.Legend(LegendItem{Class: "value", Label: "value", Kind: Stroke}, LegendItem{Class: "bar", Label: "bar"})
	return c
}

var chartInputs = []struct {
	name   string
	values []float64
	points int // drawn
}{
	{"empty", nil, 0},
	{"constant", []float64{5, 5, 5, 5}, 4},
	{"zeros", []float64{0, 0, 0}, 3},
	{"no data", []float64{math.NaN(), math.NaN()}, 0},
	{"infinite", []float64{1, math.Inf(1), math.Inf(-1), 2}, 4},
	{"gaps", []float64{1, 8, math.NaN(), 3, 40, 2}, 5},
}

func renderSVG(t *testing.T, c *Canvas) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wellFormed parses doc as XML to its end.
func wellFormed(doc string) error {
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		if _, err := d.Token(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

var nonFinite = regexp.MustCompile(`NaN|Inf`)

func TestSVGIsValidAndFinite(t *testing.T) {
	for _, tc := range chartInputs {
		c := sampleChart(tc.values)
		for form, doc := range map[string]string{"standalone": renderSVG(t, c), "inline": c.Inline()} {
			if err := wellFormed(doc); err != nil {
				t.Errorf("%s, %s: not XML: %v\n%s", tc.name, form, err, doc)
			}
			if m := nonFinite.FindString(doc); m != "" {
				t.Errorf("%s, %s: a coordinate is %s", tc.name, form, m)
			}
			for _, want := range []string{`data-series="value"`, `>time (UTC)</text>`, `>requests/s</text>`, `>value</text>`, `>bar</text>`,
				`<title>demand &lt;a &amp; b&gt; (requests/s)</title>`, `class="tick"`} {
				if !strings.Contains(doc, want) {
					t.Errorf("%s, %s: lacks %s", tc.name, form, want)
				}
			}
			if want := `data-points="` + strconv.Itoa(tc.points) + `"`; !strings.Contains(doc, want) {
				t.Errorf("%s, %s: want %s", tc.name, form, want)
			}
		}
	}
}

func TestStandaloneCarriesStylesAndSize(t *testing.T) {
	doc := renderSVG(t, sampleChart([]float64{1, 2}))
	for _, want := range []string{`width="400" height="240"`, `.line { fill: none; stroke-width: 2; }`,
		`.grid { stroke: #dddddd; stroke-dasharray: 3 2; }`, `<rect width="400" height="240" fill="#ffffff"/>`,
		`.area { fill: #1f77b4; fill-opacity: 0.24; stroke-opacity: 0.24; }`} {
		if !strings.Contains(doc, want) {
			t.Errorf("the standalone SVG lacks %s", want)
		}
	}
	if in := sampleChart([]float64{1, 2}).Inline(); strings.Contains(in, "<style") || strings.Contains(in, "width=") {
		t.Error("the inline SVG carries a stylesheet or a size; the page's CSS sets those")
	}
}

func TestOutputIsDeterministic(t *testing.T) {
	for _, tc := range chartInputs {
		var svg1, svg2, png1, png2 bytes.Buffer
		for _, out := range []struct{ svg, png *bytes.Buffer }{{&svg1, &png1}, {&svg2, &png2}} {
			c := sampleChart(tc.values)
			if err := c.WriteSVG(out.svg); err != nil {
				t.Fatal(err)
			}
			if err := c.WritePNG(out.png); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(svg1.Bytes(), svg2.Bytes()) || !bytes.Equal(png1.Bytes(), png2.Bytes()) {
			t.Errorf("%s: two renderings differ", tc.name)
		}
	}
}

func TestPNGDrawsTheMarks(t *testing.T) {
	for _, tc := range chartInputs {
		var b bytes.Buffer
		if err := sampleChart(tc.values).WritePNG(&b); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := img.Bounds().Size(); got.X != 400 || got.Y != 240 {
			t.Errorf("%s: %v pixels, want 400x240", tc.name, got)
		}
		// The bar's middle is its red; the background is white.
		if r, g, b, _ := img.At(60, 60).RGBA(); r>>8 != 0xd6 || g>>8 != 0x27 || b>>8 != 0x28 {
			t.Errorf("%s: the bar's pixel is %x %x %x, want d6 27 28", tc.name, r>>8, g>>8, b>>8)
		}
		if r, g, b, _ := img.At(399, 239).RGBA(); r>>8 != 0xff || g>>8 != 0xff || b>>8 != 0xff {
			t.Errorf("%s: the corner is %x %x %x, want white", tc.name, r>>8, g>>8, b>>8)
		}
	}
}

func TestPNGDrawsLinesAndText(t *testing.T) {
	c := New("t", "t", 100, 60, Margins{})
	c.Styles = map[string]Style{"blue": {Stroke: "#0000ff", StrokeWidth: 3}, "label": {Fill: "#ff0000", FontSize: 20}}
	c.Line("blue", 10, 10, 90, 10)
	c.Text("label", 50, 50, Middle, "MW")
	var b bytes.Buffer
	if err := c.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if r, g, bl, _ := img.At(50, 10).RGBA(); r>>8 > 10 || g>>8 > 10 || bl>>8 < 245 {
		t.Errorf("the line's pixel is %x %x %x, want blue", r>>8, g>>8, bl>>8)
	}
	red := 0
	for y := 30; y < 55; y++ {
		for x := 30; x < 70; x++ {
			if r, g, _, _ := img.At(x, y).RGBA(); r>>8 > 200 && g>>8 < 60 {
				red++
			}
		}
	}
	if red < 20 {
		t.Errorf("%d red pixels where the text is, want its glyphs", red)
	}
}

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Scale
		v    float64
		want float64
	}{
		{"inside", Scale{Min: 0, Max: 10, From: 100, To: 0}, 5, 50},
		{"above clamps at 2%", Scale{Min: 0, Max: 10, From: 100, To: 0}, 1000, -2},
		{"below clamps at 2%", Scale{Min: 0, Max: 10, From: 100, To: 0}, -1000, 102},
		{"+Inf", Scale{Min: 0, Max: 10, From: 0, To: 100}, math.Inf(1), 102},
		{"constant range", Scale{Min: 3, Max: 3, From: 7, To: 70}, 3, 7},
		{"reversed range", Scale{Min: 3, Max: 1, From: 7, To: 70}, 2, 7},
		{"infinite range", Scale{Min: 0, Max: math.Inf(1), From: 7, To: 70}, 2, 7},
	} {
		if got := tc.s.At(tc.v); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: At(%g) = %g, want %g", tc.name, tc.v, got, tc.want)
		}
	}
	if !math.IsNaN((Scale{Min: 0, Max: 1}).At(math.NaN())) {
		t.Error("NaN maps to a position; it must stay a gap")
	}
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := (TimeScale{Start: day, End: day, From: 5, To: 50}).At(day.Add(time.Hour)); got != 5 {
		t.Errorf("an empty time range maps to %g, want its start", got)
	}
}

func TestNiceMaxAndTicks(t *testing.T) {
	for _, tc := range []struct {
		top         float64
		upper, step float64
		labels      string
	}{
		{0, 1, 0.2, "0 0.2 0.4 0.6 0.8 1"},
		{math.NaN(), 1, 0.2, "0 0.2 0.4 0.6 0.8 1"},
		{math.Inf(1), 1, 0.2, "0 0.2 0.4 0.6 0.8 1"},
		{7, 8, 2, "0 2 4 6 8"},
		{348, 400, 100, "0 100 200 300 400"},
		{23000, 25000, 5000, "0 5000 10k 15k 20k 25k"},
	} {
		upper, step := NiceMax(tc.top, 5)
		if upper != tc.upper || math.Abs(step-tc.step) > 1e-12 {
			t.Errorf("NiceMax(%g) = %g, %g; want %g, %g", tc.top, upper, step, tc.upper, tc.step)
		}
		var labels []string
		for _, tk := range LinearTicks(0, upper, step, Compact) {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); got != tc.labels {
			t.Errorf("ticks to %g: %q, want %q", tc.top, got, tc.labels)
		}
	}
	if LinearTicks(0, 1, 0, Compact) != nil || LinearTicks(0, math.Inf(1), 1, Compact) != nil {
		t.Error("ticks for a zero step or an infinite range; want none")
	}
	if got := len(LinearTicks(0, 1e9, 1, Compact)); got != 100 {
		t.Errorf("%d ticks for a billion steps, want at most 100", got)
	}
	for step, want := range map[float64]string{5: "95", 0.5: "95.0", 0.25: "95.00", 0.1: "95.0"} {
		if got := StepFormat(step)(95); got != want {
			t.Errorf("StepFormat(%g)(95) = %q, want %q", step, got, want)
		}
	}
}

func TestDashes(t *testing.T) {
	line := []Point{{0, 0}, {10, 0}, {10, 10}}
	for _, tc := range []struct {
		name    string
		pattern []float64
		dashes  int
		length  float64
	}{
		{"solid", nil, 1, 20},
		{"3 on 2 off", []float64{3, 2}, 4, 12 + 0}, // 0-3, 5-8, 10-13, 15-18
		{"zero pattern is solid", []float64{0, 0}, 1, 20},
	} {
		got := dashes(line, tc.pattern)
		total := 0.0
		for _, d := range got {
			for i := 1; i < len(d); i++ {
				total += math.Hypot(d[i].X-d[i-1].X, d[i].Y-d[i-1].Y)
			}
		}
		if len(got) != tc.dashes || math.Abs(total-tc.length) > 1e-9 {
			t.Errorf("%s: %d dashes %g long, want %d %g long", tc.name, len(got), total, tc.dashes, tc.length)
		}
	}
}

func TestPathsBreakAtNonFinitePoints(t *testing.T) {
	p, n := Polyline([]Point{{1, 1}, {1.5, 1}, {2, math.NaN()}, {3, 3}, {4, 4}, {math.Inf(1), 5}, {6, 6}})
	if n != 5 || len(p.drawn()) != 2 {
		t.Errorf("%d points in %d pieces, want 5 in 2 (a lone point draws nothing)", n, len(p.drawn()))
	}
	c := New("t", "t", 10, 10, Margins{})
	c.Text("x", math.NaN(), 1, Start, "lost")
	c.Line("x", 0, 0, math.Inf(1), 1)
	if strings.Contains(c.Inline(), "lost") || strings.Contains(c.Inline(), "<path") {
		t.Error("a mark at a non-finite position was drawn")
	}
}

func TestWritePNGRefusesABadSize(t *testing.T) {
	for _, size := range [][2]float64{{0, 10}, {10, -1}, {1e6, 10}, {math.NaN(), 10}} {
		if err := New("t", "t", size[0], size[1], Margins{}).WritePNG(io.Discard); err == nil {
			t.Errorf("a %gx%g PNG was written", size[0], size[1])
		}
	}
}
