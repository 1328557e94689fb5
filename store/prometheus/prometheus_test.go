package prometheus_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/prometheus"
	"github.com/prewarm/prewarm/store/prometheus/promtest"
)

// probeAnswer is what Prometheus 2.x answers the bounds probe.
const probeAnswer = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1767571200,"2"]}]}}`

// fakeAPI serves the bounds probe and answers every other query with
// status and body; it stands for proxies and failures a real Prometheus
// does not produce on demand.
func fakeAPI(t *testing.T, status int, body string, seen func(*http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if seen != nil {
			seen(r)
		}
		if strings.HasPrefix(r.Form.Get("query"), "count_over_time(vector(1)") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, probeAnswer)
			return
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var anyQuery = store.Query{Measurement: "m", Start: time.Unix(1767571200, 0), End: time.Unix(1767571260, 0)}

func TestErrors(t *testing.T) {
	const token = "s3cr3t-token-value"
	tests := []struct {
		name   string
		status int
		body   string
		is     []error
		isNot  []error
		says   string
	}{
		{"wrong path", http.StatusNotFound, "404 page not found", []error{store.ErrMisconfigured}, []error{store.ErrUnavailable}, "/api/v1/query"},
		{"token refused and echoed", http.StatusUnauthorized, "bad token " + token, []error{store.ErrMisconfigured}, nil, "bearer token"},
		{"forbidden", http.StatusForbidden, `{"status":"error","error":"tenant denied"}`, []error{store.ErrMisconfigured}, nil, "tenant denied"},
		{"overloaded", http.StatusServiceUnavailable, `{"status":"error","errorType":"unavailable","error":"too many queries"}`,
			[]error{store.ErrUnavailable}, []error{store.ErrMisconfigured}, "too many queries"},
		{"rate limited", http.StatusTooManyRequests, "slow down", []error{store.ErrUnavailable}, nil, "429"},
		{"proxy error", http.StatusBadGateway, "<html>bad gateway</html>", []error{store.ErrUnavailable}, nil, "502"},
		{"bad PromQL", http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"parse error"}`,
			[]error{store.ErrInvalidQuery}, []error{store.ErrUnavailable}, "parse error"},
		{"execution", http.StatusUnprocessableEntity, `{"status":"error","errorType":"execution","error":"query processing would load too many samples"}`,
			nil, []error{store.ErrUnavailable, store.ErrInvalidQuery}, "too many samples"},
		{"not the API", http.StatusOK, "<html>Grafana</html>", nil, []error{store.ErrUnavailable}, "not the Prometheus query API"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeAPI(t, tc.status, tc.body, nil)
			s, err := prometheus.New(prometheus.Config{URL: srv.URL, Token: func() (string, error) { return token, nil }})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Query(context.Background(), anyQuery)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.is {
				if !errors.Is(err, want) {
					t.Errorf("error %q does not wrap %v", err, want)
				}
			}
			for _, not := range tc.isNot {
				if errors.Is(err, not) {
					t.Errorf("error %q wraps %v", err, not)
				}
			}
			if msg := err.Error(); !strings.Contains(msg, tc.says) || strings.Contains(msg, token) || !strings.Contains(msg, srv.URL) {
				t.Errorf("error %q should say %q and the URL, without the token", msg, tc.says)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	s, err := prometheus.Open(context.Background(), prometheus.SpecPrefix+url)
	if err != nil {
		t.Fatalf("Open of an unreachable server: %v; want a Store whose queries fail", err)
	}
	if _, err := s.Query(context.Background(), anyQuery); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Query = %v, want store.ErrUnavailable", err)
	}
	// A server that answers, but not as Prometheus, fails Open at once.
	wrong := httptest.NewServer(http.NotFoundHandler())
	defer wrong.Close()
	if _, err := prometheus.Open(context.Background(), prometheus.SpecPrefix+wrong.URL); !errors.Is(err, store.ErrMisconfigured) {
		t.Errorf("Open of a server answering 404 = %v, want store.ErrMisconfigured", err)
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s, err := prometheus.New(prometheus.Config{URL: srv.URL, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(context.Background(), anyQuery); !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "within 1s") {
		t.Errorf("slow server: %v, want store.ErrUnavailable naming the timeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Query(ctx, anyQuery); !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

func TestProbeAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1767571200,"5"]}]}}`)
	}))
	defer srv.Close()
	s, _ := prometheus.New(prometheus.Config{URL: srv.URL})
	if _, err := s.Query(context.Background(), anyQuery); err == nil || !strings.Contains(err.Error(), "PromQL server") {
		t.Errorf("odd probe answer: %v, want an error asking whether this is a PromQL server", err)
	}
}

func TestHeaders(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("first-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var auth, org atomic.Value
	srv := fakeAPI(t, http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[]}}`, func(r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		org.Store(r.Header.Get("X-Scope-OrgID"))
	})
	s, err := prometheus.Open(context.Background(), prometheus.SpecPrefix+srv.URL+"?org_id=team-a&token_file="+file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(context.Background(), anyQuery); err != nil {
		t.Fatal(err)
	}
	if auth.Load() != "Bearer first-token" || org.Load() != "team-a" {
		t.Errorf("Authorization %q, X-Scope-OrgID %q", auth.Load(), org.Load())
	}
	// The file is read on every request: a rotated token is used at once.
	os.WriteFile(file, []byte("second-token"), 0o600)
	s.Query(context.Background(), anyQuery)
	if auth.Load() != "Bearer second-token" {
		t.Errorf("after rotation: Authorization %q", auth.Load())
	}
	os.Remove(file)
	if _, err := s.Query(context.Background(), anyQuery); !errors.Is(err, store.ErrMisconfigured) || !strings.Contains(err.Error(), "token_file") {
		t.Errorf("token file gone: %v, want store.ErrMisconfigured naming token_file", err)
	}
}

