package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	var r planReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(r.Steps) < 3 || !r.Steps[0].At.Equal(r.From) {
		t.Fatalf("schedule %+v should start at %s", r.Steps, r.From)
	}
	var prewarm, floor bool
	for _, s := range r.Steps {
		prewarm = prewarm || strings.Contains(s.Reason, "(pre-warm 10m)")
		if strings.HasPrefix(s.Reason, "schedule daily 03:00-04:00") {
			floor = true
			if s.Desired != 17 || s.At.Format("15:04") != "02:50" {
				t.Errorf("floor step %s %d, want 17 from 02:50 (one boot delay early)", s.At.Format("15:04"), s.Desired)
			}
		}
	}
	if !prewarm || !floor {
		t.Errorf("want a pre-warm step and the schedule floor in %+v", r.Steps)
	}
	// Cost arithmetic: GPU-hours at the on-demand price, and the cost per
	// 1,000 requests from the expected requests.
	if math.Abs(r.OnDemandCost-2.5*r.GPUHours) > 1e-6 || r.ExpectedRequests <= 0 ||
		math.Abs(r.CostPer1000-r.OnDemandCost/r.ExpectedRequests*1000) > 1e-9 {
		t.Errorf("cost %.2f for %.2f GPU-h, %.0f requests, %.4f per 1000", r.OnDemandCost, r.GPUHours, r.ExpectedRequests, r.CostPer1000)
	}
	if r.ReservedBaseline < 1 || r.BaselineCost >= r.OnDemandCost {
		t.Errorf("a reserved baseline of %d at 1.60/h should cost less than all on demand: %.2f vs %.2f", r.ReservedBaseline, r.BaselineCost, r.OnDemandCost)
	}
	// Which plan the gate trusts depends on the model's last week; either
	// way it says why.
	if !strings.HasPrefix(r.Gate, "model: model trusted") && !strings.HasPrefix(r.Gate, "profile: stepped back to seasonal profile: model MAE") {
		t.Errorf("gate %q", r.Gate)
	}
	if d, _ := time.ParseDuration(r.Horizon); d != 24*time.Hour {
		t.Errorf("horizon %q", r.Horizon)
	}
}

func TestPlanTableAndShortHistory(t *testing.T) {
	// Half a day of history: less than one season, so no forecast plan.
	code, out, errOut := runForecaster("plan", "--synthetic-days", "1", "--step", "1h", "--gpu-rps", "20", "--horizon", "6h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Capacity plan for synthetic", "gate:     profile: stepped back to seasonal profile: history 24 steps < 2 seasons of 24",
		"time (UTC)", "desired", "reason", "GPU-hours:", "per 1,000 requests"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanUsage(t *testing.T) {
	code, _, errOut := runForecaster("plan", "--gpu-rps", "5", "--horizon", "-1h")
	if code != 2 || !strings.Contains(errOut, "--horizon -1h0m0s: must be positive") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}
