package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/prewarm/prewarm/internal/chromium"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/service/ui/uitest"
	"github.com/prewarm/prewarm/store/prometheus/promtest"
)

// httpGet returns the body of a 200 answer, failing t otherwise.
func httpGet(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", u, resp.Status, err, b)
	}
	return b
}

// The live demo (forecaster demo): the binary, run for 30 s,
// serves prewarm_ series of the forecast and the desired capacity, lists
// the demo pool with a forecast and a schedule, and its page draws the
// charts in headless Chromium. A real Prometheus scrapes it meanwhile, and
// every rule of deploy/prometheus/rules.yml evaluates on those series
// without an error: the recording rules on the pool's metrics give series,
// and no alert fires for a healthy demo.
func TestServeDemo(t *testing.T) {
	forecaster, _ := binaries(t)
	addr := freeAddr(t)
	p := start(t, forecaster, nil, "demo", "--listen", addr, "--duration", "5m")
	base := "http://" + addr
	waitFor(t, 30*time.Second, "the demo to serve", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	began := time.Now()
	var prom *promtest.Server
	_, onPath := exec.LookPath("prometheus")
	if os.Getenv(promtest.EnvBinary) != "" || os.Getenv(promtest.EnvRequire) == "1" || onPath == nil {
		prom = promtest.Start(t, "", time.Second, promtest.Target{Job: "prewarm-forecaster", Addr: addr})
	}
	time.Sleep(30*time.Second - time.Since(began))

	metrics := string(httpGet(t, base+"/metrics"))
	for _, series := range []string{`prewarm_pool_forecast_rps{bound="mean",pool="demo"}`, `prewarm_pool_forecast_rps{bound="upper",pool="demo"}`,
		`prewarm_pool_desired_instances{pool="demo"}`, `prewarm_pool_ready_instances{pool="demo"}`, `prewarm_build_info{`} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	var pools struct {
		Now   time.Time
		Pools []service.PoolStatus
	}
	json.Unmarshal(httpGet(t, base+"/api/v1/pools"), &pools)
	if len(pools.Pools) != 1 || pools.Pools[0].Name != "demo" {
		t.Fatalf("/api/v1/pools lists %+v, want the demo pool", pools.Pools)
	}
	var fc service.ForecastView
	json.Unmarshal(httpGet(t, base+"/api/v1/pools/demo/forecast"), &fc)
	var sched service.ScheduleView
	json.Unmarshal(httpGet(t, base+"/api/v1/pools/demo/schedule"), &sched)
	if len(fc.Steps) == 0 || len(sched.Steps) == 0 {
		t.Errorf("forecast has %d steps and schedule %d, want both non-empty", len(fc.Steps), len(sched.Steps))
	}
	st := pools.Pools[0]
	t.Logf("after %v: simulated %s, gate %s, model %s, desired %d ready %d, MASE %.2f, %d forecast steps, %d schedule steps; cost %.0f vs static %.0f",
		time.Since(began).Round(time.Second), pools.Now.Format("Mon 15:04"), st.Gate, st.Model, st.Desired, st.Ready, st.ForecastMASE,
		len(fc.Steps), len(sched.Steps), st.Cost.Cost, st.Cost.StaticCost)

	if prom != nil {
		checkRules(t, prom.URL)
	} else {
		t.Log("no Prometheus: the rules were not evaluated on the demo's series (make test runs them)")
	}

	r := uitest.Check(t, base, 2*time.Second) // skips here without Chromium (make test requires it)
	t.Log(r)
	for _, s := range []string{"demand-chart/demand", "demand-chart/forecast", "demand-chart/band", "capacity-chart/ready", "capacity-chart/desired"} {
		if r.Points[s] < 2 {
			t.Errorf("the page's %s drew %d points", s, r.Points[s])
		}
	}
	chromium.SaveScreenshot(t, "serve-demo.png", r.Screenshot)

	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("the demo did not stop cleanly on SIGTERM: %v\n%s", err, p.output())
	}
}

