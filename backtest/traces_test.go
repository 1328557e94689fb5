package backtest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
)

// datasetsDir is where the shared traces live: $PREWARM_DATASETS or
// ../../shared/datasets relative to this package.
func datasetsDir() string {
	if d := os.Getenv("PREWARM_DATASETS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "datasets")
}

// loadTrace reads a counts-per-row trace and turns it into requests/s.
func loadTrace(t testing.TB, name string) Trace {
	t.Helper()
	path := filepath.Join(datasetsDir(), "traces", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("trace %s not available (set PREWARM_DATASETS): %v", path, err)
	}
	s, err := datasets.LoadCSV(path, datasets.CSVOptions{Counts: true})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	s = s.PerSecond()
	return Trace{Name: name, Start: s.Start, Step: s.Step, RPS: s.Values}
}

// barConfig sizes the fleet so the trace's peak needs staticPeak instances
// and boots in 10 minutes, as the acceptance bar asks.
func barConfig(tr Trace, staticPeak int) Config {
	cfg := DefaultConfig()
	c := &cfg.Planner
	c.Fleet.BootDelay = 10 * time.Minute
	c.Fleet.RPSPerInstance = tr.Peak() / (float64(staticPeak) * c.TargetUtilisation)
	return cfg
}

func TestExplore(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	for _, name := range []string{"nyc_taxi.csv", "alibaba_sd_requests_hourly.csv"} {
		tr := loadTrace(t, name)
		cfg := barConfig(tr, 20)
		if q := os.Getenv("Q"); q != "" {
			cfg.Planner.ForecastQuantile, _ = strconv.ParseFloat(q, 64)
		}
		if q := os.Getenv("TOL"); q != "" {
			cfg.Planner.Gating.Tolerance, _ = strconv.ParseFloat(q, 64)
		}
		if q := os.Getenv("UTIL"); q != "" {
			cfg.Planner.TargetUtilisation, _ = strconv.ParseFloat(q, 64)
			cfg.Planner.Fleet.RPSPerInstance = tr.Peak() / (20 * cfg.Planner.TargetUtilisation)
		}
		if q := os.Getenv("MAXSTEP"); q != "" {
			cfg.Planner.Reactive.MaxStep, _ = strconv.Atoi(q)
		}
		if q := os.Getenv("REFIT"); q != "" {
			cfg.Forecast.RefitEvery, _ = time.ParseDuration(q)
		}
		if os.Getenv("ONLY") != "" && !strings.Contains(name, os.Getenv("ONLY")) {
			continue
		}
		t0 := time.Now()
		refits, err := newForecaster(cfg.withDefaults(tr), tr).run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("forecasts: %d refits in %v", len(refits), time.Since(t0))
		if os.Getenv("GATES") != "" {
			for j, r := range refits {
				if j%24 == 0 {
					t.Logf("%s %s | %s", r.At.Format("01-02 15:04"), r.Gate.Level, r.Gate.Reason)
				}
			}
		}
		start := time.Now()
		rep, err := Run(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s static=%d took %v", name, rep.Static, time.Since(start))
		for _, r := range rep.Policies {
			if os.Getenv("MISSES") == r.Name {
				for _, cp := range r.Capacity {
					if cp.Underprovisioned > 0 {
						t.Logf("miss %s %v demand=%.2f inst ready=%.2f desired=%.2f", cp.At.Format("Mon 01-02 15:04"), cp.Underprovisioned, cp.DemandRPS/cfg.Planner.Fleet.RPSPerInstance, cp.Ready, cp.Desired)
					}
				}
			}
			t.Logf("%-10s gpuh=%8.0f cost=%6.3f slo=%.4f p99=%6.1f drop=%8.0f under=%6.0f act=%5d %v", r.Name, r.GPUHours, r.CostVsStatic, r.SLOAttainment, r.P99LatencyS, r.Dropped, r.UnderprovisionedMinutes, r.Actions, r.ForecastMinutes)
		}
	}
}
