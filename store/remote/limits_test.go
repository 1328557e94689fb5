package remote_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/remote"
)

// samples returns n raw samples a second apart from 2026-01-05.
func samples(n int) []store.Sample {
	out := make([]store.Sample, n)
	for i := range out {
		out[i] = store.Sample{Time: time.Date(2026, 1, 5, 0, 0, i, 0, time.UTC), Value: float64(i)}
	}
	return out
}

// Each limit refuses with a 4xx that names it, before the expensive part:
// the window limit before the store is asked anything, the point limit
// before the points are loaded.
func TestHandlerLimits(t *testing.T) {
	tenYearsAt1s := "measurement=m&start=2016-01-01T00:00:00Z&end=2026-01-01T00:00:00Z&step=1s&aggregate=mean"
	tests := []struct {
		name    string
		limits  remote.Limits
		series  []store.Series
		raw     int // points per series behind an aggregated answer
		query   string
		status  int
		limit   string
		mention string
		loaded  bool // the points were queried
	}{
		{"ten years at 1 s", remote.Limits{}, nil, 0, tenYearsAt1s, http.StatusBadRequest, remote.LimitMaxWindows, "315619200 windows", false},
		{"windows within the limit", remote.Limits{MaxWindows: 24}, []store.Series{{Measurement: "m", Samples: samples(3)}}, 0,
			okRange + "&step=1h&aggregate=max", http.StatusOK, "", "", true},
		{"one window too many", remote.Limits{MaxWindows: 23}, nil, 0, okRange + "&step=1h&aggregate=max", http.StatusBadRequest, remote.LimitMaxWindows, "24 windows", false},
		{"too many raw points", remote.Limits{MaxPoints: 10}, []store.Series{{Measurement: "m", Samples: samples(6)},
			{Measurement: "m", Tags: map[string]string{"gpu": "1"}, Samples: samples(5)}}, 0,
			okRange, http.StatusUnprocessableEntity, remote.LimitMaxPoints, "11 points", false},
		{"points within the limit", remote.Limits{MaxPoints: 11}, []store.Series{{Measurement: "m", Samples: samples(6)},
			{Measurement: "m", Tags: map[string]string{"gpu": "1"}, Samples: samples(5)}}, 0,
			okRange, http.StatusOK, "", "", true},
		{"aggregation shrinks the answer", remote.Limits{MaxPoints: 48}, []store.Series{{Measurement: "m", Samples: samples(24)},
			{Measurement: "m", Tags: map[string]string{"gpu": "1"}, Samples: samples(24)}}, 1000,
			okRange + "&step=1h&aggregate=mean", http.StatusOK, "", "", true},
		{"answer too large", remote.Limits{MaxResponseBytes: 200}, []store.Series{{Measurement: "m", Samples: samples(20)}}, 0,
			okRange, http.StatusUnprocessableEntity, remote.LimitMaxResponseBytes, "200 bytes", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeQuerier{series: tc.series, rawPoints: tc.raw}
			rec, e := get(t, remote.NewHandler(f, remote.HandlerOptions{Limits: tc.limits}), http.MethodGet, tc.query)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			if tc.status != http.StatusOK {
				var body struct{ Limit string }
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Limit != tc.limit ||
					!strings.Contains(e.Error, tc.mention) || !strings.Contains(e.Error, "query_api."+tc.limit) {
					t.Errorf("refusal %s: want limit %q and a message with %q and the key", rec.Body.String(), tc.limit, tc.mention)
				}
			}
			if loaded := f.got.Measurement != ""; loaded != tc.loaded {
				t.Errorf("points loaded = %v, want %v", loaded, tc.loaded)
			}
		})
	}
}

// blockingQuerier holds every query until release is closed.
type blockingQuerier struct {
	started chan struct{}
	release chan struct{}
}

func (b *blockingQuerier) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	b.started <- struct{}{}
	<-b.release
	return nil, nil
}

