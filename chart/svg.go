package chart

import (
	"fmt"
	"html"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Inline is the chart as an <svg class="chart"> element for a page whose
// CSS styles the marks' classes; it carries no stylesheet and no size
// (the page's CSS sets its width, the viewBox its proportions).
func (c *Canvas) Inline() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" viewBox="0 0 %s %s" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		html.EscapeString(c.ID), num0(c.Width), num0(c.Height), html.EscapeString(c.Title))
	c.body(&b)
	return b.String()
}

// WriteSVG writes the chart as a standalone SVG document of its size in
// pixels, on white, with Styles as its stylesheet.
func (c *Canvas) WriteSVG(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg class="chart" id="%s" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		html.EscapeString(c.ID), num0(c.Width), num0(c.Height), num0(c.Width), num0(c.Height), html.EscapeString(c.Title))
	b.WriteString("\n<style>\n")
	fmt.Fprintf(&b, "text { font-family: \"Go\", \"DejaVu Sans\", \"Liberation Sans\", Arial, sans-serif; font-size: %spx; }\n", exact(defaultFontSize))
	for _, name := range slices.Sorted(maps.Keys(c.Styles)) {
		if css := c.Styles[name].css(); css != "" {
			fmt.Fprintf(&b, ".%s { %s }\n", name, css)
		}
	}
	b.WriteString("</style>\n")
	fmt.Fprintf(&b, `<rect width="%s" height="%s" fill="#ffffff"/>`, num0(c.Width), num0(c.Height))
	c.body(&b)
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// body writes the title, the marks and the closing tag.
func (c *Canvas) body(b *strings.Builder) {
	fmt.Fprintf(b, `<title>%s</title>`, html.EscapeString(c.Title))
	for _, m := range c.marks {
		if m.path != nil {
			c.writePath(b, m)
			continue
		}
		if m.rotated {
			fmt.Fprintf(b, `<text class="%s" x="%s" y="%s" text-anchor="%s" transform="rotate(-90 %s %s)">%s</text>`,
				html.EscapeString(m.class), num(m.x), num(m.y), m.anchor, num(m.x), num(m.y), html.EscapeString(m.text))
			continue
		}
		fmt.Fprintf(b, `<text class="%s" x="%s" y="%s" text-anchor="%s">%s</text>`,
			html.EscapeString(m.class), num(m.x), num(m.y), m.anchor, html.EscapeString(m.text))
	}
	b.WriteString(`</svg>`)
}

func (c *Canvas) writePath(b *strings.Builder, m mark) {
	fmt.Fprintf(b, `<path class="%s"`, html.EscapeString(m.class))
	if m.series != "" {
		fmt.Fprintf(b, ` data-series="%s" data-points="%d"`, html.EscapeString(m.series), m.points)
	}
	b.WriteString(` d="`)
	for _, s := range m.path.drawn() {
		for i, pt := range s.pts {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(b, "%s%s %s", cmd, num(pt.X), num(pt.Y))
		}
		if s.closed {
			b.WriteString("Z")
		}
	}
	b.WriteString(`"/>`)
}

// css is the style as CSS declarations.
func (s Style) css() string {
	var d []string
	if s.Fill != "" {
		d = append(d, "fill: "+s.Fill)
	}
	if s.Stroke != "" {
		d = append(d, "stroke: "+s.Stroke)
	}
	if s.StrokeWidth > 0 {
		d = append(d, "stroke-width: "+exact(s.StrokeWidth))
	}
	if len(s.Dash) > 0 {
		parts := make([]string, len(s.Dash))
		for i, v := range s.Dash {
			parts[i] = exact(v)
		}
		d = append(d, "stroke-dasharray: "+strings.Join(parts, " "))
	}
	if s.Opacity > 0 {
		d = append(d, "fill-opacity: "+exact(s.Opacity), "stroke-opacity: "+exact(s.Opacity))
	}
	if s.FontSize > 0 {
		d = append(d, "font-size: "+exact(s.FontSize)+"px")
	}
	if s.Bold {
		d = append(d, "font-weight: bold")
	}
	if len(d) == 0 {
		return ""
	}
	return strings.Join(d, "; ") + ";"
}

// num formats a coordinate to a tenth of a pixel.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// num0 formats a whole size.
func num0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// exact formats a style's number as short as it reads back.
func exact(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
