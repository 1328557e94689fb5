package traceeval

import (
	"context"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/auto"
)

// TestAutoOnTheTraces holds what prewarm's default forecaster reaches on
// the recorded traces (`forecaster eval traces`: 0.869): the geometric
// mean of its MASE ratios against seasonal naive at most 0.90, below R's
// ets and tbats on the same windows (1.08 and 1.01), and no trace worse
// than 1.2.
//
// The goal is a geometric mean of 0.60 with no trace above 1; that is
// not met. Eleven of the thirteen series span under two days (the
// Alibaba serving traces cover 22 hours, the Azure logs one), so their
// baseline is naive, and two hours ahead of a decaying, noisy level
// nothing here beats it by much: R's ets and tbats reach 1.08 and 1.01
// over all thirteen. On the two multi-day traces (NYC taxi, Alibaba
// hourly) auto's ratios are 0.30 and 0.78, R's stlf 0.30 and 0.91.
func TestAutoOnTheTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("forecasts 104 windows")
	}
	ws, err := Windows(tracesDir(t), DefaultTraces())
	if err != nil {
		t.Fatal(err)
	}
	m := Method{Name: "auto", New: func(w Window) model.Forecaster { return auto.New(auto.Config{Step: w.Step}) }}
	scores, err := Evaluate(context.Background(), ws, []Method{m}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ReadReference(strings.NewReader(Reference), "r_reference.csv")
	if err != nil {
		t.Fatal(err)
	}
	rs, _, err := Attach(ref, ws, scores)
	if err != nil {
		t.Fatal(err)
	}
	per := Summarise(append(scores, rs...), nil)
	geo := map[string]float64{}
	for _, o := range Overall(per) {
		geo[o.Method] = o.Ratio
		t.Logf("%-6s geo-mean %.3f over %d traces, coverage 80/95 %.3f/%.3f, MSIS %.2f", o.Method, o.Ratio, o.Windows, o.Cov80, o.Cov95, o.MSIS)
	}
	if geo["auto"] > 0.90 {
		t.Errorf("auto's geometric mean ratio %.3f > 0.90", geo["auto"])
	}
	for _, r := range []string{"ets", "tbats"} {
		if geo["auto"] >= geo[r] {
			t.Errorf("auto's geometric mean %.3f not below R's %s %.3f", geo["auto"], r, geo[r])
		}
	}
	for _, s := range per {
		if s.Method == "auto" && s.Ratio > 1.2 {
			t.Errorf("%s: ratio %.3f > 1.2", s.Series, s.Ratio)
		}
	}
}
