package prometheus_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	client "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/prometheus"
	"github.com/prewarm/prewarm/store/prometheus/promtest"
)

// base is a Monday at midnight UTC (as in store/storetest).
var base = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

func at(offset time.Duration) time.Time { return base.Add(offset) }

// backfill starts a Prometheus holding points and returns a Store on it
// whose requests are counted in *requests.
func backfill(t *testing.T, points []store.Point, cfg prometheus.Config) (*prometheus.Store, *atomic.Int64) {
	s, requests, _ := backfillServer(t, points, cfg)
	return s, requests
}

// backfillServer is backfill that also returns the server's URL.
func backfillServer(t *testing.T, points []store.Point, cfg prometheus.Config) (*prometheus.Store, *atomic.Int64, string) {
	t.Helper()
	data := promtest.DataDir(t)
	promtest.Backfill(t, data, points)
	srv := promtest.Start(t, data, time.Minute)
	var requests atomic.Int64
	cfg.URL = srv.URL
	cfg.Client = &http.Client{Transport: countingTransport{&requests}}
	s, err := prometheus.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, &requests, srv.URL
}

type countingTransport struct{ n *atomic.Int64 }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func query(t *testing.T, s store.Querier, q store.Query) []store.Series {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := s.Query(ctx, q)
	if err != nil {
		t.Fatalf("Query(%+v): %v", q, err)
	}
	return got
}

// samplesString renders samples as "offset=value ..." relative to base.
func samplesString(ss []store.Series) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%s%s:", s.Measurement, store.CanonicalTags(s.Tags))
		for _, smp := range s.Samples {
			fmt.Fprintf(&b, " %s=%g", smp.Time.Sub(base), smp.Value)
		}
		b.WriteString("; ")
	}
	return b.String()
}

func expect(t *testing.T, what string, got []store.Series, want string) {
	t.Helper()
	if s := samplesString(got); s != want {
		t.Errorf("%s:\n got  %s\n want %s", what, s, want)
	}
}

// TestMillisecondBoundaries puts samples one millisecond either side of
// window edges, where closed and left-open ranges differ, and checks that
// each lands in its own window, raw and aggregated, whole and clipped.
func TestMillisecondBoundaries(t *testing.T) {
	ms := time.Millisecond
	tags := map[string]string{"pool": "a"}
	var points []store.Point
	for i, off := range []time.Duration{-ms, 0, ms, time.Minute - ms, time.Minute, time.Minute + ms} {
		points = append(points, store.Point{Measurement: "edge", Tags: tags, Value: float64(i + 1), Time: at(off)})
	}
	s, _ := backfill(t, points, prometheus.Config{})
	agg := func(from, to time.Duration, a store.Aggregate) store.Query {
		return store.Query{Measurement: "edge", Start: at(from), End: at(to), Step: time.Minute, Aggregate: a}
	}
	tests := []struct {
		name string
		q    store.Query
		want string
	}{
		{"raw, all", store.Query{Measurement: "edge", Start: at(-time.Hour), End: at(time.Hour)},
			`edge{"pool":"a"}: -1ms=1 0s=2 1ms=3 59.999s=4 1m0s=5 1m0.001s=6; `},
		{"raw, one millisecond", store.Query{Measurement: "edge", Start: at(0), End: at(ms)},
			`edge{"pool":"a"}: 0s=2; `},
		{"raw, a nanosecond past a sample", store.Query{Measurement: "edge", Start: at(1), End: at(ms + 1)},
			`edge{"pool":"a"}: 1ms=3; `},
		{"count per window", agg(-time.Hour, time.Hour, store.Count),
			`edge{"pool":"a"}: -1m0s=1 0s=3 1m0s=2; `},
		{"last per window", agg(-time.Hour, time.Hour, store.Last),
			`edge{"pool":"a"}: -1m0s=1 0s=4 1m0s=6; `},
		{"window clipped to its last millisecond", agg(time.Minute-ms, time.Hour, store.Sum),
			`edge{"pool":"a"}: 0s=4 1m0s=11; `},
		{"window clipped to its first millisecond", agg(0, ms, store.Max),
			`edge{"pool":"a"}: 0s=2; `},
		{"window clipped to its first millisecond, count", agg(0, ms, store.Count),
			`edge{"pool":"a"}: 0s=1; `},
		{"window clipped both sides", agg(ms, time.Minute-ms, store.Count),
			`edge{"pool":"a"}: 0s=1; `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { expect(t, tc.name, query(t, s, tc.q), tc.want) })
	}
}

