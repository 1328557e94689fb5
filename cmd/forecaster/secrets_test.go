package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/internal/secrettest"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/remote"
)

// The secrets of the forecaster's test, each a known value with the
// characters that escaping and base64 change.
var forecasterSecrets = map[string]string{
	"INFLUX_TOKEN":          "prewarm:1nflux/p@ss+word=",
	"VOLCENGINE_ACCESS_KEY": "AKLTs3cr3t+acc3ss-key0=",
	"VOLCENGINE_SECRET_KEY": "vOlc+s3cret/k3y==",
	"PREWARM_RELEASE_TOKEN": "rel3ase/b3arer+token==",
	"PREWARM_API_TOKEN":     "ap1/t0ken+for=modes",
	// The Prometheus store's bearer token (serve --store prometheus:URL).
	"PREWARM_PROMETHEUS_TOKEN": "pr0m/bearer+t0ken=x",
}

// kubeToken is the kube API token, read from a token file.
const kubeToken = "kube+t0ken/fr0m=file"

// echoInflux stands in for InfluxDB: it answers pings, and refuses every
// query and write with a JSON error quoting the request (its
// Authorization: Token header included).
func echoInflux(t *testing.T, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/ping", "/health":
			w.WriteHeader(http.StatusNoContent)
			return
		}
		quoted, _ := json.Marshal(secrettest.Echo(r, nil))
		w.Header().Set("Content-Type", "application/json")
		status, code := http.StatusInternalServerError, "internal error"
		if strings.HasPrefix(r.URL.Path, "/api/v2/write") {
			status, code = http.StatusUnauthorized, "unauthorized"
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code":%q,"message":%s}`, code, quoted)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// echoPrometheus stands in for Prometheus: it refuses every query with an
// error quoting the request (its Authorization: Bearer header included),
// as the API's JSON error, or, with page set, as a proxy's plain page.
func echoPrometheus(t *testing.T, page bool, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		echo := secrettest.Echo(r, nil)
		if page {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, gatewayPage(echo))
			return
		}
		quoted, _ := json.Marshal(echo)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"status":"error","errorType":"bad_data","error":%s}`, quoted)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// gatewayPage is a proxy's plain error page quoting a request, padded so
// that the bearer token starts 10 bytes before the 200th: a client that
// shortens the page to 200 bytes before redacting it leaves a piece of the
// token, which the redactor cannot recognise.
func gatewayPage(echo string) string {
	head := "403 Forbidden by the gateway"
	if i := strings.Index(echo, "Bearer "); i >= 0 {
		head += strings.Repeat(".", max(0, 190-len(head)-1-i-len("Bearer ")))
	}
	return head + "\n" + echo
}

// echoKube stands in for the kube API server of one Deployment: its first
// two reads are refused with a proxy's plain page (403), every patch with a
// Status (422), each quoting the request (its Authorization: Bearer header
// included); the other reads answer 1 replica.
func echoKube(t *testing.T, hits *atomic.Int64) *httptest.Server {
	var reads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && reads.Add(1) > 2 {
			io.WriteString(w, `{"kind":"Scale","apiVersion":"autoscaling/v1","spec":{"replicas":1},"status":{"replicas":1}}`)
			return
		}
		if r.Method != http.MethodPatch {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, gatewayPage(secrettest.Echo(r, nil)))
			return
		}
		quoted, _ := json.Marshal(secrettest.Echo(r, nil))
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","message":%s,"code":422}`, quoted)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// echoVolcengine is the Volcengine fake with the test's keys, a scaling
// group asg-gpu (member i-member) and an echo of the request in every
// error: its first three DescribeScalingGroups and every change
// (ModifyScalingGroup, CreateScalingPolicy, StopInstances) are refused.
func echoVolcengine(t *testing.T) *volcenginetest.Server {
	vg := volcenginetest.New()
	t.Cleanup(vg.Close)
	vg.AccessKey = forecasterSecrets["VOLCENGINE_ACCESS_KEY"]
	vg.SecretKey = forecasterSecrets["VOLCENGINE_SECRET_KEY"]
	vg.AddGroup(volcenginetest.Group{ID: "asg-gpu", Min: 0, Max: 10, Desired: 1, InstanceIDs: []string{"i-member"}})
	refuse := volcenginetest.Reply{Status: 400, Code: "InvalidParameter", Message: "the request was refused", Echo: true}
	vg.Fail("DescribeScalingGroups", volcenginetest.FailAll(3, refuse)...)
	for _, action := range []string{"ModifyScalingGroup", "CreateScalingPolicy", "StopInstances"} {
		vg.Fail(action, volcenginetest.FailAll(1000, refuse)...)
	}
	return vg
}

