package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// m4DataDir returns the M4 Hourly folder relative to this package, or
// skips the test.
func m4DataDir(t *testing.T) string {
	dir := os.Getenv("PREWARM_DATASETS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "datasets")
	}
	dir = filepath.Join(dir, "m4-hourly")
	if _, err := os.Stat(filepath.Join(dir, "Hourly-train.csv")); err != nil {
		t.Skipf("M4 Hourly data not found at %s (set PREWARM_DATASETS to the shared datasets folder): %v", dir, err)
	}
	return dir
}

func TestEvalJSON(t *testing.T) {
	dir := m4DataDir(t)
	code, out, errOut := runCmd("eval", "m4", "--data", dir, "--series", "8", "--format", "json", "--methods", "auto,snaive,naive2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Exactly the documented shape: {"methods":[{name, smape, mase, owa, msis, coverage, seconds}]}.
	var raw map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	methods := raw["methods"]
	if len(raw) != 1 || len(methods) != 3 {
		t.Fatalf("JSON %s", out)
	}
	keys := []string{"name", "smape", "mase", "owa", "msis", "coverage", "seconds"}
	for i, m := range methods {
		if len(m) != len(keys) {
			t.Errorf("method %d has keys %v, want exactly %v", i, m, keys)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("method %d lacks %q", i, k)
			}
		}
	}
	if methods[0]["name"] != "auto" || methods[1]["name"] != "snaive" {
		t.Errorf("names %v, %v", methods[0]["name"], methods[1]["name"])
	}
	// Plausible values (quality on the full set is measured by the
	// command itself and asserted on a larger subset in model/auto).
	for _, m := range methods {
		if owa := m["owa"].(float64); !(owa > 0 && owa < 1.5) {
			t.Errorf("%v: OWA %v implausible", m["name"], owa)
		}
	}
	if cov := methods[0]["coverage"].(float64); cov < 0.8 || cov > 1 {
		t.Errorf("auto coverage %.3f", cov)
	}
}

func TestEvalTable(t *testing.T) {
	dir := m4DataDir(t)
	code, out, errOut := runCmd("eval", "m4", "--data", dir, "--series", "5", "--methods", "snaive,naive")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"method", "sMAPE", "MASE", "OWA", "MSIS", "coverage", "seconds", "official OWA", "snaive", "0.627", "Best official entry"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr not empty when it is not a terminal: %q", errOut)
	}
}

func TestEvalUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no data set", []string{}, 2, "m4"},
		{"unknown data set", []string{"m3"}, 2, "m4"},
		{"bad format", []string{"m4", "--format", "yaml"}, 2, "--format"},
		{"unknown method", []string{"m4", "--methods", "auto,prophet"}, 2, "prophet"},
		{"negative series", []string{"m4", "--series", "-1"}, 2, "--series"},
		{"missing data", []string{"m4", "--data", "/nonexistent/m4"}, 1, "--data"},
		{"help", []string{"--help"}, 0, "sMAPE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(append([]string{"eval"}, tc.args...)...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.wantCode, errOut, tc.wantErr)
			}
		})
	}
}
