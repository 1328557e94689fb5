package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A long queue, end to end: a service's Prometheus endpoint whose queue
// gauge stays at 80, queue_high shortened to 2 s by the config file, the
// plain-JSON event at one webhook and the WeCom text at another, the firing
// gauge on /metrics and the log line; then the queue drains and the
// resolved event follows.
func TestRunQueueHighEventToWebhook(t *testing.T) {
	var queue atomic.Int64
	queue.Store(80)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE queue_length gauge\nqueue_length{job=\"api\",replica=\"0\"} %d\nqueue_length{job=\"api\",replica=\"1\"} 0\n", queue.Load())
	}))
	defer svc.Close()
	events := make(chan map[string]any, 20)
	jsonHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		events <- ev
	}))
	defer jsonHook.Close()
	robotTexts := make(chan string, 20)
	wecom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			MsgType string `json:"msgtype"`
			Text    struct {
				Content string `json:"content"`
			} `json:"text"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		robotTexts <- m.Text.Content
		io.WriteString(w, `{"errcode":0,"errmsg":"ok"}`)
	}))
	defer wecom.Close()

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "c.yml")
	os.WriteFile(cfgFile, []byte(fmt.Sprintf(`interval: 1s
scrape:
  - name: llm-api
    url: %s/metrics
    queue_gauge: queue_length
    match: {job: api}
    tags: {pool: inference}
alerts:
  queue_high: {threshold: 50, for: 2s}
webhooks:
  - {name: ops-json, url: "%s/hook", format: json}
  - {name: ops-wecom, url: "%s/cgi-bin/webhook/send?key=k", format: wecom}
`, svc.URL, jsonHook.URL, wecom.URL)), 0o600)
	listen := freeAddr(t)
	r := startRun("--config", cfgFile, "--store", "embedded:"+filepath.Join(dir, "c.db"), "--instance-id", "i-collector",
		"--listen", listen)
	defer r.stop(t)

	wait := func(kind string) map[string]any {
		t.Helper()
		select {
		case ev := <-events:
			want := map[string]any{"kind": kind, "rule": "queue_high", "service": "llm-api", "pool": "inference", "threshold": 50.0}
			for k, v := range want {
				if ev[k] != v {
					t.Errorf("%s event %s = %v, want %v (event %v)", kind, k, ev[k], v, ev)
				}
			}
			for _, k := range []string{"instance_id", "gpu", "uuid"} {
				if _, ok := ev[k]; ok {
					t.Errorf("%s event has %s: %v", kind, k, ev)
				}
			}
			return ev
		case err := <-r.done:
			r.done <- err // for the deferred stop
			t.Fatalf("collector stopped before the %s event: %v\n%s", kind, err, r.stderr.String())
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s event within 20 s\n%s", kind, r.stderr.String())
		}
		return nil
	}
	ev := wait("alert")
	since, err1 := time.Parse(time.RFC3339, fmt.Sprint(ev["since"]))
	at, err2 := time.Parse(time.RFC3339, fmt.Sprint(ev["at"]))
	if err1 != nil || err2 != nil || at.Sub(since) < 2*time.Second || ev["value"] != 80.0 {
		t.Errorf("alert since %v at %v value %v: want at least 2 s of queue 80", ev["since"], ev["at"], ev["value"])
	}
	select {
	case text := <-robotTexts:
		if !strings.HasPrefix(text, "[ALERT] prewarm queue_high: queue length 80 (threshold 50)") ||
			!strings.Contains(text, "service llm-api in pool inference") {
			t.Errorf("WeCom text = %q", text)
		}
	case <-time.After(10 * time.Second):
		t.Error("no WeCom message within 10 s")
	}
	labels := map[string]string{"rule": "queue_high", "service": "llm-api", "pool": "inference"}
	if v, ok := metricValue(t, listen, "prewarm_collector_alert_firing", labels); !ok || v != 1 {
		t.Errorf("/metrics alert_firing%v = %v (present %v), want 1", labels, v, ok)
	}
	if !strings.Contains(r.stderr.String(), "rule=queue_high") {
		t.Errorf("no log line for the event:\n%s", r.stderr.String())
	}

	queue.Store(3)
	wait("resolved")
	if v, ok := metricValue(t, listen, "prewarm_collector_alert_firing", labels); ok {
		t.Errorf("/metrics alert_firing%v = %v after resolving, want the series gone", labels, v)
	}
	if v, _ := metricValue(t, listen, "prewarm_collector_events_total", map[string]string{"rule": "queue_high"}); v != 2 {
		t.Errorf("events_total{rule=queue_high} = %v, want 2 (alert, resolved)", v)
	}
}