// demandStore is a collector's query API over a store into which a
// goroutine writes 50 req/s for the pools every 200 ms, so that a serve
// reading it always has a live sample.
func demandStore(t *testing.T, pools ...string) string {
	db, err := embedded.Open(filepath.Join(t.TempDir(), "demand.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(remote.NewHandler(db, remote.HandlerOptions{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var pts []store.Point
			for _, p := range pools {
				pts = append(pts, store.Point{Measurement: store.ServiceRequestRate, Tags: map[string]string{store.TagPool: p}, Value: 50, Time: time.Now()})
			}
			db.Write(ctx, pts)
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
		db.Close()
	})
	return srv.URL
}

// splitProcess is a started binary with its stdout and stderr in two
// files.
type splitProcess struct {
	cmd            *exec.Cmd
	stdout, stderr string
}

func startSplit(t *testing.T, bin string, env []string, args ...string) *splitProcess {
	t.Helper()
	dir := t.TempDir()
	p := &splitProcess{cmd: exec.Command(bin, args...), stdout: filepath.Join(dir, "stdout"), stderr: filepath.Join(dir, "stderr")}
	out, err := os.Create(p.stdout)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errf, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	p.cmd.Stdout, p.cmd.Stderr = out, errf
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

func (p *splitProcess) out() (stdout, stderr string) {
	o, _ := os.ReadFile(p.stdout)
	e, _ := os.ReadFile(p.stderr)
	return string(o), string(e)
}

// runToEnd runs a binary to its exit, bounded by limit.
func runToEnd(t *testing.T, limit time.Duration, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		t.Errorf("%v did not end within %v: %v", args, limit, err)
	}
	return o.String(), e.String(), code
}

// httpAnswer sends a request and returns "METHOD PATH: STATUS BODY".
func httpAnswer(t *testing.T, method, url, token, body string) string {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Sprintf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%s %s: %d %s", method, url, resp.StatusCode, b)
}