// checkRules evaluates every rule expression of deploy/prometheus/rules.yml
// on the Prometheus at promURL, which scrapes the demo.
func checkRules(t *testing.T, promURL string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "prometheus", "rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct{ Record, Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	// Recording rules over the pool's own metrics must give a series; the
	// ones over other recorded series or the collector cannot here.
	wantSeries := map[string]bool{
		"pool:prewarm_capacity_gap_instances": true, "pool:prewarm_demand_above_forecast_upper:bool": true,
		"pool_outcome:prewarm_decisions:rate5m": true, "pool:prewarm_cost_per_hour:rate1h": true,
		"pool:prewarm_static_cost_per_hour:rate1h": true, "pool:prewarm_gpu_hours:rate1h": true,
		"pool:prewarm_cost_below_static:ratio1d": true, "job:prewarm_tick_duration_seconds:p99_5m": true,
	}
	waitFor(t, 20*time.Second, "Prometheus to have scraped the demo", func() bool {
		n, _, _ := promQuery(promURL, `prewarm_pool_desired_instances{pool="demo"}`)
		return n > 0
	})
	rules := 0
	for _, g := range file.Groups {
		for _, rule := range g.Rules {
			rules++
			name := rule.Record + rule.Alert
			n, desc, err := promQuery(promURL, rule.Expr)
			switch {
			case err != nil:
				t.Errorf("rule %s: %v", name, err)
			case rule.Alert != "" && n > 0:
				t.Errorf("alert %s fires on the healthy demo: %s", name, desc)
			case wantSeries[rule.Record] && n == 0:
				t.Errorf("recording rule %s gives no series on the demo's metrics", name)
			default:
				t.Logf("rule %s: %d series %s", name, n, desc)
			}
		}
	}
	if rules < 10 {
		t.Errorf("read %d rules from rules.yml", rules)
	}
}

// promQuery runs an instant query and returns the number of series and a
// short rendering of the first.
func promQuery(promURL, expr string) (int, string, error) {
	resp, err := http.Get(promURL + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			Result []struct {
				Metric map[string]string
				Value  []any
			}
		}
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		return 0, "", fmt.Errorf("%s: %s", resp.Status, raw)
	}
	if body.Status != "success" {
		return 0, "", fmt.Errorf("%s: %s", expr, body.Error)
	}
	desc := ""
	if len(body.Data.Result) > 0 {
		r := body.Data.Result[0]
		var b bytes.Buffer
		fmt.Fprintf(&b, "%v = %v", r.Metric, r.Value[1:])
		desc = b.String()
	}
	return len(body.Data.Result), desc, nil
}

// Both binaries say which build they are, and the collector exports it as
// prewarm_build_info like the forecaster.
func TestVersion(t *testing.T) {
	forecaster, collector := binaries(t)
	version := regexp.MustCompile(`^(forecaster|collector) \S+ \(revision \S+, go1\.\d+`)
	for _, bin := range []string{forecaster, collector} {
		out, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil || !version.Match(out) || strings.Count(string(out), "\n") != 1 {
			t.Errorf("%s --version: %v %q", filepath.Base(bin), err, out)
		}
	}
	var stdout bytes.Buffer
	if code := run(t.Context(), []string{"--version"}, &stdout, io.Discard); code != 0 || !version.Match(stdout.Bytes()) {
		t.Errorf("run --version: exit %d, %q", code, stdout.String())
	}
	addr := freeAddr(t)
	dir := t.TempDir()
	start(t, collector, nil, "--scrape", "sd="+fakeApp(t), "--interval", "1s", "--store", "embedded:"+filepath.Join(dir, "c.db"),
		"--listen", addr, "--spool-dir", filepath.Join(dir, "spool"))
	waitFor(t, 20*time.Second, "the collector's /metrics", func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `prewarm_build_info{goversion="go1.`)
	})
}

// The demo refuses a flag of its other way of running by name, and
// values out of range, naming the flag.
func TestDemoFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--store", "x.db"}, "--store goes with --replay"},
		{[]string{"demo", "--verbose"}, "--verbose goes with --replay"},
		{[]string{"demo", "--replay", "--listen", "127.0.0.1:0"}, "--listen does not go with --replay"},
		{[]string{"demo", "--replay", "--speed", "10"}, "--speed does not go with --replay"},
		{[]string{"demo", "--speed", "0.5"}, "--speed 0.5: want simulated seconds per real second in [1, 100000]"},
		{[]string{"demo", "--duration", "-1s"}, "--duration -1s must not be negative"},
		{[]string{"demo", "--shift", "--trace", "x.csv"}, "--shift changes the synthetic demand: it does not go with --trace"},
		{[]string{"demo", "--history-days", "3"}, "--history-days 3: want 15 to 365"},
		{[]string{"demo", "--replay", "--live-hours", "0"}, "--live-hours 0: want 1 to 8760"},
		{[]string{"demo", "--replay", "--boot", "25h"}, "--boot 25h0m0s: want 0 to 24h"},
		{[]string{"demo", "extra"}, `unexpected argument "extra"`},
		{[]string{"serve", "--demo"}, "unknown flag: --demo"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		if code := run(t.Context(), tt.args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}
