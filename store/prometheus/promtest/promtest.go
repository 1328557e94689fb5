// Package promtest runs real Prometheus 2.x servers for tests.
//
// scripts/prometheus.sh installs Prometheus (Debian's `prometheus`
// package) when it is missing and starts one shared server that scrapes
// itself, exporting PREWARM_PROMETHEUS (the binary), PREWARM_PROMTOOL and
// PREWARM_PROMETHEUS_URL. URL returns that shared server; Start launches a
// private one from the same binary, on its own loopback port and data dir,
// scraping the targets a test gives it; Backfill writes known samples into
// a data dir with `promtool tsdb create-blocks-from openmetrics`, for
// checks of exact values.
//
// Without the binaries the helpers skip the test, unless
// PREWARM_REQUIRE_PROMETHEUS=1, in which case they fail it: CI sets that so
// a broken setup cannot pass as skipped.
package promtest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/store"
)

// Environment variables set by scripts/prometheus.sh start.
const (
	EnvBinary   = "PREWARM_PROMETHEUS"
	EnvPromtool = "PREWARM_PROMTOOL"
	EnvURL      = "PREWARM_PROMETHEUS_URL"
	EnvRequire  = "PREWARM_REQUIRE_PROMETHEUS"
)

// skip skips t, or fails it when PREWARM_REQUIRE_PROMETHEUS=1.
func skip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s, and %s=1 requires Prometheus: run the tests through scripts/test.sh (make test)", why, EnvRequire)
	}
	t.Skipf("%s; install it (apt-get install prometheus) or run scripts/prometheus.sh start and export what it prints, or use make test", why)
}

// binary returns the path of a tool from env, else from $PATH.
func binary(t testing.TB, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		skip(t, name+" is not installed ("+env+" unset and none on $PATH)")
	}
	return p
}

// Prometheus returns the prometheus binary, skipping (or failing) t when
// there is none.
func Prometheus(t testing.TB) string { t.Helper(); return binary(t, EnvBinary, "prometheus") }

// Promtool returns the promtool binary, skipping (or failing) t when there
// is none.
func Promtool(t testing.TB) string { t.Helper(); return binary(t, EnvPromtool, "promtool") }

// URL returns the shared server's URL from PREWARM_PROMETHEUS_URL,
// skipping (or failing) the test when it is unset. The server scrapes
// itself (job "prometheus") every second.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		skip(t, EnvURL+" is not set")
	}
	return u
}

// Target is one scrape job of a private server.
type Target struct {
	// Job is the job label.
	Job string
	// Addr is host:port on 127.0.0.1; Path the metrics path (default
	// /metrics).
	Addr, Path string
}

// Server is a private prometheus process, stopped when the test ends.
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:40123.
	URL string
	// Dir holds prometheus.yml, the data dir (Dir/data) and prometheus.log.
	Dir string

	cmd    *exec.Cmd
	exited chan struct{}
}

// DataDir returns a new empty data dir for Backfill and Start.
func DataDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Start starts a server on a free loopback port over the data dir data
// ("" for a new one), scraping targets every scrapeInterval, and waits
// until it is ready. It keeps data for 100 years, so backfilled samples of
// any date stay queryable.
func Start(t testing.TB, data string, scrapeInterval time.Duration, targets ...Target) *Server {
	t.Helper()
	bin := Prometheus(t)
	if data == "" {
		data = DataDir(t)
	}
	var lastErr error
	for range 3 { // a free port can be taken before prometheus binds it
		s, err := start(bin, t.TempDir(), data, scrapeInterval, targets)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("starting prometheus: %v", lastErr)
	return nil
}

func start(bin, dir, data string, interval time.Duration, targets []Target) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), config(interval, targets), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Dir: dir, exited: make(chan struct{})}
	s.cmd = exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+data,
		"--storage.tsdb.retention.time=100y",
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--log.level=warn")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(60 * time.Second) // a busy 2-core CI machine
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("prometheus exited: %s", tail(filepath.Join(dir, "prometheus.log")))
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
	}
	s.Stop()
	return nil, fmt.Errorf("prometheus did not become ready in 60s: %s", tail(filepath.Join(dir, "prometheus.log")))
}