// TestExpr runs PromQL expressions: raw on the Resolution grid, and
// aggregated per window as a subquery on the grid of the largest divisor
// of the step not above Resolution.
func TestExpr(t *testing.T) {
	// Two pools, a sample every 15 s for 4 minutes: value = pool·100 +
	// index, so each evaluation of an expression is known.
	var points []store.Point
	for _, pool := range []int{1, 2} {
		for i := range 16 {
			points = append(points, store.Point{Measurement: "req_rate", Tags: map[string]string{"pool": fmt.Sprint(pool)},
				Value: float64(pool*100 + i), Time: at(time.Duration(i) * 15 * time.Second)})
		}
	}
	s, _ := backfill(t, points, prometheus.Config{})
	tests := []struct {
		name string
		q    store.Query
		want string
	}{
		{
			name: "raw, every 15 s",
			q:    store.Query{Expr: `sum(req_rate)`, Start: at(0), End: at(time.Minute)},
			want: `{}: 0s=300 15s=302 30s=304 45s=306; `,
		},
		{
			name: "measurement names the result; Match is not used",
			q: store.Query{Expr: `req_rate{pool="2"}`, Measurement: "demand", Match: map[string]string{"pool": "1"},
				Start: at(0), End: at(30 * time.Second)},
			want: `demand{"pool":"2"}: 0s=200 15s=201; `,
		},
		{
			// Evaluations at 0, 15, 30, 45 s fold into window 0, 60..105 s
			// into window 1m, and so on.
			name: "max per minute",
			q:    store.Query{Expr: `sum(req_rate)`, Start: at(0), End: at(4 * time.Minute), Step: time.Minute, Aggregate: store.Max},
			want: `{}: 0s=306 1m0s=314 2m0s=322 3m0s=330; `,
		},
		{
			name: "mean per minute by pool",
			q:    store.Query{Expr: `sum by (pool) (req_rate)`, Start: at(0), End: at(2 * time.Minute), Step: time.Minute, Aggregate: store.Mean},
			want: `{"pool":"1"}: 0s=101.5 1m0s=105.5; {"pool":"2"}: 0s=201.5 1m0s=205.5; `,
		},
		{
			// A 20 s step: the grid is 10 s (largest divisor ≤ 15 s), so the
			// window at 0 s sees the evaluations at 0 and 10 s (value of
			// the sample at 0 s both times), the one at 20 s those at 20 and
			// 30 s (samples at 15 and 30 s).
			name: "count per 20 s on a 10 s grid",
			q:    store.Query{Expr: `req_rate{pool="1"}`, Start: at(0), End: at(40 * time.Second), Step: 20 * time.Second, Aggregate: store.Sum},
			want: `{"pool":"1"}: 0s=200 20s=203; `,
		},
		{
			// [20 s, 60 s) holds the evaluations at 30 and 45 s.
			name: "clipped first window",
			q:    store.Query{Expr: `req_rate{pool="1"}`, Start: at(20 * time.Second), End: at(2 * time.Minute), Step: time.Minute, Aggregate: store.Count},
			want: `{"pool":"1"}: 0s=2 1m0s=4; `,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { expect(t, tc.name, query(t, s, tc.q), tc.want) })
	}
}

// TestChunking reads 12,000 one-second windows, more than Prometheus
// answers in one query_range, and gets every one of them, in two requests
// (with the default 11,000 points) or twelve (with 1,000).
func TestChunking(t *testing.T) {
	const n = 12000
	points := make([]store.Point, n)
	for i := range points {
		points[i] = store.Point{Measurement: "long", Tags: map[string]string{"pool": "a"}, Value: float64(i), Time: at(time.Duration(i) * time.Second)}
	}
	s, requests, srvURL := backfillServer(t, points, prometheus.Config{})
	small, smallRequests := backfill(t, points, prometheus.Config{MaxPoints: 1000})

	// One query_range of 12,000 points is refused by Prometheus itself.
	resp, err := http.Get(fmt.Sprintf("%s/api/v1/query_range?query=long&start=%d&end=%d&step=1",
		srvURL, base.Unix(), base.Unix()+n-1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("one query_range of %d points: HTTP %d, want 400 (exceeded maximum resolution)", n, resp.StatusCode)
	}

	for _, tc := range []struct {
		name     string
		s        *prometheus.Store
		requests *atomic.Int64
		want     int64
	}{
		{"default 11000 points", s, requests, 2},
		{"1000 points", small, smallRequests, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			query(t, tc.s, store.Query{Measurement: "long", Start: at(0), End: at(time.Second)}) // the bounds probe
			before := tc.requests.Load()
			got := query(t, tc.s, store.Query{Measurement: "long", Start: at(0), End: at(n * time.Second), Step: time.Second, Aggregate: store.Max})
			if sent := tc.requests.Load() - before; sent != tc.want {
				t.Errorf("%d requests, want %d", sent, tc.want)
			}
			if len(got) != 1 || len(got[0].Samples) != n {
				t.Fatalf("got %s", describe(got))
			}
			for i, smp := range got[0].Samples {
				if !smp.Time.Equal(at(time.Duration(i)*time.Second)) || smp.Value != float64(i) {
					t.Fatalf("sample %d = %v, want (%v, %d)", i, smp, at(time.Duration(i)*time.Second), i)
				}
			}
		})
	}
}