// TestInvalidQueries checks the queries refused before anything is sent.
func TestInvalidQueries(t *testing.T) {
	var sent atomic.Int64
	srv := fakeAPI(t, http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[]}}`, func(*http.Request) { sent.Add(1) })
	s, err := prometheus.New(prometheus.Config{URL: srv.URL, MaxRequests: 10})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1767571200, 0)
	tests := []struct {
		name string
		q    store.Query
		says string
	}{
		{"label name", store.Query{Measurement: "m", Match: map[string]string{"k e": "v"}, Start: start, End: start.Add(time.Hour)}, "label name"},
		{"sub-millisecond step", store.Query{Measurement: "m", Start: start, End: start.Add(time.Hour), Step: 1500 * time.Microsecond, Aggregate: store.Mean}, "milliseconds"},
		{"blank expression", store.Query{Expr: "  ", Start: start, End: start.Add(time.Hour)}, "blank"},
		{"no measurement nor expression", store.Query{Start: start, End: start.Add(time.Hour)}, "measurement"},
		{"too many requests", store.Query{Measurement: "m", Start: start, End: start.Add(48 * time.Hour), Step: time.Second, Aggregate: store.Max}, "coarser step"},
		{"too many raw days", store.Query{Measurement: "m", Start: start, End: start.Add(11 * 24 * time.Hour)}, "shorter range"},
		{"expression without aggregate", store.Query{Expr: "up", Start: start, End: start.Add(time.Hour), Step: time.Minute}, "aggregate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Query(context.Background(), tc.q)
			if !errors.Is(err, store.ErrInvalidQuery) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Query = %v, want store.ErrInvalidQuery saying %q", err, tc.says)
			}
		})
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d requests sent for invalid queries", n)
	}
}

func TestWriteIsRefused(t *testing.T) {
	s, err := prometheus.New(prometheus.Config{URL: "http://127.0.0.1:9090"})
	if err != nil {
		t.Fatal(err)
	}
	p := store.Point{Measurement: "m", Value: 1, Time: time.Now()}
	if err := s.Write(context.Background(), []store.Point{p}); !errors.Is(err, prometheus.ErrReadOnly) {
		t.Errorf("Write = %v, want ErrReadOnly", err)
	}
	if err := s.Write(context.Background(), nil); err != nil {
		t.Errorf("Write(nil) = %v, want nil", err)
	}
}

func TestParseSpec(t *testing.T) {
	env := func(token string) func(string) string {
		return func(k string) string {
			if k == prometheus.EnvToken {
				return token
			}
			return ""
		}
	}
	good := []struct {
		spec, token string
		want        prometheus.Config
		hasToken    bool
	}{
		{"prometheus:http://127.0.0.1:9090", "", prometheus.Config{URL: "http://127.0.0.1:9090"}, false},
		{"prometheus:https://prometheus.monitoring.svc:9090/prom/", "", prometheus.Config{URL: "https://prometheus.monitoring.svc:9090/prom/"}, false},
		{"prometheus:http://127.0.0.1:9090?resolution=30s&timeout=1m&max_points=5000&org_id=t1", "tok-123456",
			prometheus.Config{URL: "http://127.0.0.1:9090", Resolution: 30 * time.Second, Timeout: time.Minute, MaxPoints: 5000, OrgID: "t1"}, true},
	}
	for _, tc := range good {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := prometheus.ParseSpec(tc.spec, env(tc.token))
			if err != nil {
				t.Fatal(err)
			}
			if (got.Token != nil) != tc.hasToken {
				t.Errorf("token set = %v, want %v", got.Token != nil, tc.hasToken)
			}
			got.Token = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	bad := []struct{ spec, says string }{
		{"http://127.0.0.1:9090", "prometheus:http"},
		{"prometheus:", "base URL"},
		{"prometheus:127.0.0.1:9090", "base URL"},
		{"prometheus:ftp://127.0.0.1", "base URL"},
		{"prometheus:http://user:pw@127.0.0.1:9090", "credentials"},
		{"prometheus:http://127.0.0.1:9090?step=1m", `unknown parameter "step"`},
		{"prometheus:http://127.0.0.1:9090?timeout=1s&timeout=2s", "2 times"},
		{"prometheus:http://127.0.0.1:9090?resolution=0s", "resolution"},
		{"prometheus:http://127.0.0.1:9090?resolution=2h", "resolution"},
		{"prometheus:http://127.0.0.1:9090?resolution=1.5ms", "resolution"},
		{"prometheus:http://127.0.0.1:9090?timeout=soon", "timeout"},
		{"prometheus:http://127.0.0.1:9090?timeout=1h", "timeout"},
		{"prometheus:http://127.0.0.1:9090?max_points=20000", "max_points"},
		{"prometheus:http://127.0.0.1:9090#frag", "fragment"},
	}
	for _, tc := range bad {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := prometheus.ParseSpec(tc.spec, env(""))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("ParseSpec = %v, want an error saying %q", err, tc.says)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"prometheus:http://127.0.0.1:9090", "prometheus:https://h/p?resolution=1s&token_file=/x",
		"prometheus:http://[::1]:9090?max_points=1", "prometheus:http://h?org_id=%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		cfg, err := prometheus.ParseSpec(spec, func(string) string { return "" })
		if err != nil {
			return
		}
		if strings.Contains(cfg.URL, "?") {
			t.Errorf("URL %q keeps the spec's parameters", cfg.URL)
		}
		if _, err := prometheus.New(cfg); err != nil {
			t.Errorf("ParseSpec accepted %q but New refuses it: %v", spec, err)
		}
	})
}

// TestRealErrors checks how a real Prometheus' refusals come back.
func TestRealErrors(t *testing.T) {
	srv := promtest.Start(t, "", time.Minute)
	s, err := prometheus.Open(context.Background(), prometheus.SpecPrefix+srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1767571200, 0)
	for _, tc := range []struct{ name, expr string }{
		{"syntax", "sum(rate(x[1m]"},
		{"a string", `"text"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, step := range []time.Duration{0, time.Minute} {
				_, err := s.Query(context.Background(), store.Query{Expr: tc.expr, Start: start, End: start.Add(time.Hour), Step: step, Aggregate: store.Max})
				if !errors.Is(err, store.ErrInvalidQuery) || !strings.Contains(err.Error(), tc.expr) {
					t.Errorf("step %s: %v, want store.ErrInvalidQuery naming the expression", step, err)
				}
			}
		})
	}
	wrong, err := prometheus.Open(context.Background(), prometheus.SpecPrefix+srv.URL+"/not-here")
	if !errors.Is(err, store.ErrMisconfigured) {
		t.Errorf("Open under a wrong path prefix: %v %v, want store.ErrMisconfigured", wrong, err)
	}
}
