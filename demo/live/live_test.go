package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/prewarm/prewarm/tune"
	"io"
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

// demo is a demo running for a test.
type demo struct {
	base string // http://address
	out  bytes.Buffer
	done chan error
	stop context.CancelFunc
}

// launchDemo runs the demo with opts (on a loopback port, reporting when it
// serves) and returns it once it serves.
func launchDemo(t *testing.T, opts Options) *demo {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &demo{done: make(chan error, 1), stop: cancel}
	t.Cleanup(cancel)
	addr := make(chan string, 1)
	opts.Listen, opts.Ready = "127.0.0.1:0", func(a string) { addr <- a }
	go func() { d.done <- Run(ctx, opts, &d.out) }()
	select {
	case a := <-addr:
		d.base = "http://" + a
		return d
	case err := <-d.done:
		cancel()
		t.Fatalf("the demo stopped before serving: %v\n%s", err, d.out.String())
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("the demo did not start serving within a minute")
	}
	return nil
}

// finish stops the demo and returns what it printed, failing the test on
// its error.
func (d *demo) finish(t *testing.T) string {
	t.Helper()
	d.stop()
	if err := <-d.done; err != nil {
		t.Errorf("demo: %v", err)
	}
	return d.out.String()
}

// startDemo runs the demo at speed until the test ends and returns its
// address.
func startDemo(t *testing.T, speed float64) string {
	t.Helper()
	d := launchDemo(t, Options{Speed: speed, Duration: 3 * time.Minute})
	t.Cleanup(func() { d.finish(t) })
	return d.base
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
	pool, _ := poolSpec(demand, from, opts)
	start := demand.Time(from) // Monday 03:00 UTC
	waitSim(t, base, start.Add(21*time.Hour), 2*time.Minute)

	var hist service.HistoryView
	getJSON(t, base+"/api/v1/pools/"+PoolName+"/history", &hist)
	needed := func(s service.Sample) float64 {
		return math.Ceil(float64(s.DemandRPS) / (pool.Fleet.RPSPerInstance * pool.TargetUtilisation))
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

// --trace replays a recorded trace: the NYC taxi demand (30-minute
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
	d := launchDemo(t, Options{Speed: MaxSpeed, Trace: path, Duration: time.Minute})
	base := d.base
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
			t.Fatalf("replaying the trace until %s: gate %q (%s), %d forecast steps, demand %v; want decisions that follow a forecast from the imported history on the first day\n%s",
				pool.At.Format(time.RFC3339), pool.Gate, pool.GateReason, len(fc.Steps), pool.DemandRPS, d.finish(t))
		}
	}
	if out := d.finish(t); !strings.Contains(out, "28 days of nyc_taxi.csv demand") {
		t.Errorf("the demo did not say what it replays:\n%s", out)
	}
	t.Logf("at %s: gate %s, model %s, demand %.0f, desired %d", pool.At.Format(time.RFC3339), pool.Gate, pool.Model, float64(pool.DemandRPS), pool.Desired)
}