// Stop ends the server and waits for it; it may be called again.
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// config is a prometheus.yml scraping targets, every address loopback.
func config(interval time.Duration, targets []Target) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\nscrape_configs:\n", promDuration(interval), promDuration(interval))
	if len(targets) == 0 {
		b.WriteString("  []\n")
	}
	for _, tg := range targets {
		path := cmp.Or(tg.Path, "/metrics")
		fmt.Fprintf(&b, "  - job_name: %q\n    metrics_path: %q\n    static_configs:\n      - targets: [%q]\n", tg.Job, path, tg.Addr)
	}
	return b.Bytes()
}

func promDuration(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Backfill writes points into the data dir data as TSDB blocks, through
// promtool tsdb create-blocks-from openmetrics. Start a server on data
// afterwards (a running one does not load new blocks at once). Points keep
// millisecond precision, as Prometheus does; within one series and
// millisecond the last point given wins.
func Backfill(t testing.TB, data string, points []store.Point) {
	t.Helper()
	om, err := OpenMetrics(points)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "backfill.om")
	if err := os.WriteFile(file, om, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, Promtool(t), "tsdb", "create-blocks-from", "openmetrics", "--quiet", file, data).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
}

// OpenMetrics encodes points as an OpenMetrics text file: one gauge
// family per measurement, each series' samples in time order (promtool
// needs both), "# EOF" at the end. Measurements and tag keys must be valid
// Prometheus names.
func OpenMetrics(points []store.Point) ([]byte, error) {
	type key struct{ m, series string }
	type sample struct {
		ms int64
		v  float64
	}
	bySeries := map[key]map[int64]float64{}
	for _, p := range points {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			return nil, fmt.Errorf("%s: value %v is not finite", p.Measurement, p.Value)
		}
		if !model.LegacyValidation.IsValidMetricName(p.Measurement) {
			return nil, fmt.Errorf("measurement %q is not a Prometheus metric name", p.Measurement)
		}
		labels, err := labelSet(p.Tags)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Measurement, err)
		}
		k := key{p.Measurement, labels}
		if bySeries[k] == nil {
			bySeries[k] = map[int64]float64{}
		}
		bySeries[k][p.Time.UnixMilli()] = p.Value
	}
	keys := make([]key, 0, len(bySeries))
	for k := range bySeries {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.m, b.m), cmp.Compare(a.series, b.series)) })
	var b bytes.Buffer
	family := ""
	for _, k := range keys {
		if k.m != family {
			family = k.m
			fmt.Fprintf(&b, "# TYPE %s gauge\n", k.m)
		}
		samples := make([]sample, 0, len(bySeries[k]))
		for ms, v := range bySeries[k] {
			samples = append(samples, sample{ms, v})
		}
		slices.SortFunc(samples, func(a, b sample) int { return cmp.Compare(a.ms, b.ms) })
		for _, s := range samples {
			fmt.Fprintf(&b, "%s%s %s %s\n", k.m, k.series, strconv.FormatFloat(s.v, 'g', -1, 64), secondsOf(s.ms))
		}
	}
	b.WriteString("# EOF\n")
	return b.Bytes(), nil
}

// labelSet renders tags as {k="v",...} in OpenMetrics escaping, keys
// sorted; "" for no tags.
func labelSet(tags map[string]string) (string, error) {
	if len(tags) == 0 {
		return "", nil
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if !model.LegacyValidation.IsValidLabelName(k) {
			return "", fmt.Errorf("tag %q is not a Prometheus label name", k)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(tags[k]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}

// secondsOf renders Unix milliseconds as OpenMetrics' seconds, exactly.
func secondsOf(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return fmt.Sprintf("%s%d.%03d", sign, ms/1000, ms%1000)
}
