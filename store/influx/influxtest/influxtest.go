// Package influxtest runs real InfluxDB 1.8 servers for tests.
//
// scripts/influxd.sh builds influxd and starts one shared server, exporting
// PREWARM_INFLUXD (the binary) and PREWARM_INFLUX_URL (the server). URL
// returns that shared server; StartServer launches a private one from the
// same binary, on its own loopback ports and data dir, that a test may stop
// and restart (to simulate an outage) without disturbing other tests.
//
// Without those variables the helpers skip the test, unless
// PREWARM_REQUIRE_INFLUX=1, in which case they fail it: CI sets that so a
// broken setup cannot pass as skipped.
package influxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Database is the database every server is created with, and Bucket the
// v2-compatibility bucket name for its default retention policy.
const (
	Database = "prewarm"
	Bucket   = Database + "/autogen"
)

// Environment variables set by scripts/influxd.sh start.
const (
	EnvBinary  = "PREWARM_INFLUXD"
	EnvURL     = "PREWARM_INFLUX_URL"
	EnvRequire = "PREWARM_REQUIRE_INFLUX"
)

// skip skips t, or fails it when PREWARM_REQUIRE_INFLUX=1.
func skip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s, and %s=1 requires InfluxDB: run the tests through scripts/test.sh (make test)", why, EnvRequire)
	}
	t.Skipf("%s; run scripts/influxd.sh start and export what it prints, or use make test", why)
}

// URL returns the shared server's URL from PREWARM_INFLUX_URL, skipping (or
// failing) the test when it is unset. Its database Database exists.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		skip(t, EnvURL+" is not set")
	}
	return u
}

// Server is a private influxd process. Stop and Start may be called in any
// order and any number of times; the server keeps its ports and data. They
// are not safe for concurrent use with each other.
type Server struct {
	// URL is the server's HTTP base URL, e.g. http://127.0.0.1:40123.
	URL string
	// Dir holds the config, the data and influxd.log.
	Dir string
	// Token is what a client passes as its token: "" without WithAuth,
	// "user:password" with it.
	Token string

	bin    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Option changes how StartServer sets up its server.
type Option func(*options)

type options struct{ user, password string }

// WithAuth turns on authentication with one admin user, as a production
// 1.8 server would have it; clients then use the token "user:password"
// (Server.Token).
func WithAuth(user, password string) Option {
	return func(o *options) { o.user, o.password = user, password }
}

// StartServer launches influxd from $PREWARM_INFLUXD on free loopback ports
// with Flux enabled and a data dir under t.TempDir, waits until it answers,
// creates Database and registers its shutdown with t.Cleanup. It skips (or
// fails) the test when PREWARM_INFLUXD is unset.
func StartServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		skip(t, EnvBinary+" is not set")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v (run scripts/influxd.sh build)", EnvBinary, bin, err)
	}
	dir := t.TempDir()
	httpAdr, rpcAdr := freeAddr(t), freeAddr(t)
	conf := Config(dir, httpAdr, rpcAdr)
	if o.user != "" {
		conf = strings.Replace(conf, "[http]\n", "[http]\n  auth-enabled = true\n", 1)
	}
	if err := os.WriteFile(filepath.Join(dir, "influxdb.conf"), []byte(conf), 0o644); err != nil {
		t.Fatalf("influxtest: %v", err)
	}
	s := &Server{URL: "http://" + httpAdr, Dir: dir, bin: bin}
	t.Cleanup(s.Stop)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if o.user != "" {
		// The first user may be created without credentials.
		q := fmt.Sprintf("CREATE USER %s WITH PASSWORD '%s' WITH ALL PRIVILEGES",
			quoteIdent(o.user), strings.ReplaceAll(o.password, "'", `\'`))
		if err := post(s.URL+"/query", url.Values{"q": {q}}, "", ""); err != nil {
			t.Fatalf("influxtest: create user: %v", err)
		}
		s.Token = o.user + ":" + o.password
	}
	if err := createDatabase(s.URL, o.user, o.password); err != nil {
		t.Fatalf("influxtest: create database: %v", err)
	}
	return s
}

// createDatabase creates Database. Right after the first user is created,
// InfluxDB 1.8 can refuse that user's credentials or privileges for a
// moment (HTTP 403, or 200 with "error authorizing query" in the body)
// while its user cache catches up, so a refusal is retried for up to 10 s.
func createDatabase(base, user, password string) error {
	form := url.Values{"q": {"CREATE DATABASE " + Database}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := post(base+"/query", form, user, password)
		if err == nil || user == "" || time.Now().After(deadline) || !(strings.Contains(err.Error(), "HTTP 40") || strings.Contains(err.Error(), "authoriz")) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quoteIdent quotes an InfluxQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Start (re)starts the server on its ports and data dir and waits until it
// answers /ping. It does nothing when the server is running. Unlike
// StartServer it may be called from any goroutine: it reports problems as
// an error instead of failing the test.
func (s *Server) Start() error {
	if s.cmd != nil {
		return nil
	}
	logf, err := os.OpenFile(filepath.Join(s.Dir, "influxd.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("influxtest: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "run", "-config", filepath.Join(s.Dir, "influxdb.conf"))
	cmd.Env = append(os.Environ(), "INFLUXDB_HTTP_FLUX_ENABLED=true")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("influxtest: start %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited = cmd, exited
	go func() { _ = cmd.Wait(); close(exited) }()

	deadline := time.Now().Add(60 * time.Second) // a busy 2-core CI machine
	for {
		select {
		case <-exited:
			s.cmd = nil
			return fmt.Errorf("influxtest: influxd exited at start; log:\n%s", s.logTail())
		default:
		}
		if ping(s.URL) {
			return nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("influxtest: influxd did not answer /ping within 60s; log:\n%s", s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 10 s) and waits
// until its port is closed. It does nothing when the server is stopped.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "influxd.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Config returns an influxd 1.8 configuration that keeps everything under
// dir, listens only on the given loopback addresses, enables Flux and turns
// off what a test server does not need (usage reporting, self-monitoring,
// request logs). scripts/influxd.sh writes the same settings.
func Config(dir, httpAddr, rpcAddr string) string {
	return fmt.Sprintf(`reporting-disabled = true
bind-address = %q
[meta]
  dir = %q
  logging-enabled = false
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[monitor]
  store-enabled = false
[subscriber]
  enabled = false
[continuous_queries]
  enabled = false
[http]
  bind-address = %q
  flux-enabled = true
  log-enabled = false
  pprof-enabled = false
[logging]
  level = "warn"
  suppress-logo = true
`, rpcAddr, filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), httpAddr)
}

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("influxtest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

func ping(base string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ping", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusNoContent
}

// post sends an InfluxQL form, with basic auth when user is set.
func post(u string, form url.Values, user, password string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d", u, resp.StatusCode)
	}
	// A statement that fails is answered 200 with its error in the body
	// ({"results":[{"error":"..."}]}).
	var body struct {
		Results []struct {
			Error string `json:"error"`
		} `json:"results"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err == nil {
		for _, r := range body.Results {
			if r.Error != "" {
				return fmt.Errorf("POST %s: %s", u, r.Error)
			}
		}
	}
	return nil
}
