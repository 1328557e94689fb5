package m4eval

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/datasets/m4"
	"github.com/prewarm/prewarm/model/accuracy"
)

func TestPick(t *testing.T) {
	tests := []struct {
		names []string
		want  []string // nil: an error
		err   string
	}{
		{[]string{"naive", " snaive", "hw"}, []string{"naive", "snaive", "hw"}, ""},
		{DefaultMethods(), DefaultMethods(), ""},
		{[]string{"naive", "nope"}, nil, `unknown method "nope" (known: auto, snaive, naive2, naive, profile, hw)`},
		{nil, nil, "name at least one method"},
	}
	for _, tt := range tests {
		got, err := Pick(tt.names)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("Pick(%q): %v, want %q", tt.names, err, tt.err)
			}
			continue
		}
		var names []string
		for _, m := range got {
			names = append(names, m.Name)
		}
		if err != nil || !slices.Equal(names, tt.want) {
			t.Errorf("Pick(%q) = %q, %v; want %q", tt.names, names, err, tt.want)
		}
	}
}

// Every method but the slow hw runs by default, auto first.
func TestDefaultMethods(t *testing.T) {
	got := DefaultMethods()
	if want := []string{"auto", "snaive", "naive2", "naive", "profile"}; !slices.Equal(got, want) {
		t.Errorf("DefaultMethods() = %q, want %q", got, want)
	}
}

// hourly returns n series of a daily rhythm with a trend, train values
// then 48 test values.
func hourly(n int) []m4.Series {
	var out []m4.Series
	for k := range n {
		var v []float64
		for i := range 24*14 + m4.HourlyHorizon {
			v = append(v, 100+float64(k)*10+0.05*float64(i)+30*math.Sin(2*math.Pi*float64(i)/24)+float64(i%5))
		}
		out = append(out, m4.Series{ID: "H" + string(rune('1'+k)), Train: v[:24*14], Test: v[24*14:]})
	}
	return out
}

// On the holdout OWA is relative to Naive2 on the same windows: Naive2's
// own is 1. On the official split it is relative to the published
// Naive2, and each method's official figures come with it.
func TestRunOWAUnit(t *testing.T) {
	ctx := context.Background()
	methods, err := Pick([]string{"naive2", "snaive"})
	if err != nil {
		t.Fatal(err)
	}
	holdout, err := m4.SplitHoldout.Apply(hourly(3), m4.HourlyHorizon)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, holdout, methods, Options{Split: m4.SplitHoldout})
	if err != nil {
		t.Fatal(err)
	}
	if owa := rep.Methods[0].OWA; math.Abs(owa-1) > 1e-12 {
		t.Errorf("holdout: naive2's OWA %v, want 1", owa)
	}
	if rep.Naive2SMAPE != rep.Methods[0].SMAPE || rep.Naive2MASE != rep.Methods[0].MASE {
		t.Errorf("holdout: unit (%v, %v), want naive2's scores (%v, %v)", rep.Naive2SMAPE, rep.Naive2MASE, rep.Methods[0].SMAPE, rep.Methods[0].MASE)
	}

	official := []m4.Result{{ID: "Naive2", Team: "benchmark", SMAPE: 18.383, MASE: 2.395, OWA: 1},
		{ID: "118", Team: "a team", SMAPE: 9, MASE: 0.8, OWA: 0.4}}
	var steps, dones int
	rep, err = Run(ctx, hourly(3), methods, Options{Split: m4.SplitOfficial, Official: official,
		Progress: func(string, int) (func(), func()) { return func() { steps++ }, func() { dones++ } }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Naive2SMAPE != accuracy.Naive2HourlySMAPE || rep.Naive2MASE != accuracy.Naive2HourlyMASE {
		t.Errorf("official: unit (%v, %v), want the published Naive2's", rep.Naive2SMAPE, rep.Naive2MASE)
	}
	r := rep.Methods[1]
	if want := accuracy.OWA(r.SMAPE, r.MASE, accuracy.Naive2HourlySMAPE, accuracy.Naive2HourlyMASE); r.OWA != want {
		t.Errorf("official: snaive's OWA %v, want %v", r.OWA, want)
	}
	if steps != 6 || dones != 2 {
		t.Errorf("progress: %d steps and %d dones, want one per series and method (6) and one per method (2)", steps, dones)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"official split, 3 series", "official OWA", "18.383", "Best official entry: 118 (a team) sMAPE 9.000, MASE 0.800, OWA 0.400."} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	// snaive has no official row here: dashes.
	if f := strings.Fields(lineOf(table.String(), "snaive")); len(f) != 12 || !slices.Equal(f[9:], []string{"-", "-", "-"}) {
		t.Errorf("snaive's line %q, want dashes for the missing official figures", f)
	}
	if f := strings.Fields(lineOf(table.String(), "naive2")); len(f) != 12 || !slices.Equal(f[9:], []string{"18.383", "2.395", "1.000"}) {
		t.Errorf("naive2's line %q, want the official Naive2's figures", f)
	}
	doc, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Split   string `json:"split"`
		Methods []struct {
			Name string  `json:"name"`
			OWA  float64 `json:"owa"`
		} `json:"methods"`
	}
	if err := json.Unmarshal(doc, &back); err != nil || back.Split != "official" || len(back.Methods) != 2 || back.Methods[1].OWA != r.OWA {
		t.Errorf("JSON %s: %+v, %v", doc, back, err)
	}
}

func lineOf(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return l
		}
	}
	return ""
}