// With Shift the demand turns from smooth rhythms to untimeable spikes a
// week into the replay: within two simulated days of the shift the pool's
// tuner leaves the forecast candidate it followed through the smooth week,
// and the API says which candidate it follows and why.
func TestDemoShiftChangesThePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("replays nine simulated days; skipped with -short")
	}
	d := launchDemo(t, Options{Speed: MaxSpeed, Shift: true, Duration: 3 * time.Minute})
	base := d.base
	var pool service.PoolStatus
	var shift time.Time
	before := ""
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		getJSON(t, base+"/api/v1/pools/"+PoolName, &pool)
		if shift.IsZero() && !pool.At.IsZero() {
			shift = pool.At.Truncate(24*time.Hour).AddDate(0, 0, ShiftAfterDays)
		}
		if !shift.IsZero() && pool.At.Before(shift) && pool.Tuning.Candidate != "" {
			before = pool.Tuning.Candidate
		}
		if !shift.IsZero() && pool.At.After(shift) && pool.Tuning.Candidate != before && before != "" {
			break
		}
		if time.Now().After(deadline) || (!shift.IsZero() && pool.At.After(shift.Add(48*time.Hour))) {
			t.Fatalf("at %s (shift at %s): candidate %q, the same as before the shift (%q); want another within two days\n%s",
				pool.At.Format(time.RFC3339), shift.Format(time.RFC3339), pool.Tuning.Candidate, before, d.finish(t))
		}
	}
	switched := pool
	// A week of replays (tune.min_history) gives the saving its baseline:
	// a fleet without a forecast that met the SLO on the same demand.
	for deadline := time.Now().Add(time.Minute); pool.Tuning.Saving.Baseline == "" && time.Now().Before(deadline) &&
		pool.At.Before(shift.Add(48*time.Hour)); time.Sleep(20 * time.Millisecond) {
		getJSON(t, base+"/api/v1/pools/"+PoolName, &pool)
	}
	d.finish(t)
	if tune.Kind(before) == tune.Flat || switched.Tuning.Why == "" || len(switched.Tuning.Candidates) == 0 {
		t.Errorf("before the shift %q, after it %q (%s) with %d candidates; want a forecast candidate before and a reason after",
			before, switched.Tuning.Candidate, switched.Tuning.Why, len(switched.Tuning.Candidates))
	}
	t.Logf("at %s: %s → %s: %s", switched.At.Format(time.RFC3339), before, switched.Tuning.Candidate, switched.Tuning.Why)
	sv := pool.Tuning.Saving
	if k := tune.Kind(sv.Baseline); (k != tune.Flat && k != tune.Reactive && k != tune.ReactiveSurge) || !(sv.BaselineCost > 0) || sv.Days < 1 ||
		math.IsNaN(sv.Share) || sv.Share > 1 {
		t.Errorf("saving %+v; want a reactive or flat baseline with its cost and days", sv)
	}
	t.Logf("at %s, saving: %.1f%% against %s over %d days", pool.At.Format(time.RFC3339), 100*sv.Share, sv.Baseline, sv.Days)
}

// With --warm-start and --spot-share the demo's pool runs the capacity
// tiers: within its first simulated day the API shows the spot block it
// was given and decisions that split the pool into on-demand and spot
// instances with stopped ones waiting warm, and the simulated fleet has
// started some of them warm.
func TestDemoRunsTheTiers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the live demo for a simulated day; skipped with -short")
	}
	d := launchDemo(t, Options{Speed: MaxSpeed, Duration: time.Minute, WarmStart: 90 * time.Second, SpotShare: 0.5})
	var pool service.PoolStatus
	seen := planner.Tiers{}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		getJSON(t, d.base+"/api/v1/pools/"+PoolName, &pool)
		seen.Spot, seen.OnDemand, seen.Warm = max(seen.Spot, pool.Tiers.Spot), max(seen.OnDemand, pool.Tiers.OnDemand), max(seen.Warm, pool.Tiers.Warm)
		if seen.Spot > 0 && seen.OnDemand > 0 && seen.Warm > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute (simulated %s): the largest tiers seen were %+v; want spot, on-demand and warm instances\n%s",
				pool.At.Format(time.RFC3339), seen, d.finish(t))
		}
	}
	if pool.Spot == nil || pool.Spot.Share != 0.5 || pool.WarmStart != 90*time.Second {
		t.Errorf("the pool shows spot %+v and warm_start %v; want share 0.5 and 90s", pool.Spot, pool.WarmStart)
	}
	// The simulated back-end was told both tiers, through the safety
	// layer, as a cloud group would be.
	resp, err := http.Get(d.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, op := range []string{"set_spot", "set_warm"} {
		want := fmt.Sprintf(`prewarm_actuator_calls_total{backend="simulated",op=%q,outcome="ok"}`, op)
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("/metrics has no %s: the fleet was not told its tiers", want)
		}
	}
	d.finish(t)
}
