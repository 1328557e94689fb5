package main

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/report"
)

func TestPlanJSON(t *testing.T) {
	floors := filepath.Join(t.TempDir(), "floors.txt")
	if err := os.WriteFile(floors, []byte("# keep a warm pool at launch time\ndaily 03:00-04:00 at least 17\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runForecaster("plan", "--synthetic-days", "21", "--step", "30m", "--peak-instances", "20",
		"--boot", "10m", "--horizon", "24h", "--schedule", floors, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r report.PlanSummary
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(r.Schedule) < 3 || !r.Schedule[0].At.Equal(r.From) || len(r.Hours) != 24 {
		t.Fatalf("schedule %+v should start at %s and cover 24 hours (got %d)", r.Schedule, r.From, len(r.Hours))
	}
	var prewarm, floor bool
	for _, s := range r.Schedule {
		prewarm = prewarm || strings.Contains(s.Reason, "(pre-warm 10m)")
		if strings.HasPrefix(s.Reason, "schedule daily 03:00-04:00") && !floor {
			floor = true
			if s.Desired != 17 || s.At.Format("15:04") != "02:50" {
				t.Errorf("floor step %s %d, want 17 from 02:50 (one boot delay early)", s.At.Format("15:04"), s.Desired)
			}
		}
	}
	if !prewarm || !floor {
		t.Errorf("want a pre-warm step and the schedule floor in %+v", r.Schedule)
	}
	// Cost arithmetic: GPU-hours at the on-demand price, and the cost per
	// 1,000 requests from the expected requests.
	if math.Abs(r.OnDemandCost-2.5*r.GPUHours) > 1e-6 || r.ExpectedRequests <= 0 ||
		math.Abs(r.CostPer1000-r.OnDemandCost/r.ExpectedRequests*1000) > 1e-9 {
		t.Errorf("cost %.2f for %.2f GPU-h, %.0f requests, %.4f per 1000", r.OnDemandCost, r.GPUHours, r.ExpectedRequests, r.CostPer1000)
	}
	// The advice: a baseline busy at least the break-even share, cheaper
	// than all on demand.
	if r.ReservedBaseline < 1 || r.ReservedBusyShare < r.BreakEvenShare || r.BaselineCost >= r.OnDemandCost ||
		math.Abs(r.BreakEvenShare-1.6/2.5) > 1e-12 {
		t.Errorf("a reserved baseline of %d (busy %.2f, break-even %.2f) should cost less than all on demand: %.2f vs %.2f",
			r.ReservedBaseline, r.ReservedBusyShare, r.BreakEvenShare, r.BaselineCost, r.OnDemandCost)
	}
	// Which plan the controller trusts depends on its scores over the
	// replayed weeks; either way it says why, with the evidence.
	if !strings.HasPrefix(r.Gate, "model: model trusted: MAE") && !strings.HasPrefix(r.Gate, "profile: stepped back to seasonal profile: model MAE") {
		t.Errorf("gate %q", r.Gate)
	}
	if r.Horizon != "1d" || r.WarmUp != "14d" || r.History != "28d" {
		t.Errorf("horizon %q, warm-up %q, history %q", r.Horizon, r.WarmUp, r.History)
	}
}

// TestPlanGateAtColdStart: with --warm-up 0 the plan is serve's first
// refit, whose gate has no scores yet and trusts a model with two seasons
// of history, as serve's does, saying it is a cold start; with the replay
// the verdict carries the MAEs the controller measured.
func TestPlanGateAtColdStart(t *testing.T) {
	for _, tc := range []struct {
		warmUp, gate string
	}{
		{"0", "model: model trusted. Cold start: "},
		{"3d", "MAE "}, // trusted or stepped back: measured either way
	} {
		code, out, errOut := runForecaster("plan", "--synthetic-days", "15", "--step", "30m", "--peak-instances", "20",
			"--horizon", "6h", "--warm-up", tc.warmUp, "--format", "json")
		if code != 0 {
			t.Fatalf("--warm-up %s: exit %d: %s", tc.warmUp, code, errOut)
		}
		var r report.PlanSummary
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if tc.warmUp == "0" && !strings.HasPrefix(r.Gate, tc.gate) || !strings.Contains(r.Gate, tc.gate) {
			t.Errorf("--warm-up %s: gate %q, want %q", tc.warmUp, r.Gate, tc.gate)
		}
	}
}

func TestPlanTableAndShortHistory(t *testing.T) {
	// A day of history: less than the two seasons the model needs, so the
	// controller steps back to the seasonal profile and warms up.
	code, out, errOut := runForecaster("plan", "--synthetic-days", "1", "--step", "1h", "--gpu-rps", "20", "--horizon", "6h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Capacity plan for synthetic", "gate:     profile: stepped back to seasonal profile: history 1d < the 2d the model needs (2 seasons of 1d)",
		"hour (UTC)", "desired", "need at mean", "reason", "GPU-hours:", "per 1,000 requests", "reserved baseline:",
		"risk (high):        History too short to trust a forecast", "USD† at 2.50 USD† an hour", "† at the placeholder prices"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// With prices set, the money carries its currency and no mark.
	code, out, errOut = runForecaster("plan", "--synthetic-days", "1", "--step", "1h", "--gpu-rps", "20", "--horizon", "6h",
		"--price", "3", "--reserved-price", "2", "--spot-price", "1.2")
	if code != 0 || !strings.Contains(out, "USD at 3.00 USD an hour") || strings.Contains(out, "†") {
		t.Errorf("with prices set: exit %d, want costs in USD without the placeholder mark:\n%s%s", code, out, errOut)
	}
}

// TestPlanFlagRanges: every number plan reads has a range, and a value
// outside it is a usage error naming the flag, before any work.
func TestPlanFlagRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--history", "-5h"}, `invalid argument "-5h" for "--history" flag`},
		{[]string{"--history", "30m"}, `"--history" flag: 30m is out of range: must be between 1h and 366d`},
		{[]string{"--history", "400d"}, `"--history" flag`},
		{[]string{"--horizon", "-1h"}, `invalid argument "-1h" for "--horizon" flag`},
		{[]string{"--horizon", "0"}, `"--horizon" flag: 0 is out of range`},
		{[]string{"--horizon", "5w"}, `"--horizon" flag: 5w is out of range: must be between 1h and 28d`},
		{[]string{"--warm-up", "91d"}, `"--warm-up" flag`},
		{[]string{"--history", "banana"}, `want a duration such as 90m, 36h, 7d or 2w`},
		{[]string{"--spot-price", "-1"}, "--spot-price -1: must be in [0, 1e+06]"},
		{[]string{"--spot-interruptions", "1e9"}, "--spot-interruptions 1e+09: must be in [0, 60]"},
		{[]string{"--pool", "a"}, "--pool goes with --config"},
		{[]string{"--format", "yaml"}, `--format "yaml": want table or json`},
	} {
		code, _, errOut := runForecaster(append([]string{"plan", "--gpu-rps", "5"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestPlanNegativeHistoryProcess checks a negative --history as a real process:
// 'forecaster plan --history -5h' exits non-zero within 5 s, names the
// flag, and does not panic.
func TestPlanNegativeHistoryProcess(t *testing.T) {
	bin, _ := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, args := range [][]string{{"plan", "--history", "-5h"}, {"plan", "--history", "-5h", "--gpu-rps", "1"}} {
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Fatalf("%v: %v (want exit 2 within 5 s)\n%s", args, err, out)
		}
		if !strings.Contains(string(out), `"--history" flag`) || strings.Contains(string(out), "panic") {
			t.Errorf("%v: %s", args, out)
		}
	}
}
