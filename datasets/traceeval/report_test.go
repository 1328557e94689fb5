package traceeval

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestPickMethods(t *testing.T) {
	got, err := PickMethods([]string{"naive", " auto"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "naive" || got[1].Name != "auto" {
		t.Errorf("PickMethods = %+v, want naive then auto", got)
	}
	if want := []string{"auto", "hw", "profile", "naive"}; !slices.Equal(MethodNames(), want) {
		t.Errorf("MethodNames() = %q, want %q", MethodNames(), want)
	}
	_, err = PickMethods([]string{"auto", "snaive"})
	if err == nil || err.Error() != `unknown method "snaive" (known: auto, hw, profile, naive)` {
		t.Errorf("the baseline, named: %v, want it refused as unknown (it always runs)", err)
	}
}

// score is a window of trace tr at origin o (half h) where method m's
// MAE is mae on a scale of 1.
func score(tr string, o, h int, m string, mae float64) Score {
	return Score{Series: tr, Origin: o, Half: h, Method: m, MAE: mae, Scale: 1, Cov80: 0.8, Cov95: 0.95, IS95: 2, Seconds: 0.001}
}

// The report gives each method's ratio per trace in the traces' order,
// their geometric mean over the traces and per half, the worst trace,
// and, for a method covering fewer traces, the first method's figure on
// the same ones.
func TestNewReport(t *testing.T) {
	traces := []Trace{{ID: "b"}, {ID: "a"}}
	var scores []Score
	for _, tr := range []string{"a", "b"} {
		for o, h := range []int{1, 2} {
			scores = append(scores, score(tr, o, h, Baseline, 2))
		}
	}
	scores = append(scores,
		score("a", 0, 1, "auto", 1), score("a", 1, 2, "auto", 1), // ratio 0.5
		score("b", 0, 1, "auto", 2), score("b", 1, 2, "auto", 4), // ratio 1.5; first half 1, second 2
		score("b", 0, 1, "ets", 1), score("b", 1, 2, "ets", 1), // ratio 0.5, b only
	)
	r := NewReport(traces, scores, map[string]int{"ets": 1})
	var order []string
	for _, s := range r.Series {
		order = append(order, s.Series+"/"+s.Method)
	}
	if want := []string{"b/snaive", "b/auto", "b/ets", "a/snaive", "a/auto"}; !slices.Equal(order, want) {
		t.Errorf("series rows %q, want the traces' order %q", order, want)
	}
	find := func(rows []Row, m string) Row {
		i := slices.IndexFunc(rows, func(r Row) bool { return r.Method == m })
		if i < 0 {
			t.Fatalf("no %s row in %+v", m, rows)
		}
		return rows[i]
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if o := find(r.Overall, "auto"); !near(o.Ratio, math.Sqrt(0.5*1.5)) || o.Windows != 2 {
		t.Errorf("auto over the traces: ratio %v over %d, want the geometric mean %v over 2", o.Ratio, o.Windows, math.Sqrt(0.75))
	}
	if f, s := find(r.FirstHalf, "auto"), find(r.SecondHalf, "auto"); !near(f.Ratio, math.Sqrt(0.5)) || !near(s.Ratio, math.Sqrt(0.5*2)) {
		t.Errorf("auto's halves %v and %v, want %v and %v", f.Ratio, s.Ratio, math.Sqrt(0.5), 1.0)
	}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"ets fits 1 of the traces; auto on the same 1: geo-mean 1.500",
		"R fits that failed (left out of that method's figures): map[ets:1]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	// a has no ets row: a dash; auto's worst trace is b.
	if f := strings.Fields(lineStarting(text, "a ")); !slices.Equal(f, []string{"a", "2", "2.000", "0.500", "-"}) {
		t.Errorf("trace a's line %q", f)
	}
	if f := strings.Fields(lineStarting(text, "auto ")); len(f) < 7 || f[5] != "1.500" || f[6] != "b" {
		t.Errorf("auto's line %q, want worst 1.500 on b", f)
	}
}

func lineStarting(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return l
		}
	}
	return ""
}
