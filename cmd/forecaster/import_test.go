package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/influx/influxtest"
)

// demandCSV writes days of a daily-cycle request rate at step, ending at
// end (exclusive), and returns the file and the values by Unix ns.
func demandCSV(t *testing.T, end time.Time, days int, step time.Duration) (string, map[int64]float64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,value\n")
	want := map[int64]float64{} // by Unix ns
	rng := rand.New(rand.NewPCG(7, 7))
	for ts := end.Add(-time.Duration(days) * 24 * time.Hour); ts.Before(end); ts = ts.Add(step) {
		hour := float64(ts.UTC().Hour()) + float64(ts.UTC().Minute())/60
		v := math.Round((20+15*math.Sin(2*math.Pi*(hour-9)/24)+rng.Float64())*1000) / 1000
		want[ts.UnixNano()] = v
		fmt.Fprintf(&b, "%s,%g\n", ts.UTC().Format(time.RFC3339), v)
	}
	file := filepath.Join(t.TempDir(), "demand.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, want
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestImportThenServe is the end-to-end check of import: a pool whose
// history was imported from a CSV plans from a forecast on its first tick.
func TestImportThenServe(t *testing.T) {
	t.Setenv("PREWARM_RELEASE_TOKEN", "")
	dir := t.TempDir()
	db := filepath.Join(dir, "prewarm.db")
	step := 5 * time.Minute
	end := time.Now().Truncate(step)
	file, want := demandCSV(t, end, 8, step)

	// The collector already wrote the last 30 minutes and the sample of
	// this minute, as service_request_rate{pool=sd,service=gw}: the import
	// must leave those steps to it.
	st, err := embedded.Open(db, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]string{"pool": "sd", "service": "gw"}
	var pts []store.Point
	for ts := end.Add(-30 * time.Minute); ts.Before(end); ts = ts.Add(step) {
		pts = append(pts, store.Point{Measurement: "service_request_rate", Tags: live, Value: want[ts.UnixNano()], Time: ts})
	}
	pts = append(pts, store.Point{Measurement: "service_request_rate", Tags: live, Value: 20, Time: time.Now()})
	if err := st.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, stdout, stderr := runCLI(t, "import", "--input", file, "--pool", "sd", "--store", "embedded:"+db)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	steps := len(want)
	if w := fmt.Sprintf("imported %d points (%d steps of 5m0s, requests/s)", steps-6, steps-6); !strings.Contains(stdout, w) ||
		!strings.Contains(stdout, "6 steps the store's other service_request_rate{pool=sd} series already cover") {
		t.Errorf("import said %q, want %q and 6 steps left to the collector", stdout, w)
	}
	// Again: the same points overwrite themselves.
	if code, _, stderr := runCLI(t, "import", "--input", file, "--pool", "sd", "--store", "embedded:"+db); code != 0 {
		t.Fatalf("second import: exit %d\n%s", code, stderr)
	}
	st, err = embedded.Open(db, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Query(context.Background(), store.Query{Measurement: "service_request_rate", Match: map[string]string{"pool": "sd"},
		Start: end.Add(-9 * 24 * time.Hour), End: end})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by tags: the collector's {pool,service} comes first.
	if len(got) != 2 || store.CanonicalTags(got[1].Tags) != `{"pool":"sd"}` || len(got[1].Samples) != steps-6 {
		t.Fatalf("store holds %d series, want the import (%d points) and the collector's", len(got), steps-6)
	}
	for _, smp := range got[1].Samples {
		if w, ok := want[smp.Time.UnixNano()]; !ok || w != smp.Value {
			t.Fatalf("imported %s = %v, want %v", smp.Time, smp.Value, w)
		}
	}

	cfg := filepath.Join(dir, "forecaster.yaml")
	os.WriteFile(cfg, []byte(`pools:
  - name: sd
    backend: dryrun
    max: 40
    rps_per_instance: 2
    forecast: {step: 5m, refit_every: 5m, history: 192h, periods: [24h]}
`), 0o600)
	code, stdout, stderr = runCLI(t, "serve", "--config", cfg, "--store", "embedded:"+db, "--once")
	if code != 0 {
		t.Fatalf("serve --once: exit %d\n%s", code, stderr)
	}
	var status []struct {
		Gate, Model, Reason string
		Desired             int
		Planned             service.Number
		Plan                []json.RawMessage
	}
	if err := json.Unmarshal([]byte(stdout), &status); err != nil || len(status) != 1 {
		t.Fatalf("serve --once printed %q: %v", stdout, err)
	}
	if g := status[0].Gate; g != "model" && g != "profile" {
		t.Errorf("first tick's gate %q (%s), want model or profile: the imported history was not used", g, status[0].Reason)
	}
	// The first decision followed a forecast plan: there is one, and its
	// step now is what was planned.
	if len(status[0].Plan) == 0 || !status[0].Planned.Known() || status[0].Desired < int(status[0].Planned) {
		t.Errorf("first tick: plan of %d steps, planned %v, desired %d: want the decision to follow a forecast plan",
			len(status[0].Plan), status[0].Planned, status[0].Desired)
	}
	t.Logf("first tick after import: gate %s, model %s, desired %d (%s)", status[0].Gate, status[0].Model, status[0].Desired, status[0].Reason)
}

// TestImportRecordedTrace imports the Alibaba Stable Diffusion trace
// (requests per hour, Nov-Dec 2024) moved to the last weeks, and checks
// that serve's first tick follows the model.
func TestImportRecordedTrace(t *testing.T) {
	t.Setenv("PREWARM_RELEASE_TOKEN", "")
	file := filepath.Join(datasets.Locate(), "traces", "alibaba_sd_requests_hourly.csv")
	if _, err := os.Stat(file); err != nil {
		t.Skipf("recorded trace not found (%v); set %s to the shared datasets folder", err, datasets.EnvDir)
	}
	dir := t.TempDir()
	db := "embedded:" + filepath.Join(dir, "prewarm.db")
	code, stdout, stderr := runCLI(t, "import", "--input", file, "--pool", "sd", "--counts", "--shift-to-now",
		"--point-every", "30m", "--store", db)
	if code != 0 || !strings.Contains(stdout, "imported 1108 points (554 steps of 1h0m0s, requests per 1h0m0s, as requests/s)") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	cfg := filepath.Join(dir, "forecaster.yaml")
	os.WriteFile(cfg, []byte("pools:\n  - {name: sd, backend: dryrun, max: 40, rps_per_instance: 0.05}\n"), 0o600)
	// No collector writes live demand here, so the tick reports that (exit
	// 1), but it plans from the refit first.
	_, stdout, _ = runCLI(t, "serve", "--config", cfg, "--store", db, "--once")
	var status []struct{ Gate, Model string }
	if err := json.Unmarshal([]byte(stdout), &status); err != nil || len(status) != 1 {
		t.Fatalf("serve --once printed %q: %v", stdout, err)
	}
	if status[0].Gate != "model" {
		t.Errorf("gate %q, want model: 23 days of hourly history should be trusted", status[0].Gate)
	}
	t.Logf("recorded trace: gate %s, model %s", status[0].Gate, status[0].Model)
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	db := "embedded:" + filepath.Join(dir, "p.db")
	future := filepath.Join(dir, "future.csv")
	os.WriteFile(future, []byte(fmt.Sprintf("timestamp,value\n%s,1\n%s,2\n",
		time.Now().Add(time.Hour).UTC().Format(time.RFC3339), time.Now().Add(2*time.Hour).UTC().Format(time.RFC3339))), 0o600)
	index := filepath.Join(dir, "index.csv")
	os.WriteFile(index, []byte("t,value\n0,1\n1,2\n2,3\n"), 0o600)
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("timestamp,value\n2026-01-05T00:00:00Z,1\n2026-01-05T00:05:00Z,lots\n"), 0o600)
	good, _ := demandCSV(t, time.Now().Truncate(time.Hour), 1, time.Hour)
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no input", []string{"--pool", "sd"}, 2, "--input is required"},
		{"no pool", []string{"--input", good}, 2, "--pool is required"},
		{"stray argument", []string{"--input", good, "--pool", "sd", "x.csv"}, 2, "unexpected argument"},
		{"missing file", []string{"--input", filepath.Join(dir, "none.csv"), "--pool", "sd", "--store", db}, 1, "none.csv"},
		{"bad row", []string{"--input", bad, "--pool", "sd", "--store", db}, 1, "bad.csv:3"},
		{"future", []string{"--input", future, "--pool", "sd", "--store", db}, 1, "shift it to end before now"},
		{"index", []string{"--input", index, "--pool", "sd", "--store", db}, 2, "--shift-to-now"},
		{"point-every not dividing", []string{"--input", good, "--pool", "sd", "--point-every", "7m", "--store", db}, 1, "does not divide"},
		{"bad store", []string{"--input", good, "--pool", "sd", "--store", "sqlite:x"}, 2, "want embedded:PATH"},
		{"read-only store", []string{"--input", good, "--pool", "sd", "--store", "http://127.0.0.1:1"}, 1, "service_request_rate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"import"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, stderr %q; want exit %d saying %q", code, stderr, tc.code, tc.says)
			}
		})
	}
}

