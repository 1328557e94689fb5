package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/collector/promscrape"
)

// dcgmPage renders a dcgm-exporter page for n GPUs on host; values vary
// with seq so every scrape differs.
func dcgmPage(host string, n, seq int) string {
	var b strings.Builder
	fields := []struct{ name, help string }{
		{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."},
		{"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."},
		{"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."},
		{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."},
		{"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."},
		{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active."},
		{"DCGM_FI_PROF_SM_ACTIVE", "The ratio of cycles an SM has at least 1 warp assigned."},
	}
	for fi, f := range fields {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", f.name, f.help, f.name)
		for g := range n {
			v := float64((seq*7+g*13+fi)%100) / 1
			if strings.HasPrefix(f.name, "DCGM_FI_PROF") {
				v /= 100
			}
			fmt.Fprintf(&b, "%s{gpu=\"%d\",UUID=\"GPU-%08d-e2e\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"%s\",DCGM_FI_DRIVER_VERSION=\"550.54.15\"} %g\n",
				f.name, g, g, g, host, v)
		}
	}
	return b.String()
}

const fieldsPerGPU = 7

// fakeExporter serves dcgmPage and counts the pages it served.
type fakeExporter struct {
	mu     sync.Mutex
	host   string
	gpus   int
	served int
	closed bool // answer 503 (no more data) once set
	// seqTemp makes every GPU's temperature the number of the scrape.
	seqTemp bool
	srv     *httptest.Server
}

var gpuTempLine = regexp.MustCompile(`(DCGM_FI_DEV_GPU_TEMP\{[^}]*\}) \S+`)

func newFakeExporter(t *testing.T, host string, gpus int) *fakeExporter {
	e := &fakeExporter{host: host, gpus: gpus}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.closed {
			http.Error(w, "stopped", http.StatusServiceUnavailable)
			return
		}
		e.served++
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		page := dcgmPage(e.host, e.gpus, e.served)
		if e.seqTemp {
			page = gpuTempLine.ReplaceAllString(page, "${1} "+strconv.Itoa(e.served))
		}
		fmt.Fprint(w, page)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *fakeExporter) stop() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return e.served
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// metricValue reads one sample (summed over label sets matching labels)
// from a /metrics page.
func metricValue(t *testing.T, addr, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := promscrape.FetchLimit(context.Background(), nil, "http://"+addr+"/metrics", 0)
	if err != nil {
		return 0, false
	}
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range fam.GetMetric() {
		if promscrape.Matches(m, labels) {
			v, _ := promscrape.Value(m)
			sum += v
			found = true
		}
	}
	return sum, found
}

type runResult struct {
	stdout, stderr *syncBuffer
	done           chan error
	cancel         context.CancelFunc
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func startRun(args ...string) *runResult {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runResult{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1), cancel: cancel}
	go func() { r.done <- run(ctx, args, r.stdout, r.stderr) }()
	return r
}

func (r *runResult) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("run: %v\n%s", err, r.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not stop\n%s", r.stderr.String())
	}
}

// waitFor polls cond; on timeout it fails, showing r's log.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool, r *runResult) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; collector log:\n%s", timeout, what, r.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRunOncePrint(t *testing.T) {
	exp := newFakeExporter(t, "gpu-node-9", 2)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--dcgm-url", exp.srv.URL + "/metrics", "--nvml", "--once", "--print", "--listen", ""}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stdout.String(), "\n"); n != 2*fieldsPerGPU {
		t.Errorf("printed %d lines, want %d:\n%s", n, 2*fieldsPerGPU, stdout.String())
	}
	if !strings.Contains(stdout.String(), "gpu_util,gpu=0,host=gpu-node-9,model=NVIDIA\\ H100\\ 80GB\\ HBM3,source=dcgm,uuid=GPU-00000000-e2e value=") {
		t.Errorf("unexpected output:\n%s", stdout.String())
	}
	// No driver on CI machines: NVML says so once and dcgm still works.
	if _, err := os.Stat("/dev/nvidiactl"); err != nil && !strings.Contains(stderr.String(), "NVIDIA driver not found") {
		t.Errorf("no-driver message missing:\n%s", stderr.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag"},
		{[]string{"--dcgm-url", "http://x/metrics", "--store", "influx:foo"}, "want embedded:PATH"},
		{[]string{"--dcgm-url", "http://x/metrics", "--store", "embedded:a.db", "--influx-url", "http://x"}, "choose one store"},
		{[]string{"--scrape", "nourl"}, "want NAME=URL"},
		{[]string{"--dcgm-url", "http://x/metrics", "--interval", "10ms"}, "interval"},
		{[]string{"--dcgm-url", "http://x/metrics", "--influx-url", "http://x", "--influx-bucket", ""}, "bucket"},
		{[]string{}, "no sources"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--dcgm-url", "http://x/metrics", "--scrape-max-bytes", "10"}, "--scrape-max-bytes 10: want 1024"},
		{[]string{"--dcgm-url", "http://x/metrics", "--unready-after-intervals", "0"}, "--unready-after-intervals 0"},
		{[]string{"--dcgm-url", "http://x/metrics", "--buffer-points", "-1"}, "--buffer-points -1"},
		{[]string{"--config", "no-such-file.yml"}, "no-such-file.yml"},
		{[]string{"--config", "../../collector/config/testdata/tags.bad.yml"}, `tags._x: tag key "_x" starts with '_'`},
		{[]string{"--config", "../../collector/config/testdata/webhook.bad.yml"}, `format "slack"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			dir := t.TempDir()
			err := run(context.Background(), append(tc.args, "--once", "--listen", "", "--spool-dir", filepath.Join(dir, "s")), &bytes.Buffer{}, &stderr)
			var uerr *usageError
			if err == nil || !strings.Contains(err.Error()+stderr.String(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
			if !errors.As(err, &uerr) {
				t.Errorf("err %v is not a usage error (exit 2)", err)
			}
		})
	}
}

func TestRunVersion(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^collector \S+ \(revision \S+, go1\.[^)]+\)\n$`).MatchString(stdout.String()) {
		t.Errorf("--version printed %q", stdout.String())
	}
}

// Flags override the config file; INFLUX_TOKEN is read but never logged.
func TestRunConfigFileAndSecrets(t *testing.T) {
	exp := newFakeExporter(t, "gpu-node-3", 1)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "collector.yml")
	os.WriteFile(cfgFile, []byte(fmt.Sprintf(`
interval: 30s
dcgm:
  - url: %s/metrics
    tags: {pool: from-file}
store:
  embedded: %s
`, exp.srv.URL, filepath.Join(dir, "c.db"))), 0o600)
	t.Setenv("INFLUX_TOKEN", "very-secret-token")
	addr := freeAddr(t)
	r := startRun("--config", cfgFile, "--interval", "1s", "--listen", addr, "--log-level", "debug", "--nvml")
	waitFor(t, "three cycles", 20*time.Second, func() bool {
		v, _ := metricValue(t, addr, "prewarm_collector_cycles_total", nil)
		return v >= 3
	}, r)
	if _, ok := metricValue(t, addr, "prewarm_gpu_util", map[string]string{"pool": "from-file", "host": "gpu-node-3"}); !ok {
		t.Errorf("GPU gauge with the file's pool tag missing from /metrics")
	}
	r.stop(t)
	if strings.Contains(r.stderr.String(), "very-secret-token") {
		t.Error("token in the log")
	}
	// The real NVML without a driver: said once, over three cycles.
	if _, err := os.Stat("/dev/nvidiactl"); err != nil {
		if n := strings.Count(r.stderr.String(), "NVIDIA driver not found"); n != 1 {
			t.Errorf("no-driver message logged %d times, want once:\n%s", n, r.stderr.String())
		}
	}
}

// --once writes to the store the command line or the config file names,
// and nowhere when neither names one.
func TestRunOnceWritesTheNamedStore(t *testing.T) {
	exp := newFakeExporter(t, "gpu-node-4", 1)
	for _, tc := range []struct {
		name      string
		fromFile  bool
		fromFlag  bool
		wantStore bool
	}{
		{"no store named", false, false, false},
		{"the file's store", true, false, true},
		{"the flag's store", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "c.db")
			args := []string{"--dcgm-url", exp.srv.URL + "/metrics", "--once", "--listen", ""}
			if tc.fromFile {
				cfgFile := filepath.Join(dir, "collector.yml")
				os.WriteFile(cfgFile, []byte("store:\n  embedded: "+db+"\n"), 0o600)
				args = append(args, "--config", cfgFile)
			}
			if tc.fromFlag {
				args = append(args, "--store", "embedded:"+db)
			}
			var stderr bytes.Buffer
			t.Chdir(dir) // the default embedded file would land here
			if err := run(context.Background(), args, &bytes.Buffer{}, &stderr); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			_, err := os.Stat(db)
			if got := err == nil; got != tc.wantStore {
				t.Errorf("store file written: %v, want %v\n%s", got, tc.wantStore, stderr.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "prewarm-collector.db")); err == nil {
				t.Errorf("the default store file was written")
			}
		})
	}
}
