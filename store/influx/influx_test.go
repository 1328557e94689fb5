package influx_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/influx/influxtest"
	"github.com/prewarm/prewarm/store/storetest"
)

func newStore(t testing.TB, cfg influx.Config) *influx.Store {
	t.Helper()
	s, err := influx.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// TestConformance runs the store suite against the real InfluxDB 1.8 that
// scripts/influxd.sh started, through the v2 compatibility API.
func TestConformance(t *testing.T) {
	url := influxtest.URL(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return newStore(t, influx.Config{URL: url, Bucket: influxtest.Bucket, BatchSize: 7000})
	})
}

// TestBucketWithoutRetentionPolicy: 1.8 also accepts "database" alone as
// the bucket, meaning its default retention policy.
func TestBucketWithoutRetentionPolicy(t *testing.T) {
	url := influxtest.URL(t)
	ctx := context.Background()
	s := newStore(t, influx.Config{URL: url, Bucket: influxtest.Database})
	defer s.Close()
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	m := "bucket_db_only_" + time.Now().Format("150405.000000")
	if err := s.Write(ctx, []store.Point{{Measurement: m, Value: 1, Time: at}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query(ctx, store.Query{Measurement: m, Start: at, End: at.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d series, want 1", len(got))
	}
}

func TestUnknownDatabaseIsNotUnavailable(t *testing.T) {
	url := influxtest.URL(t)
	s := newStore(t, influx.Config{URL: url, Bucket: "no_such_db/autogen"})
	defer s.Close()
	err := s.Write(context.Background(), []store.Point{{Measurement: "m", Value: 1, Time: time.Now()}})
	if err == nil || errors.Is(err, store.ErrUnavailable) || !errors.Is(err, store.ErrMisconfigured) {
		t.Fatalf("Write to a missing database = %v, want ErrMisconfigured (until someone creates it)", err)
	}
	if !strings.Contains(err.Error(), "database") {
		t.Errorf("error %q should say the database is the problem", err)
	}
}

// TestOutage stops a private server mid-stream: writes fail with
// ErrUnavailable while it is down, the same batch succeeds once it is back,
// and nothing written before the outage is lost.
func TestOutage(t *testing.T) {
	t.Parallel()
	srv := influxtest.StartServer(t)
	ctx := context.Background()
	s := newStore(t, influx.Config{URL: srv.URL, Bucket: influxtest.Bucket, Timeout: 2 * time.Second})
	defer s.Close()
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	batch := func(i int) []store.Point {
		return []store.Point{{Measurement: "outage", Tags: map[string]string{"gpu": "0"}, Value: float64(i), Time: at.Add(time.Duration(i) * time.Second)}}
	}
	if err := s.Write(ctx, batch(0)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	srv.Stop()
	t.Logf("stopped in %s", time.Since(t0))
	err := s.Write(ctx, batch(1))
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Write while down = %v, want store.ErrUnavailable", err)
	}
	if _, err := s.Query(ctx, store.Query{Measurement: "outage", Start: at, End: at.Add(time.Hour)}); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Query while down = %v, want store.ErrUnavailable", err)
	}
	t0 = time.Now()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted in %s", time.Since(t0))
	if err := s.Write(ctx, batch(1)); err != nil {
		t.Fatalf("retry after restart: %v", err)
	}
	got, err := s.Query(ctx, store.Query{Measurement: "outage", Start: at, End: at.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Samples) != 2 {
		t.Fatalf("after restart got %+v, want 2 samples", got)
	}
}

// TestAuthentication: against a 1.8 server with authentication on, the
// token is "user:password"; a wrong one is a permanent error, not an outage.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	srv := influxtest.StartServer(t, influxtest.WithAuth("prewarm", "it's-s3cret"))
	ctx := context.Background()
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	points := []store.Point{{Measurement: "auth", Value: 1, Time: at}}

	s := newStore(t, influx.Config{URL: srv.URL, Token: srv.Token, Org: "-", Bucket: influxtest.Bucket})
	defer s.Close()
	if err := s.Write(ctx, points); err != nil {
		t.Fatalf("Write with the right token: %v", err)
	}
	got, err := s.Query(ctx, store.Query{Measurement: "auth", Start: at, End: at.Add(time.Second)})
	if err != nil || len(got) != 1 {
		t.Fatalf("Query with the right token = %v, %v; want one series", got, err)
	}

	for _, token := range []string{"", "prewarm:wrong"} {
		bad := newStore(t, influx.Config{URL: srv.URL, Token: token, Bucket: influxtest.Bucket})
		defer bad.Close()
		err := bad.Write(ctx, points)
		if err == nil || errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "token") {
			t.Errorf("Write with token %q = %v, want a permanent error about the token", token, err)
		}
		if err != nil && strings.Contains(err.Error(), "wrong") {
			t.Errorf("error %q leaks the token", err)
		}
	}
}

func TestErrorClassification(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		body        string
		unavailable bool
		// misconfigured: every request fails until an operator fixes the
		// token or bucket, so a writer must keep its points.
		misconfigured bool
		mention       string
	}{
		{"server error", http.StatusServiceUnavailable, `{"code":"unavailable","message":"overloaded"}`, true, false, "overloaded"},
		{"internal error", http.StatusInternalServerError, `{"error":"boom"}`, true, false, "500"},
		{"rate limited", http.StatusTooManyRequests, `{"code":"too many requests","message":"slow down"}`, true, false, "slow down"},
		{"bad points", http.StatusBadRequest, `{"code":"invalid","message":"unable to parse"}`, false, false, "unable to parse"},
		{"bad token", http.StatusUnauthorized, `{"code":"unauthorized","message":"unauthorized access"}`, false, true, "token"},
		{"forbidden", http.StatusForbidden, `{"code":"forbidden","message":"no write permission"}`, false, true, "token"},
		{"no bucket", http.StatusNotFound, `{"code":"not found","message":"bucket not found"}`, false, true, "bucket"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			s := newStore(t, influx.Config{URL: srv.URL, Bucket: "b", Token: "s3cret-token"})
			defer s.Close()
			err := s.Write(context.Background(), []store.Point{{Measurement: "m", Value: 1, Time: time.Now()}})
			if err == nil {
				t.Fatal("Write succeeded")
			}
			if got := errors.Is(err, store.ErrUnavailable); got != tc.unavailable {
				t.Errorf("errors.Is(%v, ErrUnavailable) = %v, want %v", err, got, tc.unavailable)
			}
			if got := errors.Is(err, store.ErrMisconfigured); got != tc.misconfigured {
				t.Errorf("errors.Is(%v, ErrMisconfigured) = %v, want %v", err, got, tc.misconfigured)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q should mention %q", err, tc.mention)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q leaks the token", err)
			}
		})
	}
}

func TestConnectionRefusedIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	s := newStore(t, influx.Config{URL: "http://" + addr, Bucket: "b"})
	defer s.Close()
	err = s.Write(context.Background(), []store.Point{{Measurement: "m", Value: 1, Time: time.Now()}})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Write to a closed port = %v, want store.ErrUnavailable", err)
	}
	if err := s.Ping(context.Background()); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Ping of a closed port = %v, want store.ErrUnavailable", err)
	}
}

func TestTimeoutIsUnavailable(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s := newStore(t, influx.Config{URL: srv.URL, Bucket: "b", Timeout: 100 * time.Millisecond})
	defer s.Close()
	err := s.Write(context.Background(), []store.Point{{Measurement: "m", Value: 1, Time: time.Now()}})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Write to a server that never answers = %v, want store.ErrUnavailable", err)
	}
}

func TestCancelledIsNotUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		// The server notices a client hanging up only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	s := newStore(t, influx.Config{URL: srv.URL, Bucket: "b"})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	err := s.Write(ctx, []store.Point{{Measurement: "m", Value: 1, Time: time.Now()}})
	if !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("cancelled Write = %v, want context.Canceled and not ErrUnavailable", err)
	}
}

// TestWriteSplitsBatches checks on a recording server that a Write of
// 2.5 batches is sent as 3 requests, and that a failure in the second stops
// the Write and says how many points landed.
func TestWriteSplitsBatches(t *testing.T) {
	var bodies []string
	failSecond := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v2/write" {
			w.WriteHeader(http.StatusNoContent) // New's ping
			return
		}
		body, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(body))
		if len(bodies) == 2 && failSecond {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	s := newStore(t, influx.Config{URL: srv.URL, Bucket: "b", BatchSize: 2})
	defer s.Close()
	at := time.Unix(1767571200, 0)
	var points []store.Point
	for i := range 5 {
		points = append(points, store.Point{Measurement: "m", Tags: map[string]string{"k": "v w"}, Value: float64(i), Time: at.Add(time.Duration(i))})
	}
	if err := s.Write(context.Background(), points); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 3 {
		t.Fatalf("sent %d requests, want 3: %q", len(bodies), bodies)
	}
	if want := "m,k=v\\ w value=0 1767571200000000000\nm,k=v\\ w value=1 1767571200000000001\n"; bodies[0] != want {
		t.Errorf("first body = %q, want %q", bodies[0], want)
	}
	bodies, failSecond = nil, true
	err := s.Write(context.Background(), points)
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "wrote 2 of 5") {
		t.Fatalf("Write with a failing 2nd request = %v, want ErrUnavailable saying 'wrote 2 of 5'", err)
	}
	if len(bodies) != 2 {
		t.Fatalf("sent %d requests after a failure, want to stop at 2", len(bodies))
	}
}