// TestImportInflux imports into a real InfluxDB 1.8 and reads it back
// through the InfluxDB store, as serve would.
func TestImportInflux(t *testing.T) {
	url := influxtest.URL(t)
	step := 10 * time.Minute
	end := time.Now().Truncate(step)
	file, want := demandCSV(t, end, 2, step)
	nonce := fmt.Sprintf("imp%x", rand.Uint32())
	code, stdout, stderr := runCLI(t, "import", "--input", file, "--pool", nonce, "--measurement", "service_request_rate_"+nonce,
		"--influx-url", url, "--influx-bucket", influxtest.Bucket)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, fmt.Sprintf("imported %d points", len(want))) {
		t.Errorf("import said %q, want %d points", stdout, len(want))
	}
	st, err := influx.New(context.Background(), influx.Config{URL: url, Bucket: influxtest.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Query(context.Background(), store.Query{Measurement: "service_request_rate_" + nonce, Match: map[string]string{"pool": nonce},
		Start: end.Add(-3 * 24 * time.Hour), End: end, Step: step, Aggregate: store.Max})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Samples) != len(want) {
		t.Fatalf("InfluxDB holds %v, want one series of %d steps", got, len(want))
	}
	for _, smp := range got[0].Samples {
		if w, ok := want[smp.Time.UnixNano()]; !ok || w != smp.Value {
			t.Fatalf("%s = %v, want %v", smp.Time, smp.Value, w)
		}
	}
}