func describe(ss []store.Series) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%s%s(%d samples) ", s.Measurement, store.CanonicalTags(s.Tags), len(s.Samples))
	}
	return b.String()
}

// TestEscapedValues checks that tag values PromQL must escape, or that try
// to widen the selector, each match exactly their own series.
func TestEscapedValues(t *testing.T) {
	values := []string{`plain`, `with space`, `quote"inside`, `back\slash`, `inner\\double`,
		`"} or vector(1) or {__name__="x`, `new` + "\n" + `line`, `日本語`, `dollar${1+1}`}
	var points []store.Point
	for i, v := range values {
		points = append(points, store.Point{Measurement: "esc", Tags: map[string]string{"pool": v}, Value: float64(i), Time: at(time.Duration(i) * time.Second)})
	}
	s, _ := backfill(t, points, prometheus.Config{})
	for i, v := range values {
		got := query(t, s, store.Query{Measurement: "esc", Match: map[string]string{"pool": v}, Start: at(0), End: at(time.Hour)})
		if len(got) != 1 || got[0].Tags["pool"] != v || len(got[0].Samples) != 1 || got[0].Samples[0].Value != float64(i) {
			t.Errorf("pool %q: got %s", v, samplesString(got))
		}
	}
	if got := query(t, s, store.Query{Measurement: "esc", Start: at(0), End: at(time.Hour)}); len(got) != len(values) {
		t.Errorf("all: got %d series, want %d", len(got), len(values))
	}
}