// Queries beyond MaxConcurrent wait QueueTimeout for a turn, then get a 429
// that says so; once the running ones finish, queries are answered again.
func TestHandlerConcurrencyLimit(t *testing.T) {
	b := &blockingQuerier{started: make(chan struct{}, 10), release: make(chan struct{})}
	h := remote.NewHandler(b, remote.HandlerOptions{Limits: remote.Limits{MaxConcurrent: 2, QueueTimeout: 50 * time.Millisecond}})
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, remote.Path+"?"+okRange, nil))
			codes[i] = rec.Code
		}()
	}
	<-b.started
	<-b.started
	rec, e := get(t, h, http.MethodGet, okRange)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(e.Error, "query_api.max_concurrent") {
		t.Errorf("third query: %d %+v (Retry-After %q), want 429 naming the limit", rec.Code, e, rec.Header().Get("Retry-After"))
	}
	close(b.release)
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Errorf("the running queries answered %v", codes)
	}
	if rec, _ := get(t, h, http.MethodGet, okRange); rec.Code != http.StatusOK {
		t.Errorf("after they finished: %d", rec.Code)
	}
}

// A store error that quotes a secret (an upstream echoing its request)
// reaches the client redacted, in every spelling.
func TestHandlerRedactsErrors(t *testing.T) {
	const secret = "s3cr3t/t0ken+x=="
	echo := "HTTP 401: Authorization: Token " + secret + " url=" + url.QueryEscape(secret) +
		" basic=" + base64.StdEncoding.EncodeToString([]byte("user:"+secret))
	f := &fakeQuerier{err: errors.New(echo)}
	rec, e := get(t, remote.NewHandler(f, remote.HandlerOptions{Redactor: redact.New(secret)}), http.MethodGet, okRange)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(e.Error, redact.Mask) {
		t.Fatalf("got %d %q", rec.Code, e.Error)
	}
	for _, form := range []string{secret, url.QueryEscape(secret), base64.StdEncoding.EncodeToString([]byte("user:" + secret))} {
		if strings.Contains(rec.Body.String(), form) {
			t.Errorf("answer %s holds the secret as %q", rec.Body.String(), form)
		}
	}
}

// The client surfaces each refusal: its reason in the message, the limit
// in StatusError.Limit, ErrLimit, and whether to retry (429: unavailable)
// or change the query (400, 422: invalid).
func TestClientSurfacesLimits(t *testing.T) {
	f := &fakeQuerier{series: []store.Series{{Measurement: "m", Samples: samples(30)}}}
	mux := http.NewServeMux()
	mux.Handle(remote.Path, remote.NewHandler(f, remote.HandlerOptions{Limits: remote.Limits{MaxPoints: 10, MaxWindows: 5}}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client, err := remote.New(srv.URL, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	day := store.Query{Measurement: "m", Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC)}
	hourly := day
	hourly.Step, hourly.Aggregate = time.Hour, store.Mean
	tests := []struct {
		name    string
		q       store.Query
		limit   string
		mention string
	}{
		{"points", day, remote.LimitMaxPoints, "would hold 30 points, more than the limit of 10"},
		{"windows", hourly, remote.LimitMaxWindows, "24 windows, more than the limit of 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.Query(context.Background(), tc.q)
			var se *remote.StatusError
			if !errors.As(err, &se) || se.Limit != tc.limit || !errors.Is(err, remote.ErrLimit) ||
				!errors.Is(err, store.ErrInvalidQuery) || errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("Query = %v, want a StatusError for limit %q matching ErrLimit and ErrInvalidQuery", err, tc.limit)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q lacks the reason %q", err, tc.mention)
			}
		})
	}
	busy := &remote.StatusError{StatusCode: http.StatusTooManyRequests, Limit: remote.LimitMaxConcurrent}
	if !errors.Is(busy, store.ErrUnavailable) || !errors.Is(busy, remote.ErrLimit) || errors.Is(busy, store.ErrInvalidQuery) {
		t.Errorf("a 429 should be unavailable (retry) and a limit")
	}
}

