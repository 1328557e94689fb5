package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/remote"
)

func TestServeOnce(t *testing.T) {
	t.Setenv("PREWARM_RELEASE_TOKEN", "") // the token file is read only when the variable is unset
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "prewarm.db")
	db, err := embedded.Open(dbPath, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Minute)
	var pts []store.Point
	for ts := now.Add(-3 * 24 * time.Hour); ts.Before(now); ts = ts.Add(5 * time.Minute) {
		pts = append(pts, store.Point{Measurement: "requests_rps", Tags: map[string]string{"pool": "p"}, Value: 42, Time: ts})
	}
	// The live sample the collector wrote just now: without one in the
	// last interval the service holds capacity and reports the silence.
	pts = append(pts, store.Point{Measurement: "requests_rps", Tags: map[string]string{"pool": "p"}, Value: 42, Time: time.Now()})
	if err := db.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// A collector holding its own embedded file, serving it read-only.
	collectorDB, err := embedded.Open(filepath.Join(dir, "collector.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer collectorDB.Close()
	if err := collectorDB.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
	var apiQueries atomic.Int64
	mux := http.NewServeMux()
	mux.Handle(remote.Path, remote.NewHandler(collectorDB, remote.HandlerOptions{}))
	collectorAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiQueries.Add(1)
		mux.ServeHTTP(w, r)
	}))
	defer collectorAPI.Close()
	cfg := filepath.Join(dir, "forecaster.yaml")
	os.WriteFile(cfg, []byte(`pools:
  - name: p
    backend: dryrun
    max: 20
    demand: {measurement: requests_rps, match: {pool: p}}
    rps_per_instance: 10
`), 0o600)

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"once", []string{"serve", "--config", cfg, "--store", "embedded:" + dbPath, "--once"}, 0, ""},
		{"once through a collector's query API", []string{"serve", "--config", cfg, "--store", collectorAPI.URL, "--once"}, 0, ""},
		{"no config", []string{"serve"}, 2, "--config is required"},
		{"stray argument", []string{"serve", cfg}, 2, "unexpected argument"},
		{"store URL without host", []string{"serve", "--config", cfg, "--store", "http://", "--once"}, 2, "no host"},
		{"bad store", []string{"serve", "--config", cfg, "--store", "sqlite:x", "--once"}, 2, "want embedded:PATH"},
		{"missing config file", []string{"serve", "--config", filepath.Join(dir, "nope.yaml"), "--once"}, 1, "reading config"},
		{"unreadable release token file", []string{"serve", "--config", cfg, "--store", "embedded:" + dbPath, "--once",
			"--release-token-file", filepath.Join(dir, "no-token")}, 1, "--release-token-file: reading token file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.wantErr)
			}
			if tt.wantCode != 0 {
				return
			}
			if strings.Contains(tt.name, "query API") && apiQueries.Load() == 0 {
				t.Error("the collector's query API was never asked")
			}
			var pools []struct {
				Name    string
				Desired int
				Reason  string
			}
			if err := json.Unmarshal(stdout.Bytes(), &pools); err != nil || len(pools) != 1 {
				t.Fatalf("stdout is not the pools' JSON: %v\n%s", err, stdout.String())
			}
			// 42 req/s at 10 per instance: at least 5 instances.
			if pools[0].Desired < 5 || pools[0].Reason == "" {
				t.Errorf("pool = %+v, want ≥ 5 instances with a reason", pools[0])
			}
		})
	}
}