// The secrets test for the forecaster: with every secret set to a
// known value (INFLUX_TOKEN, both Volcengine keys, the release and API
// tokens, a kube token file) and upstreams that echo each request in
// their errors (InfluxDB, the Volcengine OpenAPI, the kube API server),
// zero occurrences of any secret, in any spelling, in the stdout, stderr
// and audit log of real forecaster processes (serve, serve --once,
// release, import) and in the answers of serve's API (/api/v1/pools, a
// pool's status, the release hook, the mode API, /healthz, /metrics).
func TestNoSecretInAnyOutput(t *testing.T) {
	forecaster, _ := binaries(t)
	dir := t.TempDir()
	var env []string
	for k, v := range forecasterSecrets {
		env = append(env, k+"="+v)
	}
	env = append(env, "VOLCENGINE_REGION="+volcenginetest.DefaultRegion, "VOLCENGINE_ENDPOINT=")
	all := []string{kubeToken, "1nflux/p@ss+word="} // the token file's, and InfluxDB 1.8's password alone
	for _, v := range forecasterSecrets {
		all = append(all, v)
	}
	tokenFile := filepath.Join(dir, "kube-token")
	if err := os.WriteFile(tokenFile, []byte(kubeToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var influxHits, kubeHits, promHits atomic.Int64
	influxURL := echoInflux(t, &influxHits).URL
	promJSON, promPage := echoPrometheus(t, false, &promHits).URL, echoPrometheus(t, true, &promHits).URL
	kubeURL := echoKube(t, &kubeHits).URL
	vg := echoVolcengine(t)
	outputs := map[string]string{}
	record := func(name, text string) { outputs[name] += text }

	// serve: a volcengine and a kubescale pool in mode active, floors of 3
	// so that each decision is a change, demand read from a collector's
	// query API.
	auditLog := filepath.Join(dir, "audit.jsonl")
	cfgA := filepath.Join(dir, "fleet.yaml")
	os.WriteFile(cfgA, []byte(fmt.Sprintf(`interval: 1s
audit_log: %s
pools:
  - name: asg-gpu
    backend: volcengine
    mode: active
    max: 10
    rps_per_instance: 10
    windows: daily 00:00-24:00 at least 3
    options: {endpoint: %q, timeout: 2s}
  - name: sd
    backend: kubescale
    mode: active
    min: 1
    max: 10
    rps_per_instance: 10
    windows: daily 00:00-24:00 at least 3
    options: {api_server: %q, namespace: inference, workload: sd, token_file: %q}
`, auditLog, vg.URL, kubeURL, tokenFile)), 0o600)
	addrA := freeAddr(t)
	demand := demandStore(t, "asg-gpu", "sd")
	serveA := startSplit(t, forecaster, env, "serve", "--config", cfgA, "--store", demand,
		"--listen", addrA, "--state", filepath.Join(dir, "state-a.db"))
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(auditLog)
		if strings.Count(string(b), `"pool":"asg-gpu"`) >= 2 && strings.Count(string(b), `"pool":"sd"`) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			o, e := serveA.out()
			t.Fatalf("waited 40s for failed changes of both pools in the audit log:\n%s\nstdout: %s\nstderr: %s", b, o, e)
		}
	}
	base := "http://" + addrA
	release, mode := forecasterSecrets["PREWARM_RELEASE_TOKEN"], forecasterSecrets["PREWARM_API_TOKEN"]
	answers := []string{
		httpAnswer(t, "GET", base+"/api/v1/pools", "", ""),
		httpAnswer(t, "GET", base+"/api/v1/pools/asg-gpu", "", ""),
		httpAnswer(t, "GET", base+"/api/v1/pools/sd", "", ""),
		httpAnswer(t, "GET", base+"/healthz", "", ""),
		httpAnswer(t, "GET", base+"/metrics", "", ""),
		httpAnswer(t, "POST", base+"/api/v1/release", release, `{"instance_id":"i-member","reason":"job 42 finished"}`),
		httpAnswer(t, "POST", base+"/api/v1/release", "wrong-"+release, `{"instance_id":"i-member"}`),
		httpAnswer(t, "POST", base+"/api/v1/pools/sd/mode", mode, `{"mode":"paused"}`),
		httpAnswer(t, "POST", base+"/api/v1/pools/sd/mode", "wrong-"+mode, `{"mode":"active"}`),
	}
	if !strings.Contains(answers[5], ": 502 ") || !strings.Contains(answers[7], ": 200 ") {
		t.Errorf("want the release to fail with the echoing API (502) and the mode change to pass:\n%s\n%s", answers[5], answers[7])
	}
	record("serve: API answers", strings.Join(answers, "\n"))
	serveA.cmd.Process.Signal(syscall.SIGTERM)
	serveA.cmd.Wait()
	o, e := serveA.out()
	record("serve: stdout", o)
	record("serve: stderr", e)
	audit, _ := os.ReadFile(auditLog)
	record("serve: audit log", string(audit))

	// serve reading InfluxDB: /api/v1/pools shows the store's error.
	cfgB := filepath.Join(dir, "dryrun.yaml")
	os.WriteFile(cfgB, []byte("interval: 1s\npools:\n  - {name: p, backend: dryrun, max: 10, rps_per_instance: 10}\n"), 0o600)
	addrB := freeAddr(t)
	serveB := startSplit(t, forecaster, env, "serve", "--config", cfgB, "--influx-url", influxURL, "--listen", addrB,
		"--state", filepath.Join(dir, "state-b.db"))
	waitFor(t, 20*time.Second, "the store's error in the pool's status", func() bool {
		st, ok := poolStatus(addrB)
		return ok && st.Error != ""
	})
	record("serve --influx-url: API answers", httpAnswer(t, "GET", "http://"+addrB+"/api/v1/pools", "", ""))
	serveB.cmd.Process.Signal(syscall.SIGTERM)
	serveB.cmd.Wait()
	o, e = serveB.out()
	record("serve --influx-url: stdout", o)
	record("serve --influx-url: stderr", e)

	// The CLI errors: serve --once, release (environment and credentials
	// file, with and without the pools' allow-check), import.
	csvFile := filepath.Join(dir, "demand.csv")
	os.WriteFile(csvFile, []byte("time,rps\n2026-01-05T00:00:00Z,1\n2026-01-05T01:00:00Z,2\n2026-01-05T02:00:00Z,3\n"), 0o600)
	credentials := filepath.Join(dir, "credentials")
	os.WriteFile(credentials, []byte("access_key="+forecasterSecrets["VOLCENGINE_ACCESS_KEY"]+"\nsecret_key="+
		forecasterSecrets["VOLCENGINE_SECRET_KEY"]+"\nregion=cn-beijing\n"), 0o600)
	noKeysEnv := append(append([]string(nil), env...), "VOLCENGINE_ACCESS_KEY=", "VOLCENGINE_SECRET_KEY=")
	for _, c := range []struct {
		name  string
		env   []string
		setup func()
		args  []string
	}{
		// A refused store at start is a configuration error (exit 2), the
		// others a failure (exit 1).
		{"serve --once --apply (fleet)", env, nil, []string{"serve", "--once", "--apply", "--config", cfgA, "--store", demand, "--state", filepath.Join(dir, "state-d.db")}},
		{"serve --once --store prometheus (API error)", env, nil, []string{"serve", "--once", "--config", cfgB, "--store", "prometheus:" + promJSON, "--state", filepath.Join(dir, "state-p1.db")}},
		{"serve --once --store prometheus (gateway page)", env, nil, []string{"serve", "--once", "--config", cfgB, "--store", "prometheus:" + promPage, "--state", filepath.Join(dir, "state-p2.db")}},
		{"serve --once --influx-url", env, nil, []string{"serve", "--once", "--config", cfgB, "--influx-url", influxURL, "--state", filepath.Join(dir, "state-c.db")}},
		{"release", env, nil, []string{"release", "--instance", "i-member", "--volcengine-endpoint", vg.URL}},
		{"release --credentials", noKeysEnv, nil, []string{"release", "--instance", "i-member", "--volcengine-endpoint", vg.URL, "--credentials", credentials}},
		{"release --config (allow-check fails)", env, func() {
			vg.Fail("DescribeScalingInstances", volcenginetest.Reply{Status: 400, Code: "InvalidParameter", Message: "refused", Echo: true})
		}, []string{"release", "--instance", "i-member", "--config", cfgA}},
		{"import --influx-url", env, nil, []string{"import", "--input", csvFile, "--pool", "p", "--influx-url", influxURL}},
	} {
		if c.setup != nil {
			c.setup()
		}
		o, e, code := runToEnd(t, 60*time.Second, forecaster, c.env, c.args...)
		if code != 1 && !(code == 2 && strings.Contains(c.name, "prometheus")) {
			t.Errorf("%s: exit %d, want 1 (the upstream refused)\nstdout: %s\nstderr: %s", c.name, code, o, e)
		}
		record(c.name+": stdout", o)
		record(c.name+": stderr", e)
	}

	if !strings.Contains(outputs["serve: stderr"], "[REDACTED]") {
		t.Errorf("nothing redacted in serve's log: did the echo reach it?\n%s", outputs["serve: stderr"])
	}
	if d := os.Getenv("PREWARM_SECRETS_DUMP"); d != "" {
		// A folder to read the outputs in after the test.
		for name, text := range outputs {
			os.WriteFile(filepath.Join(d, strings.NewReplacer(" ", "_", "/", "_", ":", "").Replace(name)), []byte(text), 0o600)
		}
	}
	found := secrettest.Find(outputs, all)
	for _, f := range found {
		t.Error(f)
	}
	per := secrettest.PerOutput(found)
	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	sort.Strings(names)
	var summary strings.Builder
	for _, name := range names {
		fmt.Fprintf(&summary, "\n  %-45s %6d bytes  %4d secret occurrences", name, len(outputs[name]), per[name])
	}
	t.Logf("upstream requests: InfluxDB %d, Prometheus %d, kube %d, Volcengine %d; secret occurrences in all outputs: %d%s",
		influxHits.Load(), promHits.Load(), kubeHits.Load(), len(vg.Calls("")), secrettest.Total(found), summary.String())
}