// TestConcurrentQueries runs queries from several goroutines on one Store
// (run with -race).
func TestConcurrentQueries(t *testing.T) {
	var points []store.Point
	for i := range 600 {
		points = append(points, store.Point{Measurement: "conc", Tags: map[string]string{"gpu": fmt.Sprint(i % 4)}, Value: 1, Time: at(time.Duration(i) * time.Second)})
	}
	s, _ := backfill(t, points, prometheus.Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 5 {
				got, err := s.Query(context.Background(), store.Query{Measurement: "conc", Start: at(0), End: at(10 * time.Minute),
					Step: 10 * time.Minute, Aggregate: store.Count})
				if err != nil {
					errs <- err
					return
				}
				if len(got) != 4 || got[0].Samples[0].Value != 150 {
					errs <- fmt.Errorf("got %s", samplesString(got))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSharedServer opens the server scripts/prometheus.sh started through
// a --store spec and reads the `up` series of its scrape of itself.
func TestSharedServer(t *testing.T) {
	url := promtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := prometheus.Open(ctx, prometheus.SpecPrefix+url+"?resolution=1s")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := time.Now()
		got, err := s.Query(ctx, store.Query{Measurement: "up", Match: map[string]string{"job": "prometheus"}, Start: now.Add(-10 * time.Second), End: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 && len(got[0].Samples) > 0 {
			if v := got[0].Samples[len(got[0].Samples)-1].Value; v != 1 {
				t.Errorf("up = %v, want 1", v)
			}
			if got[0].Tags["instance"] == "" {
				t.Errorf("tags %v lack the instance label", got[0].Tags)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no up{job=prometheus} sample within 30 s: %s", samplesString(got))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestScrapeKnownRate is the end-to-end check: a real Prometheus scrapes a
// loopback app that a bounded load loop sends a known request rate, and a
// captured dcgm-exporter page; the Store reads the demand back within 10%
// and the GPU utilisation exactly.
func TestScrapeKnownRate(t *testing.T) {
	if testing.Short() {
		t.Skip("scrapes for about 20 s")
	}
	promtest.Prometheus(t)
	page, err := os.ReadFile(filepath.Join("..", "..", "collector", "dcgm", "testdata", "h100-8gpu-v3.3.5.prom"))
	if err != nil {
		t.Fatal(err)
	}
	reg := client.NewRegistry()
	requests := client.NewCounterVec(client.CounterOpts{Name: "http_requests_total", Help: "Requests served."}, []string{"pool"})
	reg.MustRegister(requests)
	requests.WithLabelValues("sd") // the series exists, at 0, from the first scrape
	mux := http.NewServeMux()
	mux.HandleFunc("/infer", func(w http.ResponseWriter, r *http.Request) { requests.WithLabelValues("sd").Inc() })
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/dcgm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(page)
	})
	app := httptest.NewServer(mux) // 127.0.0.1
	defer app.Close()
	addr := strings.TrimPrefix(app.URL, "http://")
	srv := promtest.Start(t, "", time.Second,
		promtest.Target{Job: "app", Addr: addr}, promtest.Target{Job: "dcgm-exporter", Addr: addr, Path: "/dcgm"})
	s, err := prometheus.Open(context.Background(), prometheus.SpecPrefix+srv.URL+"?resolution=1s")
	if err != nil {
		t.Fatal(err)
	}
	waitScraped(t, s, "app", "dcgm-exporter")

	// The load: 40 requests/s for 16 s, one every 25 ms, bounded in count
	// and time.
	const rate, seconds = 40, 16
	start := time.Now()
	tick := time.NewTicker(time.Second / rate)
	sent := 0
	for sent < rate*seconds && time.Since(start) < (seconds+5)*time.Second {
		<-tick.C
		resp, err := http.Get(app.URL + "/infer")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sent++
	}
	tick.Stop()
	end := time.Now()
	achieved := float64(sent) / end.Sub(start).Seconds()
	time.Sleep(1500 * time.Millisecond) // the last scrape

	// rate over 5 s, from 6 s into the load (the window full) to its end.
	from, to := start.Add(6*time.Second), end.Add(-500*time.Millisecond)
	demand := query(t, s, store.Query{Expr: `sum(rate(http_requests_total{pool="sd"}[5s]))`, Start: from, End: to})
	if len(demand) != 1 || len(demand[0].Samples) < 5 {
		t.Fatalf("demand: %s, want one series with a sample a second", describe(demand))
	}
	sum, worst := 0.0, 0.0
	for _, smp := range demand[0].Samples {
		sum += smp.Value
		worst = math.Max(worst, math.Abs(smp.Value-achieved)/achieved)
	}
	mean := sum / float64(len(demand[0].Samples))
	t.Logf("sent %d requests in %.2f s = %.3f/s (asked %d/s); Prometheus rate over 5 s: mean %.3f/s over %d evaluations, worst %.1f%% off",
		sent, end.Sub(start).Seconds(), achieved, rate, mean, len(demand[0].Samples), 100*worst)
	if math.Abs(mean-achieved)/achieved > 0.10 {
		t.Errorf("demand read through Prometheus: mean %.2f/s, want %.2f/s within 10%%", mean, achieved)
	}
	if math.Abs(achieved-rate)/rate > 0.10 {
		t.Logf("note: the load loop achieved %.2f/s, not %d/s (a busy machine); the check above compares with what it achieved", achieved, rate)
	}

	// Max per 5 s window, as a refit reads the demand history.
	windows := query(t, s, store.Query{Expr: `sum(rate(http_requests_total{pool="sd"}[5s]))`, Start: from, End: to,
		Step: 5 * time.Second, Aggregate: store.Max})
	for _, smp := range windows[0].Samples {
		if !smp.Time.Equal(store.WindowStart(smp.Time, 5*time.Second)) || math.Abs(smp.Value-achieved)/achieved > 0.25 {
			t.Errorf("window %s: max %.2f/s, want on the 5 s grid and near %.2f/s", smp.Time.Format(time.RFC3339Nano), smp.Value, achieved)
		}
	}

	// The dcgm-exporter page: GPU 0 at 97 %, the eight GPUs average 55.5 %.
	util := query(t, s, store.Query{Measurement: "DCGM_FI_DEV_GPU_UTIL", Match: map[string]string{"gpu": "0", "job": "dcgm-exporter"},
		Start: to.Add(-5 * time.Second), End: to})
	if len(util) != 1 || util[0].Samples[0].Value != 97 || util[0].Tags["modelName"] != "NVIDIA H100 80GB HBM3" {
		t.Errorf("DCGM_FI_DEV_GPU_UTIL{gpu=0}: %s %v, want 97 with the page's labels", samplesString(util), util)
	}
	avg := query(t, s, store.Query{Expr: `avg(DCGM_FI_DEV_GPU_UTIL)`, Start: to.Add(-3 * time.Second), End: to})
	if len(avg) != 1 || avg[0].Samples[0].Value != 55.5 {
		t.Errorf("avg(DCGM_FI_DEV_GPU_UTIL) = %s, want 55.5", samplesString(avg))
	}
}

// waitScraped waits (up to 30 s) until every job has been scraped: Prometheus
// hands new targets to its scrapers only every 5 s.
func waitScraped(t *testing.T, s store.Querier, jobs ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, job := range jobs {
		for {
			now := time.Now()
			got := query(t, s, store.Query{Measurement: "up", Match: map[string]string{"job": job}, Start: now.Add(-5 * time.Second), End: now})
			if len(got) == 1 && got[0].Samples[len(got[0].Samples)-1].Value == 1 {
				break
			}
			if now.After(deadline) {
				t.Fatalf("job %s not scraped within 30 s: %s", job, samplesString(got))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
