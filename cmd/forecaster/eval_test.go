package main

import (
	"encoding/json"
	"math"
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
	code, out, errOut := runCmd("eval", "m4", "--data", dir, "--series", "8", "--split", "holdout", "--format", "json", "--methods", "auto,snaive,naive2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Exactly the documented shape: {"split", "naive2_smape", "naive2_mase",
	// "methods":[{name, smape, mase, owa, msis, coverage, seconds}]}.
	var raw struct {
		Split       *string          `json:"split"`
		Naive2SMAPE *float64         `json:"naive2_smape"`
		Naive2MASE  *float64         `json:"naive2_mase"`
		Methods     []map[string]any `json:"methods"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	methods := raw.Methods
	if raw.Split == nil || *raw.Split != "holdout" || raw.Naive2SMAPE == nil || !(*raw.Naive2SMAPE > 0) || len(methods) != 3 {
		t.Fatalf("JSON %s", out)
	}
	// OWA is relative to Naive2 on the same windows: exactly 1 for it.
	if owa := methods[2]["owa"].(float64); math.Abs(owa-1) > 1e-12 {
		t.Errorf("naive2 OWA %v on its own windows, want 1", owa)
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
		{"no data set", []string{}, 2, "m4, traces or policy"},
		{"unknown data set", []string{"m3"}, 2, "m4, traces or policy"},
		{"bad split", []string{"m4", "--split", "test"}, 2, "--split"},
		{"extra argument", []string{"m4", "extra"}, 2, "extra"},
		{"traces: unknown method", []string{"traces", "--methods", "prophet"}, 2, "prophet"},
		{"traces: bad format", []string{"traces", "--format", "xml"}, 2, "--format"},
		{"traces: missing data", []string{"traces", "--data", "/nonexistent/traces"}, 1, "--data"},
		{"traces: help", []string{"traces", "--help"}, 0, "seasonal naive"},
		{"bad format", []string{"m4", "--format", "yaml"}, 2, "--format"},
		{"unknown method", []string{"m4", "--methods", "auto,prophet"}, 2, "prophet"},
		{"negative series", []string{"m4", "--series", "-1"}, 2, "--series"},
		{"missing data", []string{"m4", "--data", "/nonexistent/m4"}, 1, "--data"},
		{"help", []string{"--help"}, 0, "eval policy --help"},
		{"m4 help", []string{"m4", "--help"}, 0, "holdout"},
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

// The holdout split scores the last 48 training values, relative to
// Naive2 on the same windows: naive2's OWA is then exactly 1.
func TestEvalHoldout(t *testing.T) {
	dir := m4DataDir(t)
	code, out, errOut := runCmd("eval", "m4", "--data", dir, "--split", "holdout", "--series", "6", "--methods", "naive2,snaive")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"holdout split", "Naive2 on the same holdout windows", "naive2", "1.000"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "official OWA") || strings.Contains(out, "Best official entry") {
		t.Errorf("holdout table shows official figures:\n%s", out)
	}
}

// tracesDir returns the shared traces folder or skips the test.
func tracesDir(t *testing.T) string {
	dir := os.Getenv("PREWARM_DATASETS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "datasets")
	}
	dir = filepath.Join(dir, "traces")
	if _, err := os.Stat(filepath.Join(dir, "nyc_taxi.csv")); err != nil {
		t.Skipf("recorded traces not found at %s (set PREWARM_DATASETS to the shared datasets folder): %v", dir, err)
	}
	return dir
}

func TestEvalTraces(t *testing.T) {
	dir := tracesDir(t)
	code, out, errOut := runCmd("eval", "traces", "--data", dir, "--methods", "naive", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Series  []map[string]any `json:"series"`
		Overall []map[string]any `json:"overall"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	methods := map[string]bool{}
	for _, o := range rep.Overall {
		methods[o["method"].(string)] = true
	}
	for _, m := range []string{"snaive", "naive", "stlf", "mstl", "ets", "tbats"} {
		if !methods[m] {
			t.Errorf("overall lacks method %q (R's figures come from the built-in reference): %v", m, methods)
		}
	}
	for _, s := range rep.Series {
		if s["method"] == "snaive" && s["mase_ratio"].(float64) != 1 {
			t.Errorf("baseline ratio %v, want 1", s["mase_ratio"])
		}
	}
	// The windows exported for R are the ones scored.
	path := filepath.Join(t.TempDir(), "windows.csv")
	if code, _, errOut := runCmd("eval", "traces", "--data", dir, "--export-windows", path); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "series,origin,time,step_seconds,half,period,periods,train_sum,train,test\n") {
		t.Errorf("export header: %.120s", raw)
	}
}