// The client does not read an answer past its own bound.
func TestClientAnswerBound(t *testing.T) {
	f := &fakeQuerier{series: []store.Series{{Measurement: "m", Samples: samples(100)}}}
	mux := http.NewServeMux()
	mux.Handle(remote.Path, remote.NewHandler(f, remote.HandlerOptions{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client, err := remote.New(srv.URL, remote.Options{MaxAnswerBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Query(context.Background(), store.Query{Measurement: "m",
		Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC)})
	if err == nil || !strings.Contains(err.Error(), "more than this client reads (500)") {
		t.Fatalf("Query of a 3 KB answer with a 500-byte bound = %v", err)
	}
}

// The point count comes from the real store's count aggregate: exactly at
// the limit is answered, one point over is refused, raw or aggregated.
func TestPointLimitOnTheEmbeddedStore(t *testing.T) {
	backing, err := embedded.Open(filepath.Join(t.TempDir(), "s.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer backing.Close()
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var points []store.Point
	for gpu := range 2 {
		for i := range 60 { // one point a minute for an hour
			points = append(points, store.Point{Measurement: "gpu_util", Tags: map[string]string{"gpu": fmt.Sprint(gpu)},
				Value: float64(i), Time: start.Add(time.Duration(i) * time.Minute)})
		}
	}
	if err := backing.Write(context.Background(), points); err != nil {
		t.Fatal(err)
	}
	raw := store.Query{Measurement: "gpu_util", Start: start, End: start.Add(time.Hour)}
	tenMin := raw
	tenMin.Step, tenMin.Aggregate = 10*time.Minute, store.Max
	tests := []struct {
		q         store.Query
		maxPoints int
		refused   bool
	}{
		{raw, 120, false},
		{raw, 119, true},
		{tenMin, 12, false}, // 6 windows x 2 series
		{tenMin, 11, true},
	}
	for _, tc := range tests {
		mux := http.NewServeMux()
		mux.Handle(remote.Path, remote.NewHandler(backing, remote.HandlerOptions{Limits: remote.Limits{MaxPoints: tc.maxPoints}}))
		srv := httptest.NewServer(mux)
		client, _ := remote.New(srv.URL, remote.Options{})
		got, err := client.Query(context.Background(), tc.q)
		srv.Close()
		if refused := errors.Is(err, remote.ErrLimit); refused != tc.refused {
			t.Errorf("step %s, max_points %d: %d series, err %v; want refused %v", tc.q.Step, tc.maxPoints, len(got), err, tc.refused)
		}
	}
}

// A long range with little data is answered: ten years hourly over two
// days of 10 s points (96 samples) passes a limit of 5,000, which the
// first bound (one count over the whole range: 34,560 points) alone would
// refuse; the second count, in coarse windows, bounds it at 3,508.
func TestPointLimitLongRangeLittleData(t *testing.T) {
	backing, err := embedded.Open(filepath.Join(t.TempDir(), "s.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer backing.Close()
	end := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var points []store.Point
	for gpu := range 2 {
		for t0 := end.Add(-48 * time.Hour); t0.Before(end); t0 = t0.Add(10 * time.Second) {
			points = append(points, store.Point{Measurement: "gpu_util", Tags: map[string]string{"gpu": fmt.Sprint(gpu)}, Value: 1, Time: t0})
		}
	}
	if err := backing.Write(context.Background(), points); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(remote.Path, remote.NewHandler(backing, remote.HandlerOptions{Limits: remote.Limits{MaxPoints: 5000}}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client, _ := remote.New(srv.URL, remote.Options{})
	q := store.Query{Measurement: "gpu_util", Start: end.AddDate(-10, 0, 0), End: end, Step: time.Hour, Aggregate: store.Mean}
	got, err := client.Query(context.Background(), q)
	if err != nil || len(got) != 2 || len(got[0].Samples) != 48 {
		t.Fatalf("ten years hourly over two days of points = %d series, %v; want 2 of 48 samples", len(got), err)
	}
	q.Step = time.Minute // 5.3 M windows: refused before any count
	if _, err := client.Query(context.Background(), q); !errors.Is(err, remote.ErrLimit) || !strings.Contains(err.Error(), "max_windows") {
		t.Errorf("ten years at 1 min = %v, want the max_windows limit", err)
	}
}
