package live

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/internal/chromium"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/service/ui/uitest"
)

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// startDemo runs the demo at speed until the test ends and returns its
// address.
func startDemo(t *testing.T, speed float64) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		done <- Run(ctx, Options{Listen: "127.0.0.1:0", Speed: speed, Duration: 3 * time.Minute, Ready: func(a string) { addr <- a }}, &out)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("demo: %v", err)
		}
	})
	select {
	case a := <-addr:
		return "http://" + a
	case err := <-done:
		t.Fatalf("demo stopped before serving: %v\n%s", err, out.String())
	case <-time.After(time.Minute):
		t.Fatal("the demo did not start serving within a minute")
	}
	return ""
}

// waitSim waits until the demo's clock reaches at.
func waitSim(t *testing.T, base string, at time.Time, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var body struct{ Now time.Time }
		getJSON(t, base+"/api/v1/pools", &body)
		if !body.Now.Before(at) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the simulated clock reads %s, want %s", limit, body.Now, at)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The newcomer's view of the demo: over the first simulated day, capacity
// is ready before the morning ramp of demand needs it, and falls after the
// evening. And the page draws it in Chromium.
func TestDemoPrewarmsBeforeTheMorningPeak(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a simulated day; skipped with -short")
	}
	base := startDemo(t, MaxSpeed)
	opts, _ := Options{}.withDefaults()
	demand, from, err := loadDemand(opts)
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := poolSpec(demand, from, opts.BootDelay)
	start := demand.Time(from) // Monday 03:00 UTC
	waitSim(t, base, start.Add(21*time.Hour), 2*time.Minute)

	var hist service.HistoryView
	getJSON(t, base+"/api/v1/pools/"+PoolName+"/history", &hist)
	needed := func(s service.Sample) float64 {
		return math.Ceil(float64(s.DemandRPS) / (pool.RPSPerInstance * pool.TargetUtilisation))
	}
	// The night and day levels of what demand needs, and half way.
	night, day := math.Inf(1), 0.0
	for _, s := range hist.Samples {
		switch h := s.At.Sub(start).Hours(); {
		case h < 3 && s.DemandRPS.Known():
			night = math.Min(night, needed(s))
		case h >= 7 && h < 15 && s.DemandRPS.Known():
			day = math.Max(day, needed(s))
		}
	}
	half := (night + day) / 2
	var neededUp, readyUp, neededDown, desiredDown time.Time
	for _, s := range hist.Samples {
		h := s.At.Sub(start).Hours()
		if h > 12 && h < 21 {
			if neededDown.IsZero() && needed(s) < half {
				neededDown = s.At
			}
			if desiredDown.IsZero() && float64(s.Desired) < half {
				desiredDown = s.At
			}
			continue
		}
		if neededUp.IsZero() && needed(s) >= half {
			neededUp = s.At
		}
		if readyUp.IsZero() && float64(s.Ready) >= half {
			readyUp = s.At
		}
	}
	t.Logf("demand needs %v instances at night, %v by day; half way (%v): ready at %s, needed at %s; on the way down desired at %s, needed at %s",
		night, day, half, readyUp.Format("15:04"), neededUp.Format("15:04"), desiredDown.Format("15:04"), neededDown.Format("15:04"))
	if day < 2*night {
		t.Fatalf("demand needs %v by day and %v at night: not the daily cycle the demo shows", day, night)
	}
	if readyUp.IsZero() || neededUp.IsZero() || readyUp.After(neededUp) {
		t.Errorf("capacity was ready half way at %s, after demand needed it at %s: not pre-warmed", readyUp, neededUp)
	}
	if desiredDown.IsZero() || neededDown.IsZero() || desiredDown.Sub(neededDown) > 2*time.Hour {
		t.Errorf("desired capacity fell half way at %s, demand at %s: capacity did not follow it down", desiredDown, neededDown)
	}

	r := uitest.Check(t, base, 2*time.Second)
	t.Log(r)
	for _, series := range []string{"demand-chart/demand", "demand-chart/forecast", "demand-chart/band", "capacity-chart/ready", "capacity-chart/desired", "capacity-chart/planned"} {
		if r.Points[series] < 2 {
			t.Errorf("%s drew %d points, want a line", series, r.Points[series])
		}
	}
	chromium.SaveScreenshot(t, "demo-live.png", r.Screenshot)
}

// --demo-trace replays a recorded trace: the NYC taxi demand (30-minute
// steps, interpolated to minutes), four weeks of it as history, so the
// first decisions already follow a forecast.
func TestDemoReplaysATrace(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a trace; skipped with -short")
	}
	path := filepath.Join(datasets.Locate(), "traces", "nyc_taxi.csv")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s (set %s to the shared data folder): %v", path, datasets.EnvDir, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		done <- Run(ctx, Options{Listen: "127.0.0.1:0", Speed: MaxSpeed, Trace: path, Duration: time.Minute, Ready: func(a string) { addr <- a }}, &out)
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("the demo stopped: %v\n%s", err, out.String())
	}
	// The gate may rightly step back to reactive for a few hours (at night
	// the model can lose to seasonal naive), so the test watches the first
	// simulated day and wants decisions that follow a forecast in it.
	begin := time.Date(2014, 7, 29, 0, 0, 0, 0, time.UTC) // the trace's start + 28 days
	end := begin.Add(24 * time.Hour)
	var pool service.PoolStatus
	var fc service.ForecastView
	followed := false
	for deadline := time.Now().Add(time.Minute); !followed; time.Sleep(10 * time.Millisecond) {
		getJSON(t, base+"/api/v1/pools/"+PoolName, &pool)
		getJSON(t, base+"/api/v1/pools/"+PoolName+"/forecast", &fc)
		followed = (pool.Gate == planner.GateModel || pool.Gate == planner.GateProfile) && len(fc.Steps) > 0 && pool.DemandRPS.Known()
		if !followed && (pool.At.After(end) || time.Now().After(deadline)) {
			t.Fatalf("replaying the trace until %s: gate %q (%s), %d forecast steps, demand %v; want decisions that follow a forecast from the imported history on the first day",
				pool.At.Format(time.RFC3339), pool.Gate, pool.GateReason, len(fc.Steps), pool.DemandRPS)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "28 days of nyc_taxi.csv demand") {
		t.Errorf("the demo did not say what it replays:\n%s", out.String())
	}
	t.Logf("at %s: gate %s, model %s, demand %.0f, desired %d", pool.At.Format(time.RFC3339), pool.Gate, pool.Model, float64(pool.DemandRPS), pool.Desired)
}