// An export from weeks ago, imported with --shift-to-now, reaches the last
// day, and import's last line names what it wrote and where.
func TestImportShiftToNowReachesTheLastDay(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "prewarm.db")
	step := 5 * time.Minute
	end := time.Now().Truncate(step).Add(-40*24*time.Hour - 5*time.Hour)
	file, want := demandCSV(t, end, 3, step)
	code, stdout, stderr := runCLI(t, "import", "--input", file, "--pool", "sd", "--shift-to-now", "--store", "embedded:"+db)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	for _, w := range []string{"--shift-to-now: moved by", fmt.Sprintf("imported %d points", len(want)),
		"into service_request_rate{pool=sd} in embedded:" + db, "before now"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("import said %q, want %q", stdout, w)
		}
	}
	st, err := embedded.Open(db, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	got, err := st.Query(context.Background(), store.Query{Measurement: "service_request_rate", Match: map[string]string{"pool": "sd"},
		Start: now.Add(-10 * 24 * time.Hour), End: now.Add(time.Minute)})
	if err != nil || len(got) != 1 || len(got[0].Samples) != len(want) {
		t.Fatalf("store holds %v (%v), want one series of %d points", got, err, len(want))
	}
	if last := got[0].Samples[len(got[0].Samples)-1].Time; now.Sub(last) > 24*time.Hour+step {
		t.Errorf("the last imported point is at %s, %v before now; want within a day", last, now.Sub(last))
	}
}
