package report

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestSplitAddsUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total float64
		parts []float64
		want  []float64
	}{
		{"exact", 10, []float64{4, 6}, []float64{40, 60}},
		{"rounded parts would sum to 1748.1", 1748.04, []float64{1158.86, 589.18}, []float64{11588, 5892}},
		{"three thirds", 1, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, []float64{4, 3, 3}},
		{"parts off the total are scaled", 10, []float64{1, 1}, []float64{50, 50}},
		{"a zero part", 5, []float64{0, 5}, []float64{0, 50}},
		{"nothing", 0, []float64{0, 0}, []float64{0, 0}},
		{"a negative part counts as 0", 2, []float64{-1, 2}, []float64{0, 20}},
		{"NaN", 2, []float64{math.NaN(), 2}, []float64{0, 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := split(tc.total, 10, tc.parts...)
			sum := 0.0
			for i, v := range got {
				sum += v
				if v != tc.want[i] {
					t.Errorf("split = %v, want %v", got, tc.want)
					break
				}
			}
			if tc.total > 0 && sum != math.Round(tc.total*10) {
				t.Errorf("parts %v sum to %v, the total is %v", got, sum, math.Round(tc.total*10))
			}
		})
	}
}

// number reads a printed figure: "1,344.0", "2,150.40 USD†", "−3.5".
func number(t *testing.T, s string) float64 {
	t.Helper()
	s = strings.NewReplacer(",", "", "−", "-", PlaceholderMark, "", "*", "").Replace(strings.TrimSpace(s))
	s, _, _ = strings.Cut(s, " ")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}

// adviceTable is the purchase table's rows as printed: GPU-hours paid and
// cost by row name.
type adviceRow struct{ hours, cost float64 }

func htmlAdvice(t *testing.T, page string) map[string]adviceRow {
	t.Helper()
	rows := map[string]adviceRow{}
	re := regexp.MustCompile(`<tr[^>]* data-(?:part|total)="([a-z-]+)"><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td><td>[^<]*</td><td>([^<]*)</td></tr>`)
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		rows[m[1]] = adviceRow{number(t, m[2]), number(t, m[3])}
	}
	return rows
}

func mdAdvice(t *testing.T, md string) map[string]adviceRow {
	t.Helper()
	names := map[string]string{"reserved": "reserved", "burst on spot": "spot", "burst on demand": "on-demand",
		"**total, the advice**": "advice", "all on demand": "all-on-demand"}
	rows := map[string]adviceRow{}
	for _, line := range strings.Split(md, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 {
			continue
		}
		if name, ok := names[strings.TrimSpace(cells[1])]; ok {
			rows[name] = adviceRow{number(t, cells[3]), number(t, cells[5])}
		}
	}
	return rows
}

// TestPrintedFiguresAddUp: wherever the report prints a total, the parts
// it prints beside it add up to it, to the cent and the tenth of a
// GPU-hour, in HTML and in Markdown.
func TestPrintedFiguresAddUp(t *testing.T) {
	rep := fullReport(t)
	for _, format := range []string{FormatHTML, FormatMarkdown} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, rep, format); err != nil {
				t.Fatal(err)
			}
			text := buf.String()
			rows := htmlAdvice(t, text)
			if format == FormatMarkdown {
				rows = mdAdvice(t, text)
			}
			if len(rows) != 5 {
				t.Fatalf("the advice table has rows %v, want reserved, spot, on-demand, the advice and all on demand", rows)
			}
			r, s, o, adv := rows["reserved"], rows["spot"], rows["on-demand"], rows["advice"]
			for _, c := range []struct {
				what        string
				parts, want float64
				unit        float64
			}{
				{"GPU-hours paid: reserved + spot + on demand = the advice", r.hours + s.hours + o.hours, adv.hours, 0.1},
				{"cost: reserved + spot + on demand = the advice", r.cost + s.cost + o.cost, adv.cost, 0.01},
			} {
				if math.Abs(c.parts-c.want) > c.unit/2 {
					t.Errorf("%s: %.2f printed against %.2f", c.what, c.parts, c.want)
				}
			}
			m := regexp.MustCompile(`The plan runs ([\d,.]+) GPU-hours: ([\d,.]+) on the reserved instances and ([\d,.]+) of burst\. ` +
				`The reserved instances are paid for all ([\d,.]+) of their hours, ([\d,.]+) of them idle`).FindStringSubmatch(text)
			if m == nil {
				t.Fatal("no sentence on the plan's GPU-hours")
			}
			plan, used, burst, paid, idle := number(t, m[1]), number(t, m[2]), number(t, m[3]), number(t, m[4]), number(t, m[5])
			checks := []struct {
				what      string
				got, want float64
			}{
				{"the plan = reserved used + burst", used + burst, plan},
				{"reserved paid = used + idle", used + idle, paid},
				{"reserved paid is the table's", paid, r.hours},
				{"burst = spot + on demand", s.hours + o.hours, burst},
				{"all on demand runs the plan's hours", rows["all-on-demand"].hours, plan},
			}
			for _, c := range checks {
				if math.Abs(c.got-c.want) > 0.05 {
					t.Errorf("%s: %.1f printed against %.1f", c.what, c.got, c.want)
				}
			}
			m = regexp.MustCompile(`([\d,.]+) USD\S* \((\d+)%\) (?:below all on demand|less than buying every planned hour on demand)`).FindStringSubmatch(text)
			if m == nil {
				t.Fatal("no saving")
			}
			if saving := number(t, m[1]); math.Abs(rows["all-on-demand"].cost-adv.cost-saving) > 0.005 {
				t.Errorf("saving %.2f printed, all on demand %.2f − the advice %.2f", saving, rows["all-on-demand"].cost, adv.cost)
			}
			heads := regexp.MustCompile(`max (\d+) leaves room for (\d+) more instances? \(\d+% of it\) above the peak of (\d+)`).FindAllStringSubmatch(text, -1)
			if len(heads) < 2 {
				t.Fatalf("headroom stated %d times, want it in the summary and the purchase advice", len(heads))
			}
			for _, m := range heads {
				if mx, h, p := number(t, m[1]), number(t, m[2]), number(t, m[3]); p+h != mx {
					t.Errorf("%q: peak %v + headroom %v ≠ max %v", m[0], p, h, mx)
				}
			}
		})
	}
}

// The figures add up in the report itself, not only as printed.
func TestReportFiguresAddUp(t *testing.T) {
	rep := fullReport(t)
	c, b, cp := rep.Cost, rep.Burst, rep.Capacity
	for _, tc := range []struct {
		what      string
		got, want float64
	}{
		{"the advice's cost = reserved + spot + on demand", c.ReservedCost + b.SpotCost + b.OnDemandCost, c.Recommended},
		{"burst = spot + on demand", b.SpotGPUHours + b.OnDemandGPUHours, b.GPUHours},
		{"the plan = reserved used + burst", c.ReservedUsedGPUHours + b.GPUHours, c.GPUHours},
		{"paid = reserved + burst", c.ReservedGPUHours + b.GPUHours, c.PaidGPUHours},
		{"saving = all on demand − the advice", c.AllOnDemand - c.Recommended, c.Saving},
		{"peak + headroom = max", float64(cp.Peak + cp.Headroom), float64(cp.Max)},
		{"the peak is the larger of the plan's and the SLO's", float64(cp.Peak), float64(max(cp.PlanPeak, cp.SLOPeak))},
	} {
		if math.Abs(tc.got-tc.want) > 1e-6*math.Max(1, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
}