// TestV2Request checks what an InfluxDB 2.x server would receive: the
// token in the Authorization header, org and bucket in the URL, nanosecond
// precision, and a Flux query for reads.
func TestV2Request(t *testing.T) {
	type req struct{ method, path, auth, org, bucket, precision, body string }
	var got []req
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		q := r.URL.Query()
		got = append(got, req{r.Method, r.URL.Path, r.Header.Get("Authorization"), q.Get("org"), q.Get("bucket"), q.Get("precision"), string(body)})
		if r.URL.Path == "/api/v2/query" {
			w.Header().Set("Content-Type", "text/csv")
			_, _ = io.WriteString(w, "\r\n")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	s := newStore(t, influx.Config{URL: srv.URL, Token: "tok", Org: "acme", Bucket: "metrics"})
	defer s.Close()
	at := time.Unix(1767571200, 0)
	if err := s.Write(context.Background(), []store.Point{{Measurement: "m", Value: 1, Time: at}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(context.Background(), store.Query{Measurement: "m", Start: at, End: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d requests, want ping, write, query: %+v", len(got), got)
	}
	w, q := got[1], got[2]
	if w.path != "/api/v2/write" || w.auth != "Token tok" || w.org != "acme" || w.bucket != "metrics" || w.precision != "ns" {
		t.Errorf("write request = %+v", w)
	}
	if q.path != "/api/v2/query" || q.auth != "Token tok" || q.org != "acme" || !strings.Contains(q.body, `from(bucket: \"metrics\")`) {
		t.Errorf("query request = %+v", q)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  influx.Config
		want string
	}{
		{"no url", influx.Config{Bucket: "b"}, "the URL is required (--influx-url or store.influx.url"},
		{"bad url", influx.Config{URL: "127.0.0.1:8086", Bucket: "b"}, "(--influx-url or store.influx.url) is not an http(s) URL"},
		{"no bucket", influx.Config{URL: "http://127.0.0.1:8086"}, "the bucket is required (--influx-bucket or store.influx.bucket"},
		{"negative batch", influx.Config{URL: "http://127.0.0.1:8086", Bucket: "b", BatchSize: -1}, "must not be negative"},
		{"space in token", influx.Config{URL: "http://127.0.0.1:8086", Bucket: "b", Token: "user:pass word"}, "the token (--influx-token) has a space"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := influx.New(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// BenchmarkWrite writes to the shared InfluxDB 1.8 on loopback:
// go test ./store/influx -run '^$' -bench Write -benchtime 20x (with the
// environment scripts/influxd.sh start prints).
func BenchmarkWrite(b *testing.B) {
	url := influxtest.URL(b)
	for _, batch := range []int{1000, 10_000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s := newStore(b, influx.Config{URL: url, Bucket: influxtest.Bucket})
			defer s.Close()
			storetest.BenchWrite(b, s, 200, batch)
		})
	}
}

// echoServer answers every request with status and a body quoting the
// request's headers and URL raw, URL-escaped and in base64, as a proxy
// error page or a misconfigured gateway may.
func echoServer(t *testing.T, status int, contentType string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.String())
		for k, v := range r.Header {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ","))
		}
		dump := b.String()
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		if contentType == "application/json" {
			msg, _ := json.Marshal(dump + url.QueryEscape(dump) + base64.StdEncoding.EncodeToString([]byte(dump)))
			fmt.Fprintf(w, `{"code":"echo","message":%s}`, msg)
			return
		}
		fmt.Fprintf(w, "%s\n%s\n%s\n", dump, url.QueryEscape(dump), base64.StdEncoding.EncodeToString([]byte(dump)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// No error of the store carries its token, in any spelling, whatever the
// server echoes: raw, URL-escaped, base64 (of the header), for a 2.x token
// and a 1.8 user:password alike, on writes and queries.
func TestErrorsNeverCarryTheToken(t *testing.T) {
	for _, token := range []string{"2xTok3n/with+odd=chars", "prewarm:p@ss/w0rd+x"} {
		for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusInternalServerError, http.StatusServiceUnavailable} {
			for _, ctype := range []string{"application/json", "text/plain"} {
				srv := echoServer(t, status, ctype)
				s := newStore(t, influx.Config{URL: srv.URL, Bucket: "b", Token: token, Timeout: 2 * time.Second})
				werr := s.Write(context.Background(), []store.Point{{Measurement: "m", Value: 1, Time: time.Now()}})
				_, qerr := s.Query(context.Background(), store.Query{Measurement: "m", Start: time.Unix(0, 0), End: time.Unix(60, 0)})
				s.Close()
				for _, err := range []error{werr, qerr} {
					if err == nil {
						t.Fatalf("token %q, HTTP %d %s: no error", token, status, ctype)
					}
					secrets := []string{token}
					if _, pw, ok := strings.Cut(token, ":"); ok {
						secrets = append(secrets, pw)
					}
					for _, sec := range secrets {
						for _, form := range []string{sec, url.QueryEscape(sec), url.PathEscape(sec),
							base64.StdEncoding.EncodeToString([]byte(sec)), base64.StdEncoding.EncodeToString([]byte("Token " + token))} {
							if strings.Contains(err.Error(), form) {
								t.Errorf("token %q, HTTP %d %s: error holds %q: %v", token, status, ctype, form, err)
							}
						}
					}
				}
			}
		}
	}
}
