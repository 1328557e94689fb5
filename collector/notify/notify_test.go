package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/prewarm/prewarm/collector/alert"
)

var idle = alert.Event{
	Kind: alert.KindIdle, Rule: alert.RuleIdle, InstanceID: "i-abc123", Pool: "train", Host: "gpu-h100-01",
	GPU: "3", UUID: "GPU-4c123b16", Since: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC),
	At: time.Date(2026, 11, 30, 1, 30, 0, 0, time.UTC), Value: 0.4, Threshold: 5,
	Reason: "compute activity 0.4% < 5% (util 0%) for 30m0s: GPU 3 (GPU-4c123b16) on gpu-h100-01",
}

// receiver records requests and answers with reply.
type receiver struct {
	mu    sync.Mutex
	reqs  []*http.Request
	body  [][]byte
	reply string
	code  int
	srv   *httptest.Server
}

func newReceiver(t *testing.T, code int, reply string) *receiver {
	r := &receiver{reply: reply, code: code}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, req)
		r.body = append(r.body, b)
		r.mu.Unlock()
		w.WriteHeader(r.code)
		io.WriteString(w, r.reply)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.reqs) }

func TestWebhookFormats(t *testing.T) {
	const token = "s3cr3t-release-token"
	const secret = "SEC-dingtalk-secret"
	fixed := func() time.Time { return time.UnixMilli(1764464400000) }
	tests := []struct {
		name   string
		format string
		check  func(t *testing.T, req *http.Request, body []byte)
	}{
		{"plain json for the release endpoint", FormatJSON, func(t *testing.T, req *http.Request, body []byte) {
			if got := req.Header.Get("Authorization"); got != "Bearer "+token {
				t.Errorf("Authorization = %q", got)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"kind": "idle", "instance_id": "i-abc123", "pool": "train", "host": "gpu-h100-01",
				"gpu": "3", "uuid": "GPU-4c123b16", "since": "2026-11-30T01:00:00Z", "reason": idle.Reason}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("field %s = %v, want %v", k, m[k], v)
				}
			}
		}},
		{"wecom robot", FormatWeCom, func(t *testing.T, req *http.Request, body []byte) {
			var m struct {
				MsgType string `json:"msgtype"`
				Text    struct{ Content string }
			}
			if err := json.Unmarshal(body, &m); err != nil || m.MsgType != "text" ||
				!strings.Contains(m.Text.Content, "[IDLE]") || !strings.Contains(m.Text.Content, "i-abc123") {
				t.Errorf("body %s (%v)", body, err)
			}
		}},
		{"dingtalk robot with signature", FormatDingTalk, func(t *testing.T, req *http.Request, body []byte) {
			q := req.URL.Query()
			if q.Get("access_token") != "robotkey" || q.Get("timestamp") != "1764464400000" {
				t.Errorf("query %v", q)
			}
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write([]byte("1764464400000\n" + secret))
			if q.Get("sign") != base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
				t.Errorf("sign %q does not verify", q.Get("sign"))
			}
			if !bytes.Contains(body, []byte(`"msgtype":"text"`)) {
				t.Errorf("body %s", body)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newReceiver(t, 200, `{"errcode":0,"errmsg":"ok"}`)
			w := &Webhook{URL: rcv.srv.URL + "/hook?access_token=robotkey", Format: tc.format, Now: fixed}
			if tc.format == FormatJSON {
				w.Token = token
			}
			if tc.format == FormatDingTalk {
				w.Secret = secret
			}
			if err := w.Post(context.Background(), idle); err != nil {
				t.Fatal(err)
			}
			tc.check(t, rcv.reqs[0], rcv.body[0])
		})
	}
}

func TestRobotErrcodeIsAnError(t *testing.T) {
	rcv := newReceiver(t, 200, `{"errcode":93000,"errmsg":"invalid webhook url"}`)
	w := &Webhook{URL: rcv.srv.URL + "/cgi-bin/webhook/send?key=topsecretkey", Format: FormatWeCom}
	err := w.Post(context.Background(), idle)
	if err == nil || !strings.Contains(err.Error(), "93000") {
		t.Fatalf("err = %v, want errcode 93000", err)
	}
	if strings.Contains(err.Error(), "topsecretkey") {
		t.Errorf("error leaks the robot key: %v", err)
	}
}

// The dispatcher logs every event, filters by kind, retries, counts
// failures, and never writes tokens or robot keys to the log.
func TestDispatcher(t *testing.T) {
	release := newReceiver(t, 200, `{}`)
	broken := newReceiver(t, 500, `oops`)
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	reg := prometheus.NewRegistry()
	d, err := NewDispatcher(log, []*Webhook{
		{Name: "release", URL: release.srv.URL, Format: FormatJSON, Token: "tok-123", Kinds: []string{alert.KindIdle}},
		{Name: "broken", URL: broken.srv.URL + "?key=robot-key-xyz", Format: FormatWeCom},
	}, DispatcherOptions{Retries: 2, Backoff: time.Millisecond, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	d.Send(idle)
	d.Send(alert.Event{Kind: alert.KindAlert, Rule: alert.RuleUtilHigh, Reason: "util 99%"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if release.count() != 1 {
		t.Errorf("release endpoint got %d events, want only the idle one", release.count())
	}
	if broken.count() != 4 {
		t.Errorf("broken endpoint got %d attempts, want 2 events x 2 tries", broken.count())
	}
	if got := testutil.ToFloat64(d.failed.WithLabelValues("broken")); got != 2 {
		t.Errorf("failed{broken} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(d.sent.WithLabelValues("release")); got != 1 {
		t.Errorf("sent{release} = %v, want 1", got)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if !strings.Contains(out, "kind=idle") || !strings.Contains(out, "rule=util_high") {
		t.Errorf("events not logged:\n%s", out)
	}
	for _, secret := range []string{"tok-123", "robot-key-xyz"} {
		if strings.Contains(out, secret) {
			t.Errorf("log leaks %q:\n%s", secret, out)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestWebhookValidate(t *testing.T) {
	for _, w := range []*Webhook{
		{URL: "not a url", Format: FormatJSON},
		{URL: "http://x/hook", Format: "slack"},
		{URL: "http://x/hook", Format: FormatJSON, Kinds: []string{"warning"}},
	} {
		if err := w.Validate(); err == nil {
			t.Errorf("Validate(%+v): want an error", w)
		}
	}
}
