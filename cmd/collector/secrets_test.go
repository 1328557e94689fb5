package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/internal/secrettest"
)

// echoUpstream stands in for InfluxDB and every webhook receiver: it
// refuses each request with a body quoting the request (method, URL with
// its query, headers, body) raw, URL-escaped and in base64, as a proxy's
// error page or a misconfigured gateway may. InfluxDB's paths answer as
// JSON errors (401 for writes, 500 for queries), the robots' with a 200
// and an errcode, the release hook with a 400.
func echoUpstream(t *testing.T, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/ping" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		echo := secrettest.Echo(r, nil)
		quoted, _ := json.Marshal(echo)
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v2/write"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"code":"unauthorized","message":%s}`, quoted)
		case strings.HasPrefix(r.URL.Path, "/api/v2/query"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"code":"internal error","message":%s}`, quoted)
		case strings.HasPrefix(r.URL.Path, "/robot"), strings.HasPrefix(r.URL.Path, "/cgi-bin"):
			fmt.Fprintf(w, `{"errcode":310000,"errmsg":%s}`, quoted)
		default:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, echo)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The secrets test for the collector: with every secret set to a
// known value and an upstream that echoes each request, zero occurrences of
// any secret, in any spelling, in the collector's stdout, stderr, the error
// it returns, and the answers of /api/v1/query, /readyz and /metrics.
func TestNoSecretInAnyOutput(t *testing.T) {
	var hits atomic.Int64
	up := echoUpstream(t, &hits)
	secrets := map[string]string{
		"INFLUX_TOKEN":          "prewarm:1nflux/p@ss+word=",
		"PREWARM_RELEASE_TOKEN": "rel3ase/b3arer+token==",
		"DINGTALK_SECRET":       "SECd1ngtalk+s1gn/secret",
	}
	const accessToken, wecomKey = "dt-acc3ss/t0ken+x=", "wc-k3y/693a91f6+y"
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("DINGTALK_ROBOT_URL", up.URL+"/robot/send?access_token="+url.QueryEscape(accessToken))
	t.Setenv("WECOM_ROBOT_URL", up.URL+"/cgi-bin/webhook/send?key="+url.QueryEscape(wecomKey))
	all := []string{secrets["INFLUX_TOKEN"], "1nflux/p@ss+word=", secrets["PREWARM_RELEASE_TOKEN"], secrets["DINGTALK_SECRET"],
		accessToken, wecomKey}

	var queue atomic.Int64
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE queue_length gauge\nqueue_length %d\n", 5+queue.Add(1))
	}))
	defer svc.Close()
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "collector.yml")
	err := os.WriteFile(cfgFile, []byte(fmt.Sprintf(`
interval: 1s
scrape:
  - {name: api, url: %s/metrics, queue_gauge: queue_length, tags: {pool: inference}}
store:
  influx: {url: %s, bucket: prewarm/autogen, token_env: INFLUX_TOKEN, timeout: 2s}
alerts:
  queue_high: {threshold: 1, for: 1s}
webhooks:
  - {name: release, url: %s/api/v1/release, format: json, token_env: PREWARM_RELEASE_TOKEN}
  - {name: ops-dt, url_env: DINGTALK_ROBOT_URL, format: dingtalk, secret_env: DINGTALK_SECRET}
  - {name: ops-wc, url_env: WECOM_ROBOT_URL, format: wecom}
`, svc.URL, up.URL, up.URL)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	r := startRun("--config", cfgFile, "--listen", addr, "--spool-dir", filepath.Join(dir, "spool"), "--log-level", "debug",
		"--print", "--unready-after-intervals", "1")
	waitFor(t, "webhook failures and store errors logged", 30*time.Second, func() bool {
		log := r.stderr.String()
		return strings.Contains(log, "webhook did not accept") && strings.Contains(log, "ops-dt") &&
			strings.Contains(log, "ops-wc") && strings.Contains(log, "store misconfigured")
	}, r)
	var answers []string
	for _, path := range []string{
		"/api/v1/query?measurement=service_queue_length&start=2026-01-05T00:00:00Z&end=2026-01-06T00:00:00Z",
		"/readyz", "/metrics",
	} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers = append(answers, fmt.Sprintf("GET %s: %d %s", path, resp.StatusCode, body))
	}
	if !strings.Contains(answers[0], "500") || !strings.Contains(answers[1], "503") {
		t.Errorf("want the query API to fail with the store (500) and /readyz with 503:\n%s", strings.Join(answers[:2], "\n"))
	}
	r.cancel()
	runErr := <-r.done
	outputs := map[string]string{"stdout": r.stdout.String(), "stderr": r.stderr.String(), "API answers": strings.Join(answers, "\n")}
	if runErr != nil {
		outputs["returned error"] = runErr.Error()
	}
	if !strings.Contains(outputs["stderr"], "[REDACTED]") {
		t.Errorf("nothing redacted: did the echo reach the log?\n%s", outputs["stderr"])
	}
	found := secrettest.Find(outputs, all)
	for _, f := range found {
		t.Error(f)
	}
	t.Logf("upstream requests: %d; secret occurrences in stdout, stderr, error and API answers: %d (%d bytes of log, %d of answers)",
		hits.Load(), secrettest.Total(found), len(outputs["stderr"]), len(outputs["API answers"]))
}