// SIGTERM (ctx cancelled) stops the HTTP server, the KEDA gRPC server and
// the loop, and serve exits 0; a KEDA address that cannot be listened on is
// an error, not a service running without its scaler.
func TestServeShutsDownGracefully(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "forecaster.yaml")
	if err := os.WriteFile(cfg, []byte(`interval: 1h
pools:
  - {name: k, backend: keda, max: 20, rps_per_instance: 10}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name       string
		kedaListen string
		wantCode   int
		wantErr    string
	}{
		{"SIGTERM exits 0", "127.0.0.1:0", 0, ""},
		{"KEDA address in use", busy.Addr().String(), 1, "KEDA external scaler (--keda-listen " + busy.Addr().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, []string{"serve", "--config", cfg, "--store", "embedded:" + filepath.Join(t.TempDir(), "db"),
					"--state", filepath.Join(t.TempDir(), "state.db"), "--listen", "127.0.0.1:0", "--keda-listen", tt.kedaListen}, &stdout, &stderr)
			}()
			if tt.wantCode == 0 {
				time.Sleep(300 * time.Millisecond) // let it start serving
				cancel()
			}
			select {
			case code := <-done:
				if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
					t.Errorf("exit %d, want %d with %q; stderr:\n%s", code, tt.wantCode, tt.wantErr, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("serve did not stop")
			}
		})
	}
}

// ---- real processes ----
//
// The tests below build the forecaster and the collector (cmd/collector,
// unchanged) and run them as processes on loopback: a fake application
// the collector scrapes into its embedded store, the forecaster reading
// that store through the collector's query API, and a loopback stand-in of
// the Kubernetes scale subresource that kubescale drives.

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds forecaster and collector once per test run.
func binaries(t *testing.T) (forecaster, collector string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries; skipped with -short")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "prewarm-bin-")
		for _, name := range []string{"forecaster", "collector"} {
			if buildErr != nil {
				break
			}
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, name), "github.com/prewarm/prewarm/cmd/"+name).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "forecaster"), filepath.Join(binDir, "collector")
}

// scaleAPI is a loopback stand-in of one Deployment's scale subresource
// (GET and merge-PATCH of /apis/apps/v1/namespaces/NS/deployments/NAME/scale).
type scaleAPI struct {
	mu       sync.Mutex
	replicas int
	patches  []int // the replicas asked for, in order
	srv      *httptest.Server
}

const scaleToken = "kube-token-for-the-loopback-api"

func newScaleAPI(t *testing.T, replicas int) *scaleAPI {
	a := &scaleAPI{replicas: replicas}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/apps/v1/namespaces/inference/deployments/sd/scale" || r.Header.Get("Authorization") != "Bearer "+scaleToken {
			http.Error(w, `{"kind":"Status","reason":"NotFound","message":"not found"}`, http.StatusNotFound)
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if r.Method == http.MethodPatch {
			var patch struct{ Spec struct{ Replicas int } }
			if err := json.NewDecoder(r.Body).Decode(&patch); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			a.replicas = patch.Spec.Replicas
			a.patches = append(a.patches, a.replicas)
		}
		fmt.Fprintf(w, `{"kind":"Scale","apiVersion":"autoscaling/v1","spec":{"replicas":%d},"status":{"replicas":%d}}`, a.replicas, a.replicas)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *scaleAPI) changes() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.patches)
}

// fakeApp serves a Prometheus page whose request counter grows at 50/s.
func fakeApp(t *testing.T) string {
	began := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE http_requests_total counter\nhttp_requests_total %d\n# TYPE queue_length gauge\nqueue_length 0\n",
			int(50*time.Since(began).Seconds()))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// freeAddr returns a loopback address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

// process is a started binary whose output goes to a file.
type process struct {
	cmd *exec.Cmd
	log string
}

// output returns what the process wrote so far.
func (p *process) output() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

func start(t *testing.T, bin string, env []string, args ...string) *process {
	t.Helper()
	log, err := os.CreateTemp(t.TempDir(), "output-")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	p := &process{cmd: exec.Command(bin, args...), log: log.Name()}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.Env = append(os.Environ(), env...)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

// waitFor polls cond every 50 ms for up to limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// poolStatus reads /api/v1/pools of a running forecaster.
func poolStatus(addr string) (service.PoolStatus, bool) {
	resp, err := http.Get("http://" + addr + "/api/v1/pools")
	if err != nil {
		return service.PoolStatus{}, false
	}
	defer resp.Body.Close()
	var body struct{ Pools []service.PoolStatus }
	if json.NewDecoder(resp.Body).Decode(&body) != nil || len(body.Pools) == 0 {
		return service.PoolStatus{}, false
	}
	return body.Pools[0], true
}

// fleetRig is the loopback setup of the restart demonstration: a pool at 1
// replica, min 1, max 40, max_step 4, min_interval 10m, a floor of 30.
type fleetRig struct {
	forecaster, config, collectorAddr string
	api                               *scaleAPI
	dir                               string
}

func newFleetRig(t *testing.T, mode string) *fleetRig {
	forecaster, collector := binaries(t)
	dir := t.TempDir()
	r := &fleetRig{forecaster: forecaster, dir: dir, api: newScaleAPI(t, 1), collectorAddr: freeAddr(t)}
	start(t, collector, nil, "--scrape", "sd="+fakeApp(t), "--interval", "1s", "--store", "embedded:"+filepath.Join(dir, "collector.db"),
		"--listen", r.collectorAddr, "--spool-dir", filepath.Join(dir, "spool"))
	os.WriteFile(filepath.Join(dir, "token"), []byte(scaleToken+"\n"), 0o600)
	r.config = filepath.Join(dir, "forecaster.yaml")
	os.WriteFile(r.config, []byte(fmt.Sprintf(`interval: 5s
audit_log: %s
pools:
  - name: sd
    backend: kubescale
    mode: %s
    min: 1
    max: 40
    max_step: 4
    min_interval: 10m
    rps_per_instance: 10
    windows: daily 00:00-24:00 at least 30
    options: {api_server: %q, namespace: inference, workload: sd, token_file: %q}
`, filepath.Join(dir, "audit.jsonl"), mode, r.api.srv.URL, filepath.Join(dir, "token"))), 0o600)
	// The collector has a rate once it scraped twice.
	waitFor(t, 20*time.Second, "the collector's first request rate", func() bool {
		resp, err := http.Get("http://" + r.collectorAddr + "/api/v1/query?measurement=service_request_rate&start=" +
			time.Now().Add(-time.Minute).UTC().Format(time.RFC3339) + "&end=" + time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && strings.Contains(string(b), `"pool":"sd"`)
	})
	return r
}

// serve starts the forecaster on the rig and waits for its first decision.
func (r *fleetRig) serve(t *testing.T) (*process, string) {
	addr := freeAddr(t)
	p := start(t, r.forecaster, nil, "serve", "--config", r.config, "--store", "http://"+r.collectorAddr, "--listen", addr)
	waitFor(t, 20*time.Second, "the forecaster's first decision", func() bool {
		st, ok := poolStatus(addr)
		return ok && !st.At.IsZero()
	})
	return p, addr
}

// The restart demonstration: four kill -9 and restart cycles within a
// minute send exactly one change to the scale API (1 → 5); before the
// state file they sent one per start (1 → 5 → 9 → 13 → 17).
func TestKillRestartSendsOneChange(t *testing.T) {
	r := newFleetRig(t, "active")
	began := time.Now()
	for cycle := range 5 { // the first start and four restarts
		p, addr := r.serve(t)
		st, _ := poolStatus(addr)
		t.Logf("start %d: current %d, wished %d, desired %d, outcome %s, changes so far %v", cycle, st.Current, st.Wished, st.Desired, st.Outcome, r.api.changes())
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.cmd.Wait()
		if cycle > 0 && st.Outcome != service.OutcomeRateLimited {
			t.Errorf("restart %d: outcome %s (%s), want rate_limited by the change before the kill", cycle, st.Outcome, st.Reason)
		}
	}
	took := time.Since(began)
	if got := r.api.changes(); len(got) != 1 || got[0] != 5 {
		t.Errorf("changes sent to the scale API: %v, want exactly one, to 5", got)
	}
	if took > time.Minute {
		t.Errorf("the cycles took %v, want them within a minute", took)
	}
	t.Logf("5 starts, 4 of them after kill -9, in %v: changes %v", took.Round(time.Millisecond), r.api.changes())
}

// forecast-only reads the real fleet and shows the 30 it would set, and
// sends no change.
func TestForecastOnlySendsNoChange(t *testing.T) {
	r := newFleetRig(t, "forecast-only")
	p, addr := r.serve(t)
	st, _ := poolStatus(addr)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	if got := r.api.changes(); len(got) != 0 {
		t.Errorf("changes sent: %v, want none", got)
	}
	if st.Mode != "forecast-only" || st.Current != 1 || st.Wished != 30 || st.Desired != 5 || st.Outcome != service.OutcomeNotApplied {
		t.Errorf("status = %+v, want forecast-only at 1 showing 30 wished (5 the first step) and nothing applied", st)
	}
	t.Logf("/api/v1/pools: mode %s, current %d, wished %d, desired %d, outcome %s, reason %q", st.Mode, st.Current, st.Wished, st.Desired, st.Outcome, st.Reason)
}

// A 1ns forecast step is refused at start, naming the field, without a
// panic; --check-config says the same and exits 2, and 0 for a good file.
func TestBadConfigIsRefusedAtStart(t *testing.T) {
	forecaster, _ := binaries(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("pools:\n  - name: sd\n    backend: dryrun\n    max: 4\n    rps_per_instance: 1\n    forecast:\n      step: 1ns\n"), 0o600)
	for _, args := range [][]string{
		{"serve", "--config", bad, "--store", "embedded:" + filepath.Join(dir, "db"), "--state", filepath.Join(dir, "state.db")},
		{"serve", "--config", bad, "--check-config"},
	} {
		out, err := exec.Command(forecaster, args...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "bad.yaml:7: pools[0].forecast.step: 1ns is too short: at least 1m") ||
			strings.Contains(string(out), "panic") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command(forecaster, "serve", "--config", filepath.Join("..", "..", "docs", "forecaster.yaml"), "--check-config").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "valid") {
		t.Errorf("docs/forecaster.yaml --check-config: %v\n%s", err, out)
	}
}

// SIGHUP reloads the configuration; a bad one is refused with its problems
// and the running one stays. SIGTERM stops cleanly, without a failure line.
func TestSignals(t *testing.T) {
	r := newFleetRig(t, "forecast-only")
	p, addr := r.serve(t)
	good, _ := os.ReadFile(r.config)
	os.WriteFile(r.config, []byte(strings.Replace(string(good), "min_interval: 10m", "min_interval: soon", 1)), 0o600)
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 10*time.Second, "the refusal", func() bool { return strings.Contains(p.output(), "configuration not reloaded") })
	if _, ok := poolStatus(addr); !ok || !strings.Contains(p.output(), "pools[0].min_interval") {
		t.Errorf("after a bad SIGHUP: serving %v; log:\n%s", ok, p.output())
	}
	os.WriteFile(r.config, []byte(strings.Replace(string(good), "max: 40", "max: 20", 1)), 0o600)
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 10*time.Second, "the reload", func() bool { return strings.Contains(p.output(), "configuration reloaded on SIGHUP") })
	waitFor(t, 15*time.Second, "a decision with the new max", func() bool {
		st, ok := poolStatus(addr)
		return ok && st.Wished == 20
	})
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, p.output())
	}
	if strings.Contains(p.output(), "pool decision failed") {
		t.Errorf("failure lines on a clean stop:\n%s", p.output())
	}
}

// serve --once previews: it applies nothing unless the pool is active and
// --apply is given; it reads the real fleet either way.
func TestServeOnceAppliesOnlyActivePoolsWithApply(t *testing.T) {
	t.Setenv("PREWARM_RELEASE_TOKEN", "")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "token"), []byte(scaleToken), 0o600)
	dbPath := filepath.Join(dir, "prewarm.db")
	db, err := embedded.Open(dbPath, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Write(context.Background(), []store.Point{{Measurement: "service_request_rate", Tags: map[string]string{"pool": "sd"}, Value: 5, Time: time.Now()}})
	db.Close()
	for _, tt := range []struct {
		mode  string
		apply bool
		want  []int
	}{
		{"forecast-only", true, nil},
		{"active", false, nil},
		{"active", true, []int{5}},
	} {
		t.Run(fmt.Sprintf("%s apply=%v", tt.mode, tt.apply), func(t *testing.T) {
			api := newScaleAPI(t, 1)
			cfg := filepath.Join(t.TempDir(), "forecaster.yaml")
			os.WriteFile(cfg, []byte(fmt.Sprintf(`pools:
  - {name: sd, backend: kubescale, mode: %s, min: 1, max: 40, max_step: 4, rps_per_instance: 10,
     windows: "daily 00:00-24:00 at least 30",
     options: {api_server: %q, namespace: inference, workload: sd, token_file: %q}}
`, tt.mode, api.srv.URL, filepath.Join(dir, "token"))), 0o600)
			args := []string{"serve", "--config", cfg, "--store", "embedded:" + dbPath, "--state", filepath.Join(t.TempDir(), "state.db"), "--once"}
			if tt.apply {
				args = append(args, "--apply")
			}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if got := api.changes(); !slices.Equal(got, tt.want) {
				t.Errorf("changes %v, want %v", got, tt.want)
			}
			var pools []service.PoolStatus
			if err := json.Unmarshal(stdout.Bytes(), &pools); err != nil || len(pools) != 1 || pools[0].Wished != 30 || pools[0].Current != 1 {
				t.Errorf("stdout %s (%v), want the pool at 1 wishing 30", stdout.String(), err)
			}
		})
	}
	if code := run(context.Background(), []string{"serve", "--config", "x.yaml", "--apply"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("--apply without --once: exit %d, want 2", code)
	}
}
