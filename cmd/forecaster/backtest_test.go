package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
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
		Static        int              `json:"static_instances"`
		TraceRequests float64          `json:"trace_requests"`
		Policies      []map[string]any `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Static != 20 || len(doc.Policies) != 7 {
		t.Fatalf("static %d with %d policies, want 20 and 7", doc.Static, len(doc.Policies))
	}
	keys := []string{"name", "gpu_hours", "cost", "cost_vs_static", "cost_vs_oracle", "slo_attainment", "slo_attainment_after_warmup",
		"p99_wait_s", "p99_latency_s", "requests", "dropped", "underprovisioned_minutes", "actions"}
	for i, p := range doc.Policies {
		for _, k := range keys {
			if _, ok := p[k]; !ok {
				t.Errorf("policy %d lacks %q: %v", i, k, p)
			}
		}
	}
	if doc.Policies[0]["name"] != "static" || doc.Policies[5]["name"] != "hybrid" || doc.Policies[6]["name"] != "oracle" {
		t.Errorf("policy order %v ... %v %v", doc.Policies[0]["name"], doc.Policies[5]["name"], doc.Policies[6]["name"])
	}
	for i, name := range []string{"static", "flat", "reactive", "scheduled", "predictive", "hybrid", "oracle"} {
		csvText, err := os.ReadFile(filepath.Join(dir, "capacity-"+name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(csvText)), "\n")
		if lines[0] != "timestamp,demand_rps,ready,desired,billed,spot,stopped" || len(lines) != 1+10*48 {
			t.Errorf("%s csv: header %q and %d rows, want the exact header and 480 rows", name, lines[0], len(lines)-1)
		}
		// Σ billed × step is the GPU-hours, Σ demand × step the trace's
		// requests and the policy's.
		var billedH, requests float64
		for _, line := range lines[1:] {
			f := strings.Split(line, ",")
			d, _ := strconv.ParseFloat(f[1], 64)
			b, _ := strconv.ParseFloat(f[4], 64)
			billedH += b * 0.5
			requests += d * 1800
		}
		if gh := doc.Policies[i]["gpu_hours"].(float64); math.Abs(billedH-gh) > 1e-3*gh {
			t.Errorf("%s: Σ billed × step = %.3f h, JSON gpu_hours %.3f", name, billedH, gh)
		}
		if rq := doc.Policies[i]["requests"].(float64); math.Abs(requests-rq) > 1e-9*rq || math.Abs(requests-doc.TraceRequests) > 1e-9*rq {
			t.Errorf("%s: Σ demand × step = %.1f, JSON requests %.1f, trace %.1f", name, requests, rq, doc.TraceRequests)
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

// --frontier adds the "frontier" array (per policy and SLO target) and a plot.
func TestBacktestFrontierJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runForecaster("backtest", "--synthetic-days", "4", "--step", "30m", "--peak-instances", "20",
		"--policies", "static,hybrid", "--frontier", "--slo-targets", "0.99,0.995", "--format", "json", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Frontier []map[string]any `json:"frontier"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(doc.Frontier) != 5*2 {
		t.Fatalf("%d frontier rows, want 5 policies × 2 targets", len(doc.Frontier))
	}
	keys := []string{"policy", "slo_target", "reached", "cost_vs_static", "slo_attainment", "settings"}
	for _, row := range doc.Frontier {
		if len(row) != len(keys) {
			t.Errorf("row %v: want exactly %v", row, keys)
		}
		for _, k := range keys {
			if _, ok := row[k]; !ok {
				t.Errorf("row %v lacks %q", row, k)
			}
		}
	}
	if png, err := os.ReadFile(filepath.Join(dir, "frontier.png")); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("frontier plot missing or not a PNG: %v", err)
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
		{"bad planner field", []string{"--gpu-rps", "5", "--target-util", "2"}, 2, "--target-util 2: must be in (0, 1]"},
		{"one throughput", []string{"--gpu-rps", "5", "--service-time", "1s"}, 2, "give one of --gpu-rps, --peak-instances and --service-time"},
		{"slots", []string{"--gpu-rps", "5", "--slots", "0"}, 2, "--slots 0: must be in [1, 100000]"},
		{"time zone", []string{"--gpu-rps", "5", "--time-zone", "Mars/Olympus"}, 2, `--time-zone "Mars/Olympus"`},
		{"negative max step", []string{"--gpu-rps", "5", "--max-step", "-1"}, 2, "--max-step -1"},
		{"bad score window", []string{"--gpu-rps", "5", "--score-from", "yesterday"}, 2, `--score-from "yesterday"`},
		{"bad slo target", []string{"--gpu-rps", "5", "--slo-targets", "0.99,1"}, 2, "--slo-targets 1"},
		{"bad aggregate", []string{"--gpu-rps", "5", "--forecast-aggregate", "median"}, 2, `--forecast-aggregate "median"`},
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

// Each of --gpu-rps, --peak-instances and --service-time sets the others
// through --slots: 4 slots of 2 s are 2 req/s, and halving the instances
// the peak needs doubles each one's requests/s.
func TestBacktestThroughputFlags(t *testing.T) {
	doc := func(args ...string) (gpuRPS, serviceS float64) {
		t.Helper()
		code, out, errOut := runForecaster(append([]string{"backtest", "--synthetic-days", "1", "--step", "30m", "--policies", "static",
			"--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var d struct {
			GPURPS   float64 `json:"gpu_rps"`
			ServiceS float64 `json:"service_time_s"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		return d.GPURPS, d.ServiceS
	}
	if r, s := doc("--service-time", "2s", "--slots", "4"); r != 2 || s != 2 {
		t.Errorf("4 slots of 2 s: %v req/s and %v s, want 2 and 2", r, s)
	}
	if r, s := doc("--gpu-rps", "8", "--slots", "2"); r != 8 || s != 0.25 {
		t.Errorf("8 req/s on 2 slots: %v req/s and %v s, want 8 and 0.25", r, s)
	}
	r20, _ := doc("--peak-instances", "20")
	r10, s10 := doc("--peak-instances", "10")
	if math.Abs(r10-2*r20) > 1e-9*r10 || math.Abs(s10*r10-1) > 1e-6 {
		t.Errorf("gpu_rps %v with 20 peak instances and %v with 10 (service %v s); want the second twice the first", r20, r10, s10)
	}
}

// --write-demand writes what is replayed; read back with --counts it is
// the same demand.
func TestBacktestWriteDemand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demand.csv")
	requests := func(args ...string) float64 {
		t.Helper()
		code, out, errOut := runForecaster(append([]string{"backtest", "--gpu-rps", "50", "--policies", "static", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc struct {
			TraceRequests float64 `json:"trace_requests"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.TraceRequests
	}
	a := requests("--synthetic-days", "2", "--synthetic-bursts", "--step", "5m", "--write-demand", path)
	b := requests("--input", path, "--counts")
	if a == 0 || math.Abs(a-b) > 1e-9*a {
		t.Errorf("written %v requests, read back %v", a, b)
	}
}
