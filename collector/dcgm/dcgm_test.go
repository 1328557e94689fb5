package dcgm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/store"
)

// serve replays a testdata page the way dcgm-exporter serves it.
func serve(t *testing.T, file string) *httptest.Server {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func find(points []store.Point, measurement, gpu string) (store.Point, bool) {
	for _, p := range points {
		if p.Measurement == measurement && p.Tags[store.TagGPU] == gpu {
			return p, true
		}
	}
	return store.Point{}, false
}

func TestGatherReplaysCapturedPages(t *testing.T) {
	type want struct {
		measurement, gpu string
		value            float64
		tags             map[string]string
	}
	tests := []struct {
		file       string
		points     int
		want       []want
		absent     []string // measurements the page lacks
		malformed  bool
		sourceDown bool
	}{
		{
			file:   "h100-8gpu-v3.3.5.prom",
			points: 8 * 7, // util, fb used/free, power, temp, gr engine, sm active
			want: []want{
				{store.GPUUtil, "0", 97, map[string]string{"host": "gpu-h100-01", "uuid": "GPU-4c123b16-12dd-272d-1371-c17149d43953",
					"model": "NVIDIA H100 80GB HBM3", "source": "dcgm"}},
				{store.GPUUtil, "3", 0, nil},
				{store.GPUMemUsedBytes, "0", 51222 * mib, nil},
				{store.GPUPowerWatts, "0", 673.808, nil},
				{store.GPUSMActive, "0", 0.9021, nil},
			},
			absent: []string{store.GPUMemTotalBytes, store.GPUPowerLimitWatts},
		},
		{
			file:   "a100-2gpu-v2-hostname.prom",
			points: 2 * 5,
			want: []want{
				{store.GPUUtil, "0", 41, map[string]string{"host": "gpu-a100-07", "model": "NVIDIA A100-PCIE-40GB"}},
				{store.GPUMemUsedBytes, "0", 21037 * mib, nil},
				{store.GPUMemUsedBytes, "1", 0, nil},
			},
			absent: []string{store.GPUSMActive, store.GPUEngineActive},
		},
		{
			// Values are passed through; the collector rejects NaN and
			// negatives (see collector_test).
			file:   "nan-negative.prom",
			points: 4,
			want:   []want{{store.GPUPowerWatts, "1", 181.25, nil}, {store.GPUPowerWatts, "0", -1, nil}},
		},
		{file: "malformed-truncated.prom", malformed: true},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			srv := serve(t, tc.file)
			src, err := New(srv.URL+"/metrics", srv.Client(), 0)
			if err != nil {
				t.Fatal(err)
			}
			points, err := src.Gather(context.Background())
			if tc.malformed {
				if !errors.Is(err, collector.ErrMalformed) || len(points) != 0 {
					t.Fatalf("Gather = %d points, %v; want none and ErrMalformed", len(points), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Gather: %v", err)
			}
			if len(points) != tc.points {
				t.Errorf("got %d points, want %d", len(points), tc.points)
			}
			for _, w := range tc.want {
				p, ok := find(points, w.measurement, w.gpu)
				if !ok {
					t.Errorf("no %s for gpu %s", w.measurement, w.gpu)
					continue
				}
				if p.Value != w.value {
					t.Errorf("%s gpu %s = %v, want %v", w.measurement, w.gpu, p.Value, w.value)
				}
				for k, v := range w.tags {
					if p.Tags[k] != v {
						t.Errorf("%s gpu %s tag %s = %q, want %q", w.measurement, w.gpu, k, p.Tags[k], v)
					}
				}
			}
			for _, m := range tc.absent {
				if _, ok := find(points, m, "0"); ok {
					t.Errorf("%s present, but the page has no such field", m)
				}
			}
		})
	}
}

func TestGatherErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "dcgm not ready", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	src, err := New(srv.URL+"/metrics", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Gather(context.Background())
	if err == nil || errors.Is(err, collector.ErrMalformed) {
		t.Fatalf("HTTP 503: err = %v, want a (non-malformed) error: the source is down", err)
	}
	if src.Name() != "dcgm:"+srv.Listener.Addr().String() {
		t.Errorf("Name = %q", src.Name())
	}
	for _, bad := range []string{"", "localhost:9400", "ftp://x/metrics", "http://"} {
		if _, err := New(bad, nil, 0); err == nil {
			t.Errorf("New(%q): want an error", bad)
		}
	}
}

// Samples without gpu or UUID labels are counted as malformed; the rest of
// the page is kept.
func TestConvertMissingLabels(t *testing.T) {
	page := `# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",Hostname="h"} 10
DCGM_FI_DEV_GPU_UTIL{Hostname="h"} 20
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }))
	defer srv.Close()
	src, _ := New(srv.URL, nil, 0)
	points, err := src.Gather(context.Background())
	if !errors.Is(err, collector.ErrMalformed) || len(points) != 1 || points[0].Value != 10 {
		t.Fatalf("Gather = %v, %v; want the one good point and ErrMalformed", points, err)
	}
}

// A remote exporter whose samples lack the Hostname label (it can be turned
// off) is tagged with its URL's host, not left to the collector's own host;
// a loopback exporter is left untagged so the collector's host applies.
func TestRemoteHostFromURL(t *testing.T) {
	tests := []struct{ url, want string }{
		{"http://10.0.0.7:9400/metrics", "10.0.0.7"},
		{"http://gpu-node-3.example:9400/metrics", "gpu-node-3.example"},
		{"http://127.0.0.1:9400/metrics", ""},
		{"http://[::1]:9400/metrics", ""},
		{"http://localhost:9400/metrics", ""},
	}
	for _, tc := range tests {
		src, err := New(tc.url, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if src.host != tc.want {
			t.Errorf("New(%q).host = %q, want %q", tc.url, src.host, tc.want)
		}
	}
	page := "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\"} 10\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\",Hostname=\"h\"} 20\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }))
	defer srv.Close()
	src, _ := New(srv.URL, nil, 0)
	src.host = "10.0.0.7" // as if the exporter were remote
	points, err := src.Gather(context.Background())
	if err != nil || len(points) != 2 {
		t.Fatalf("Gather = %v, %v", points, err)
	}
	for _, p := range points {
		want := map[string]string{"0": "10.0.0.7", "1": "h"}[p.Tags[store.TagGPU]]
		if p.Tags[store.TagHost] != want {
			t.Errorf("gpu %s host = %q, want %q", p.Tags[store.TagGPU], p.Tags[store.TagHost], want)
		}
	}
}
