package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/redact"
)

const dcgmPage = `# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1"} 55
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1"} 45
`

func exporter(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, dcgmPage) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func quietOptions(o Options) Options {
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.Redactor = redact.New()
	return o
}

func TestSecrets(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.Config
		want []string
	}{
		{"nothing", config.Config{}, nil},
		{"InfluxDB's token, a 1.8 user:password's password and its URL's password",
			config.Config{Store: config.Store{Influx: &config.Influx{URL: "http://u:urlpw@db:8086", Token: "user:pw"}}},
			[]string{"user:pw", "pw", "urlpw"}},
		{"webhook tokens and signing secrets",
			config.Config{Webhooks: []config.Webhook{{URL: "http://hook/", Token: "tok", Secret: "sig"}}},
			[]string{"tok", "sig"}},
		{"passwords of the scraped URLs",
			config.Config{DCGM: []config.DCGM{{URL: "http://a:dpw@x/metrics"}}, Scrape: []config.Scrape{{URL: "http://b:spw@y/metrics"}}},
			[]string{"dpw", "spw"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.DeleteFunc(Secrets(&tt.cfg), func(s string) bool { return s == "" })
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("Secrets() = %q, lacks %q", got, w)
				}
			}
			if len(tt.want) == 0 && len(got) != 0 {
				t.Errorf("Secrets() = %q, want none", got)
			}
		})
	}
}

// A --once run prints the cycle's points and writes them nowhere.
func TestRunOncePrints(t *testing.T) {
	cfg := config.Default()
	cfg.DCGM = []config.DCGM{{URL: exporter(t)}}
	cfg.Host = "node-1"
	var out bytes.Buffer
	if err := Run(context.Background(), &cfg, quietOptions(Options{Once: true, Print: &out})); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "gpu_util,"); n != 2 || !strings.Contains(out.String(), "host=node-1") {
		t.Errorf("printed:\n%s\nwant two gpu_util lines of host node-1", out.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*config.Config)
		want string
	}{
		{"no sources", func(*config.Config) {}, "no sources"},
		{"InfluxDB settings the client refuses", func(c *config.Config) {
			c.Store.Influx = &config.Influx{URL: "http://db:8086", Bucket: "b", Token: "a b"}
		}, "space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			if tt.name != "no sources" {
				cfg.DCGM = []config.DCGM{{URL: exporter(t)}}
			}
			tt.edit(&cfg)
			err := Run(context.Background(), &cfg, quietOptions(Options{Once: true}))
			var uerr *UsageError
			if !errors.As(err, &uerr) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a *UsageError with %q", err, tt.want)
			}
		})
	}
}

// A running collector serves /healthz, /readyz and /metrics on Listen and
// stops with its context.
func TestRunServes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.DCGM = []config.DCGM{{URL: exporter(t)}}
	cfg.Interval = time.Second
	cfg.Listen = addr
	cfg.Store.Embedded = filepath.Join(dir, "c.db")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, &cfg, quietOptions(Options{})) }()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := get("/readyz")
		if code == http.StatusOK && strings.HasPrefix(body, "ready: ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never ready: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for path, want := range map[string]string{"/healthz": "ok\n", "/metrics": "prewarm_collector_cycles_total"} {
		if code, body := get(path); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s = %d, want 200 with %q", path, code, want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not stop")
	}
}

func TestBufferOptions(t *testing.T) {
	tests := []struct {
		name   string
		buffer config.Buffer
		store  config.Store
		once   bool
		want   buffer.Options
	}{
		{"next to the embedded store", config.Buffer{MemoryPoints: 5}, config.Store{Embedded: "/var/c.db"}, false,
			buffer.Options{MemoryPoints: 5, SpoolDir: "/var/c.db.spool"}},
		{"./prewarm-spool without an embedded store", config.Buffer{}, config.Store{Influx: &config.Influx{}}, false,
			buffer.Options{SpoolDir: "prewarm-spool"}},
		{"the configured spool", config.Buffer{SpoolDir: "/s", SpoolMaxBytes: 1 << 20}, config.Store{Embedded: "/var/c.db"}, true,
			buffer.Options{SpoolDir: "/s", SpoolMaxBytes: 1 << 20}},
		{"none for --once unless configured", config.Buffer{}, config.Store{Embedded: "/var/c.db"}, true, buffer.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Config{Buffer: tt.buffer, Store: tt.store}
			if got := bufferOptions(&cfg, tt.once); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("bufferOptions = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOpenStore(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the default embedded file
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name    string
		store   config.Store
		discard bool
		want    string
	}{
		{"nowhere for a printing --once", config.Store{}, true, "none (--once)"},
		{"the embedded file", config.Store{Embedded: filepath.Join(dir, "a.db")}, false, "embedded " + filepath.Join(dir, "a.db")},
		{"the default embedded file", config.Store{}, false, "embedded " + config.DefaultEmbedded},
		{"InfluxDB even with discard", config.Store{Influx: &config.Influx{URL: "http://127.0.0.1:1", Bucket: "b", Timeout: time.Second}},
			true, "influx http://127.0.0.1:1 bucket b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Config{Store: tt.store}
			st, desc, err := openStore(context.Background(), &cfg, tt.discard, log)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if desc != tt.want {
				t.Errorf("store %q, want %q", desc, tt.want)
			}
			if _, ok := st.(discard); ok != (tt.want == "none (--once)") {
				t.Errorf("store %T", st)
			}
		})
	}
}

// Points without a host tag get the configured host, else the machine's
// hostname.
func TestHostTag(t *testing.T) {
	name, err := os.Hostname()
	if err != nil {
		t.Skipf("no hostname here: %v", err)
	}
	for _, tc := range []struct{ host, want string }{{"", name}, {"gpu-node-1", "gpu-node-1"}} {
		if got := hostTag(tc.host); got != tc.want {
			t.Errorf("hostTag(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}
