package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runForecaster runs the CLI in-process.
func runForecaster(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBacktestJSONAndFiles(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runForecaster("backtest", "--synthetic-days", "10", "--step", "30m", "--peak-instances", "20",
		"--boot", "10m", "--price", "2.5", "--slo", "10s", "--format", "json", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Static   int              `json:"static_instances"`
		Policies []map[string]any `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Static != 20 || len(doc.Policies) != 5 {
		t.Fatalf("static %d with %d policies, want 20 and 5", doc.Static, len(doc.Policies))
	}
	keys := []string{"name", "gpu_hours", "cost", "slo_attainment", "p99_latency_s", "dropped", "underprovisioned_minutes", "actions"}
	for i, p := range doc.Policies {
		for _, k := range keys {
			if _, ok := p[k]; !ok {
				t.Errorf("policy %d lacks %q: %v", i, k, p)
			}
		}
	}
	if doc.Policies[0]["name"] != "static" || doc.Policies[4]["name"] != "hybrid" {
		t.Errorf("policy order %v ... %v", doc.Policies[0]["name"], doc.Policies[4]["name"])
	}
	for _, name := range []string{"static", "reactive", "scheduled", "predictive", "hybrid"} {
		csvText, err := os.ReadFile(filepath.Join(dir, "capacity-"+name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(csvText)), "\n")
		if lines[0] != "timestamp,demand_rps,ready,desired" || len(lines) != 1+10*48 {
			t.Errorf("%s csv: header %q and %d rows, want the exact header and 480 rows", name, lines[0], len(lines)-1)
		}
		png, err := os.ReadFile(filepath.Join(dir, "capacity-"+name+".png"))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("%s plot missing or not a PNG: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tradeoff.png")); err != nil {
		t.Errorf("trade-off plot: %v", err)
	}
}

func TestBacktestTable(t *testing.T) {
	code, out, errOut := runForecaster("backtest", "--synthetic-days", "3", "--step", "30m", "--gpu-rps", "20",
		"--policies", "static,reactive")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"policy", "GPU-hours", "vs static", "SLO attainment", "P99 wait (s)", "dropped",
		"under-prov. min", "actions", "static", "reactive", "100.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hybrid") {
		t.Errorf("table shows a policy not asked for:\n%s", out)
	}
}

func TestBacktestUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"throughput required", []string{"--synthetic-days", "1"}, 2, "--gpu-rps (or --peak-instances, or --service-time) is required"},
		{"unknown policy", []string{"--gpu-rps", "5", "--policies", "static,psychic"}, 2, `unknown policy "psychic"`},
		{"bad format", []string{"--gpu-rps", "5", "--format", "xml"}, 2, `--format "xml"`},
		{"bad planner field", []string{"--gpu-rps", "5", "--target-util", "2"}, 2, "TargetUtilisation 2"},
		{"erlang-c needs a service time", []string{"--gpu-rps", "5", "--sizing", "erlang-c"}, 2, "Fleet.ServiceTime must be > 0 for erlang-c"},
		{"missing file", []string{"--gpu-rps", "5", "--input", "/nonexistent/demand.csv"}, 1, "/nonexistent/demand.csv"},
		{"negative timeout", []string{"--gpu-rps", "5", "--timeout", "-5s"}, 2, "--timeout -5s"},
		{"negative refit", []string{"--gpu-rps", "5", "--refit", "-1h"}, 2, "--refit -1h0m0s"},
		{"spot share above one", []string{"--gpu-rps", "5", "--spot-share", "2"}, 2, "--spot-share 2"},
		{"peak sizing needs a usable target", []string{"--peak-instances", "20", "--target-util", "0"}, 2, "--target-util 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runForecaster(append([]string{"backtest"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and ~%q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

// --peak-instances sets the throughput even beside --service-time (which
// then only sets the Erlang-C servers): halving the instances the peak
// needs doubles each one's requests/s. It used to be ignored silently.
func TestBacktestPeakInstancesWithServiceTime(t *testing.T) {
	gpuRPS := func(peak string) float64 {
		t.Helper()
		code, out, errOut := runForecaster("backtest", "--synthetic-days", "1", "--step", "30m", "--policies", "static",
			"--peak-instances", peak, "--service-time", "5s", "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc struct {
			GPURPS float64 `json:"gpu_rps"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		return doc.GPURPS
	}
	r20, r10 := gpuRPS("20"), gpuRPS("10")
	if r20 == 0.2 || math.Abs(r10-2*r20) > 1e-9*r10 {
		t.Errorf("gpu_rps %v with 20 peak instances and %v with 10; want the second twice the first, not 1/5s", r20, r10)
	}
}
