package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/spec"
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
	mux.Handle(remote.Path, remote.Handler(collectorDB))
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
					"--listen", "127.0.0.1:0", "--keda-listen", tt.kedaListen}, &stdout, &stderr)
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

func TestSimulatedBootDelay(t *testing.T) {
	pool := func(backend string, boot time.Duration) spec.Pool {
		p := spec.DefaultPool()
		p.Name, p.Backend, p.Max, p.RPSPerInstance, p.BootDelay = backend+boot.String(), backend, 4, 1, boot
		return p
	}
	tests := []struct {
		name  string
		pools []spec.Pool
		want  time.Duration
	}{
		{"the simulated pool's boot delay", []spec.Pool{pool("simulated", 3*time.Minute)}, 3 * time.Minute},
		{"the longest of several", []spec.Pool{pool("simulated", 3*time.Minute), pool("simulated", 7*time.Minute)}, 7 * time.Minute},
		{"other back-ends do not count", []spec.Pool{pool("dryrun", 30*time.Minute), pool("simulated", 2*time.Minute)}, 2 * time.Minute},
		{"default without a simulated pool", []spec.Pool{pool("dryrun", time.Minute)}, 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := simulatedBootDelay(&spec.File{Pools: tt.pools}); got != tt.want {
				t.Errorf("boot delay = %v, want %v", got, tt.want)
			}
		})
	}
}
