package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An idle GPU, end to end: a dcgm-exporter page with an idle GPU, the idle
// rule shortened by the config file, and the plain-JSON event arriving at a
// release endpoint with the bearer token from PREWARM_WEBHOOK_TOKEN.
func TestRunIdleEventToWebhook(t *testing.T) {
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="3",UUID="GPU-idle",modelName="NVIDIA H20",Hostname="gpu-h20-05"} 0
# TYPE DCGM_FI_PROF_SM_ACTIVE gauge
DCGM_FI_PROF_SM_ACTIVE{gpu="3",UUID="GPU-idle",modelName="NVIDIA H20",Hostname="gpu-h20-05"} 0.001
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="3",UUID="GPU-idle",modelName="NVIDIA H20",Hostname="gpu-h20-05"} 70000
`)
	}))
	defer exporter.Close()
	events := make(chan map[string]any, 10)
	auth := make(chan string, 10)
	release := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		json.NewDecoder(r.Body).Decode(&ev)
		events <- ev
		auth <- r.Header.Get("Authorization")
		io.WriteString(w, `{"outcome":"released"}`)
	}))
	defer release.Close()

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "c.yml")
	os.WriteFile(cfgFile, []byte("alerts:\n  idle: {threshold: 5, for: 1s}\nhost_pools: {gpu-h20-05: inference}\n"), 0o600)
	t.Setenv("PREWARM_WEBHOOK_TOKEN", "release-token-1")
	r := startRun("--config", cfgFile, "--dcgm-url", exporter.URL+"/metrics", "--interval", "1s",
		"--store", "embedded:"+filepath.Join(dir, "c.db"), "--instance-id", "i-h20abc", "--webhook", release.URL+"/api/v1/release",
		"--listen", "")
	defer r.stop(t)
	select {
	case ev := <-events:
		want := map[string]any{"kind": "idle", "instance_id": "i-h20abc", "pool": "inference", "host": "gpu-h20-05",
			"gpu": "3", "uuid": "GPU-idle"}
		for k, v := range want {
			if ev[k] != v {
				t.Errorf("event %s = %v, want %v (event %v)", k, ev[k], v, ev)
			}
		}
		if _, err := time.Parse(time.RFC3339, fmt.Sprint(ev["since"])); err != nil {
			t.Errorf("since %v is not RFC 3339: %v", ev["since"], err)
		}
		if got := <-auth; got != "Bearer release-token-1" {
			t.Errorf("Authorization = %q", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no idle event within 20 s\n%s", r.stderr.String())
	}
}
