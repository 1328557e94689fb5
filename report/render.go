package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"io"
	"math"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/prometheus/common/model"
)

// Formats Render writes.
const (
	FormatHTML     = "html"
	FormatMarkdown = "md"
	FormatJSON     = "json"
)

// Formats lists the formats, for messages.
var Formats = []string{FormatHTML, FormatMarkdown, FormatJSON}

//go:embed assets/report.html assets/report.css assets/report.md
var assets embed.FS

var (
	htmlTemplate = htmltemplate.Must(htmltemplate.New("report.html").Funcs(funcs(&Report{})).ParseFS(assets, "assets/report.html"))
	mdTemplate   = texttemplate.Must(texttemplate.New("report.md").Funcs(funcs(&Report{})).ParseFS(assets, "assets/report.md"))
	css          = func() htmltemplate.CSS {
		b, err := assets.ReadFile("assets/report.css")
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		return htmltemplate.CSS(b) // the project's own stylesheet
	}()
)

// Render writes the report in format (html, md or json).
func Render(w io.Writer, rep *Report, format string) error {
	var buf bytes.Buffer
	var err error
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	case FormatHTML:
		var t *htmltemplate.Template
		if t, err = htmlTemplate.Clone(); err == nil {
			err = t.Funcs(funcs(rep)).Execute(&buf, newView(rep, true))
		}
	case FormatMarkdown:
		var t *texttemplate.Template
		if t, err = mdTemplate.Clone(); err == nil {
			err = t.Funcs(funcs(rep)).Execute(&buf, newView(rep, false))
		}
	default:
		return fmt.Errorf("report: format %q: want one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return fmt.Errorf("report: rendering %s: %w", format, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// view is what the templates read: the report, its charts and the
// hour-by-hour grid.
type view struct {
	*Report
	CSS                                                  htmltemplate.CSS
	DemandChart, PlanChart, ReservedChart, BacktestChart htmltemplate.HTML
	Weeks                                                []gridWeek
	Hybrid, Static                                       *policyView
	Counts                                               map[string]int
	// Fig are the advice's GPU-hours and costs rounded to add up as
	// printed.
	Fig figures
}

type policyView struct {
	GPUHours, Cost, SLO float64
}

// gridWeek is up to gridDays days of the plan, one column a day, one row an
// hour of the day.
type gridWeek struct {
	Days []string
	Rows []gridRow
}

type gridRow struct {
	Hour  string
	Cells []gridCell
}

type gridCell struct {
	Set     bool
	Desired int
	// Level shades the cell (0–5 of the plan's peak); Burst marks hours
	// above the reserved baseline.
	Level int
	Burst bool
	Title string
}

func newView(rep *Report, charts bool) view {
	v := view{Report: rep, CSS: css, Weeks: hourGrid(rep), Counts: map[string]int{}, Fig: figuresOf(rep)}
	if charts {
		v.DemandChart, v.PlanChart, v.ReservedChart = demandChart(rep), planChart(rep), reservedChart(rep)
		if rep.Backtest != nil {
			v.BacktestChart = backtestChart(rep)
		}
	}
	for _, r := range rep.Risks {
		v.Counts[r.Severity]++
	}
	if rep.Backtest != nil {
		for _, p := range rep.Backtest.Policies {
			pv := &policyView{GPUHours: p.GPUHours, Cost: p.Cost, SLO: p.SLOAttainment}
			switch p.Name {
			case "hybrid":
				v.Hybrid = pv
			case "static":
				v.Static = pv
			}
		}
	}
	return v
}

// gridDays is how many days one table of the hour grid holds: a week's
// plan that starts in the middle of a day spans eight.
const gridDays = 8

// hourGrid lays the plan's hours out by day (columns) and hour of the day
// (rows) in the report's zone, gridDays days a table.
func hourGrid(rep *Report) []gridWeek {
	loc := rep.loc
	if loc == nil {
		loc = time.UTC
	}
	type key struct {
		day  string
		hour int
	}
	cells := map[key]Hour{}
	var days []string
	for _, h := range rep.Plan.Hours {
		t := h.Start.In(loc)
		d := t.Format("Mon 2 Jan")
		if len(days) == 0 || days[len(days)-1] != d {
			days = append(days, d)
		}
		k := key{d, t.Hour()}
		if c, ok := cells[k]; !ok || h.Desired > c.Desired { // a DST hour twice: the larger
			cells[k] = h
		}
	}
	peak := max(rep.Plan.Peak, 1)
	var weeks []gridWeek
	for i := 0; i < len(days); i += gridDays {
		w := gridWeek{Days: days[i:min(i+gridDays, len(days))]}
		for hr := range 24 {
			row := gridRow{Hour: fmt.Sprintf("%02d:00", hr)}
			for _, d := range w.Days {
				h, ok := cells[key{d, hr}]
				c := gridCell{Set: ok}
				if ok {
					c.Desired = h.Desired
					c.Level = int(math.Round(5 * float64(h.Desired) / float64(peak)))
					c.Burst = h.Desired > rep.Reserved.Recommended
					c.Title = h.Reason
				}
				row.Cells = append(row.Cells, c)
			}
			w.Rows = append(w.Rows, row)
		}
		weeks = append(weeks, w)
	}
	return weeks
}

// funcs are the templates' formatting helpers; times are shown in the
// report's zone, costs in its currency.
func funcs(rep *Report) map[string]any {
	loc := rep.zoneLoc()
	pr := rep.Settings.Prices
	return map[string]any{
		"money":      money,
		"cost":       pr.cost,
		"perHour":    pr.perHour,
		"num":        num,
		"gpuh":       gpuHours,
		"pct":        func(v float64) string { return pct(v, 1) },
		"pct0":       func(v float64) string { return pct(v, 0) },
		"slo":        attainment,
		"gate":       comparisonWords,
		"held80":     func(v float64) string { return pctAgainst(v, RuleMinCoverage80) },
		"held95":     func(v float64) string { return pctAgainst(v, RuleMinCoverage95) },
		"costVersus": costVersus,
		"int":        func(v float64) string { return groupThousands(fmt.Sprintf("%.0f", v)) },
		"f2":         func(v float64) string { return fmt.Sprintf("%.2f", v) },
		"f3":         func(v float64) string { return fmt.Sprintf("%.3f", v) },
		"rps":        func(v float64) string { return trimZero(fmt.Sprintf("%.3g", v)) },
		"mul100":     func(v float64) float64 { return 100 * v },
		"sub":        func(a, b int) int { return a - b },
		"count":      countOf,
		"span":       func(d Duration) string { return spanWords(d, true) },
		"next":       nextSpan,
		"abs": func(a int) int {
			if a < 0 {
				return -a
			}
			return a
		},
		"dur":    shortDur,
		"spans":  spansWords,
		"join":   strings.Join,
		"zone":   func() string { return loc.String() },
		"at":     func(t time.Time) string { return t.In(loc).Format("Mon 2 Jan 15:04") },
		"date":   func(t time.Time) string { return t.In(loc).Format("2 Jan 2006 15:04") },
		"gen":    func(t *time.Time) string { return t.Format("2006-01-02 15:04 UTC") },
		"policy": policyLabel,
		"upper":  strings.ToUpper,
		"mark":   func() string { return PlaceholderMark },
		"sentence": func(s string) string {
			if s == "" {
				return s
			}
			return strings.ToUpper(s[:1]) + s[1:]
		},
		"perWeek": func(v, days float64) float64 {
			if days <= 0 {
				return 0
			}
			return v * 7 / days
		},
	}
}

func (rep *Report) zoneLoc() *time.Location {
	if rep == nil || rep.loc == nil {
		return time.UTC
	}
	return rep.loc
}

// money formats an amount: 12,345.68.
func money(v float64) string { return fixed(v, 2) }

// gpuHours formats GPU-hours with one decimal and thousands separators,
// so that the parts of a total add up to it as printed (to a rounding).
func gpuHours(v float64) string { return fixed(v, 1) }

// fixed formats v with digits decimals and thousands separators.
func fixed(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	s := fmt.Sprintf("%.*f", digits, math.Abs(v))
	i := strings.IndexByte(s, '.')
	s = groupThousands(s[:i]) + s[i:]
	if v < 0 {
		s = "−" + s
	}
	return s
}

// num formats a count or figure with thousands separators and up to one
// decimal.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if math.Abs(v) >= 100 || v == math.Trunc(v) {
		return groupThousands(fmt.Sprintf("%.0f", v))
	}
	return fmt.Sprintf("%.1f", v)
}

func pct(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.*f%%", digits, 100*v)
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "−" + b.String()
	}
	return b.String()
}

// shortDur writes 1w, 2d, 30m, 1h30m, 10s (Prometheus' notation).
func shortDur(d Duration) string {
	if d == 0 {
		return "0"
	}
	return model.Duration(d).String()
}

// costVersus words a cost ratio against a baseline: "23% less than", "4%
// more than", or "the same as" within half a percent.
func costVersus(ratio float64) string {
	switch d := math.Round(100 * (1 - ratio)); {
	case d > 0:
		return fmt.Sprintf("%.0f%% less than", d)
	case d < 0:
		return fmt.Sprintf("%.0f%% more than", -d)
	}
	return "the same as"
}

func policyLabel(name string) string {
	switch name {
	case "static":
		return "static (the peak's fleet all the time)"
	case "reactive":
		return "reactive (threshold rules only)"
	case "flat":
		return "flat (the cheapest fixed fleet that met the SLO, in hindsight)"
	case "hybrid":
		return "hybrid (this plan: forecast + reactive + floors)"
	case "oracle":
		return "oracle (knows the future: the limit)"
	}
	return name
}

// trimZero drops a decimal number's trailing zeros and point.
func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
