package demo

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// The demo must run on embedded defaults, keep the replayed hours fully
// provisioned, and cost less than the static fleet.
func TestRunDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo replays weeks of demand")
	}
	var out bytes.Buffer
	path := filepath.Join(t.TempDir(), "demo.db")
	if err := Run(context.Background(), Options{StorePath: path, HistoryDays: 15, LiveHours: 6}, &out); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	m := regexp.MustCompile(`Live replay: ([0-9.]+) GPU-hours \(static peak fleet: ([0-9.]+)\), (\d+) under-provisioned`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no live summary in:\n%s", report)
	}
	used, _ := strconv.ParseFloat(m[1], 64)
	static, _ := strconv.ParseFloat(m[2], 64)
	if used >= static {
		t.Errorf("live replay used %v GPU-hours, static %v: want fewer", used, static)
	}
	if m[3] != "0" {
		t.Errorf("live replay had %s under-provisioned minutes, want 0:\n%s", m[3], report)
	}
	for _, policy := range []string{"static", "reactive", "scheduled", "predictive", "hybrid"} {
		if !regexp.MustCompile(`(?m)^\s*` + policy + `\s+\d`).MatchString(report) {
			t.Errorf("backtest table lacks %s:\n%s", policy, report)
		}
	}
	if !regexp.MustCompile(`Hybrid: \d+% (below|above) the baseline, (reactive|flat) \(`).MatchString(report) {
		t.Errorf("no saving against the baseline without a forecast in:\n%s", report)
	}
}
