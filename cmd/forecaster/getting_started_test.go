package main

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/internal/chromium"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/service/ui/uitest"
)

// The new user's path of docs/getting-started.md, step by step, with the
// real binaries on loopback: an app's Prometheus page, a CSV export of two
// weeks imported into the embedded store, the collector scraping the app
// into that store, a forecast-only pool on dryrun reading it through the
// collector, whose first decision already follows the model; the page,
// which claims no saving for a pool that applies nothing; and the switch to
// active through the API.
func TestGettingStarted(t *testing.T) {
	forecaster, collector := binaries(t)
	dir := t.TempDir()
	db := "embedded:" + filepath.Join(dir, "prewarm.db")

	// 2. The history: two weeks of requests per 5 minutes, a daily rhythm,
	// exported a month ago (--shift-to-now moves it to end now).
	export := filepath.Join(dir, "export.csv")
	var csv strings.Builder
	csv.WriteString("time,requests\n")
	from := time.Now().UTC().Truncate(5*time.Minute).AddDate(0, 0, -44)
	for ts := from; ts.Before(from.AddDate(0, 0, 14)); ts = ts.Add(5 * time.Minute) {
		h := float64(ts.Hour()) + float64(ts.Minute())/60
		fmt.Fprintf(&csv, "%s,%.0f\n", ts.Format(time.RFC3339), 300*(50-40*math.Cos(2*math.Pi*(h-3)/24)))
	}
	if err := os.WriteFile(export, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runToEnd(t, time.Minute, forecaster, nil,
		"import", "--input", export, "--pool", "api", "--counts", "--shift-to-now", "--store", db)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}

	// 3. Collect.
	collectorAddr := freeAddr(t)
	col := start(t, collector, nil, "--scrape", "api="+fakeApp(t), "--store", db, "--listen", collectorAddr, "--interval", "1s",
		"--spool-dir", filepath.Join(dir, "spool"))
	waitFor(t, 20*time.Second, "the collector to start", func() bool { return strings.Contains(col.output(), "collector started") })

	// 4. A pool that only watches; decisions every 5 s rather than the
	// default minute, so that the page has a few within the test.
	cfg := filepath.Join(dir, "forecaster.yaml")
	if err := os.WriteFile(cfg, []byte(`interval: 5s
pools:
  - name: api
    mode: forecast-only
    backend: dryrun
    max: 20
    rps_per_instance: 10
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runToEnd(t, 30*time.Second, forecaster, nil, "serve", "--config", cfg, "--check-config"); code != 0 {
		t.Fatalf("--check-config: exit %d\n%s%s", code, out, errOut)
	}
	addr := freeAddr(t)
	const token = "getting-started-token"
	srv := start(t, forecaster, []string{service.EnvAPIToken + "=" + token}, "serve", "--config", cfg,
		"--store", "http://"+collectorAddr, "--listen", addr, "--state", filepath.Join(dir, "state.db"))
	var st service.PoolStatus
	waitFor(t, 30*time.Second, "the first decision", func() bool {
		var ok bool
		st, ok = poolStatus(addr)
		return ok && !st.At.IsZero()
	})
	first := st
	// The serve and the collector start together: the first decision may
	// come before the collector has scraped twice (a rate needs two
	// samples) and say so. The next one reads live demand.
	waitFor(t, 30*time.Second, "a decision that reads live demand", func() bool {
		var ok bool
		st, ok = poolStatus(addr)
		return ok && st.Error == ""
	})
	if first.Error != "" && !strings.Contains(first.Error, "is the collector writing it?") {
		t.Errorf("first decision failed with %q, want no error or the collector's hint", first.Error)
	}

	// 5. The first decision follows the model, computes and applies nothing.
	if st.Gate != planner.GateModel || st.Mode != "forecast-only" || st.Outcome != service.OutcomeNotApplied {
		t.Errorf("first decision: gate %s (%s), mode %s, outcome %s; want the model, forecast-only, not applied\n%s",
			st.Gate, st.GateReason, st.Mode, st.Outcome, srv.output())
	}
	if st.Tuning.Saving.Baseline != "" {
		t.Errorf("a saving against %s before any week of replays", st.Tuning.Saving.Baseline)
	}
	t.Run("the page", func(t *testing.T) { // skips without Chromium (make test installs it)
		r := uitest.Check(t, "http://"+addr, time.Second)
		if !strings.Contains(r.Saving, "no saving figure yet") {
			t.Errorf("the forecast-only pool's cost card says %q; want no saving figure before a week of replays", r.Saving)
		}
		chromium.SaveScreenshot(t, "getting-started.png", r.Screenshot)
	})

	// 6. Switch it on.
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/pools/api/mode", strings.NewReader(`{"mode": "active"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST mode: %s", resp.Status)
	}
	waitFor(t, 10*time.Second, "the pool in mode active", func() bool {
		st, _ = poolStatus(addr)
		return st.Mode == "active"
	})
	t.Logf("gate %s (%s); mode %s from %s", st.Gate, st.GateReason, st.Mode, st.ModeSource)
}
