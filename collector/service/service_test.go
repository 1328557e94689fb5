package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/promscrape"
	"github.com/prewarm/prewarm/store"
)

// pages serves the testdata files in turn, one per request.
func pages(t *testing.T, files ...string) *httptest.Server {
	t.Helper()
	var bodies [][]byte
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		w.Write(bodies[min(i, len(bodies)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv
}

func value(points []store.Point, measurement string) (float64, bool) {
	for _, p := range points {
		if p.Measurement == measurement {
			return p.Value, true
		}
	}
	return 0, false
}

// Expected values are worked by hand from the testdata pages (10 s apart):
//
//	job=api   requests: t0 1000+10, t1 1500+20 -> 510/10 s = 51/s; t2 restarted at 30+0 -> 30/10 s = 3/s
//	job=api   latency bucket increase t0->t1: [200 300 450 500 510 510] (le .05 .1 .25 .5 1 +Inf)
//	          P99 rank 0.99*510 = 504.9 falls in (0.5, 1]: 0.5 + 0.5*(504.9-500)/10 = 0.745
//	          t1->t2 reset, buckets [10 20 28 30 30 30]: rank 29.7 in (0.25, 0.5]: 0.25 + 0.25*(1.7/2) = 0.4625
//	all jobs  requests t0->t1: 510 + 4000 = 451/s; buckets [400 660 810 860 870 870]:
//	          rank 861.3 in (0.5, 1]: 0.5 + 0.5*(1.3/10) = 0.565
//
// the same arithmetic as PromQL's rate() and histogram_quantile().
func TestServiceReplay(t *testing.T) {
	type step struct {
		rate, p99, queue float64 // NaN: no point expected
	}
	nan := math.NaN()
	tests := []struct {
		name  string
		match map[string]string
		steps []step
	}{
		{"job=api", map[string]string{"job": "api"}, []step{{nan, nan, 3}, {51, 0.745, 7}, {3, 0.4625, 0}}},
		{"all series", nil, []step{{nan, nan, 3}, {451, 0.565, 7}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := pages(t, "api-t0.prom", "api-t1.prom", "api-t2-restarted.prom")
			now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
			src, err := New(Config{
				Name: "api", URL: srv.URL + "/metrics",
				RequestsCounter: "http_requests_total", QueueGauge: "queue_length",
				LatencyHistogram: "http_request_duration_seconds", Match: tc.match,
				Now: func() time.Time { return now },
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.steps {
				points, err := src.Gather(context.Background())
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				check := func(measurement string, want float64) {
					got, ok := value(points, measurement)
					switch {
					case math.IsNaN(want) && ok:
						t.Errorf("step %d: %s = %v, want no point", i, measurement, got)
					case !math.IsNaN(want) && !ok:
						t.Errorf("step %d: no %s, want %v", i, measurement, want)
					case ok && math.Abs(got-want) > 1e-9:
						t.Errorf("step %d: %s = %v, want %v", i, measurement, got, want)
					}
				}
				check(store.ServiceRequestRate, want.rate)
				check(store.ServiceLatencySeconds, want.p99)
				check(store.ServiceQueueLength, want.queue)
				for _, p := range points {
					if p.Tags[store.TagService] != "api" {
						t.Errorf("point %s lacks service=api: %v", p.Measurement, p.Tags)
					}
				}
				now = now.Add(10 * time.Second)
			}
		})
	}
}

func TestServiceErrors(t *testing.T) {
	srv := pages(t, "api-t0.prom")
	tests := []struct {
		name      string
		cfg       Config
		newErr    bool
		malformed bool
	}{
		{"no name", Config{URL: srv.URL, QueueGauge: "q"}, true, false},
		{"bad url", Config{Name: "a", URL: "localhost/metrics", QueueGauge: "q"}, true, false},
		{"no metrics", Config{Name: "a", URL: srv.URL}, true, false},
		{"bad quantile", Config{Name: "a", URL: srv.URL, QueueGauge: "q", Quantile: 1.5}, true, false},
		{"missing metric", Config{Name: "a", URL: srv.URL, QueueGauge: "no_such_metric"}, false, true},
		// Default names nobody chose: their absence loses the signal, no more.
		{"optional queue and latency absent", Config{Name: "a", URL: srv.URL, RequestsCounter: "http_requests_total",
			QueueGauge: "no_such_gauge", LatencyHistogram: "no_such_histogram", OptionalSignals: true}, false, false},
		// Optional is about absence: a metric of the wrong type still is an error.
		{"optional but of the wrong type", Config{Name: "a", URL: srv.URL, RequestsCounter: "http_requests_total",
			LatencyHistogram: "queue_length", OptionalSignals: true}, false, true},
		// The requests counter is never optional.
		{"optional signals, counter absent", Config{Name: "a", URL: srv.URL, RequestsCounter: "no_such_counter",
			QueueGauge: "queue_length", OptionalSignals: true}, false, true},
		{"wrong type", Config{Name: "a", URL: srv.URL, LatencyHistogram: "queue_length"}, false, true},
		{"counter named as gauge", Config{Name: "a", URL: srv.URL, QueueGauge: "http_requests_total"}, false, true},
		// A match selecting nothing must not read as zero requests per second.
		{"match selects nothing", Config{Name: "a", URL: srv.URL, RequestsCounter: "http_requests_total",
			Match: map[string]string{"job": "no-such-job"}}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := New(tc.cfg)
			if tc.newErr {
				if err == nil {
					t.Fatal("New: want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = src.Gather(context.Background())
			if tc.malformed != errors.Is(err, collector.ErrMalformed) {
				t.Fatalf("Gather err = %v, malformed want %v", err, tc.malformed)
			}
		})
	}
}

// A scrape time that does not advance (clock stepped back) yields no rate.
func TestServiceClockBackwards(t *testing.T) {
	srv := pages(t, "api-t0.prom", "api-t1.prom")
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	src, _ := New(Config{Name: "api", URL: srv.URL, RequestsCounter: "http_requests_total",
		Now: func() time.Time { return now }})
	if _, err := src.Gather(context.Background()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(-time.Minute)
	points, err := src.Gather(context.Background())
	if !errors.Is(err, collector.ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
	if _, ok := value(points, store.ServiceRequestRate); ok {
		t.Fatal("rate computed across a backwards clock step")
	}
}

// A scrape that lacks the counter must not make the next rate divide two
// steps' increase by one step: the rate restarts after the gap.
func TestServiceRateAfterMissingCounter(t *testing.T) {
	page := func(requests string) promscrape.Families {
		fams, err := promscrape.Parse(strings.NewReader(requests))
		if err != nil {
			t.Fatal(err)
		}
		return fams
	}
	src, err := New(Config{Name: "api", URL: "http://127.0.0.1/metrics", RequestsCounter: "req_total"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	steps := []struct {
		page string
		rate float64 // NaN: no rate expected
	}{
		{"# TYPE req_total counter\nreq_total 100\n", math.NaN()},
		{"# TYPE other counter\nother 1\n", math.NaN()}, // counter missing
		{"# TYPE req_total counter\nreq_total 300\n", math.NaN()},
		{"# TYPE req_total counter\nreq_total 400\n", 10}, // 100 in 10 s
	}
	for i, s := range steps {
		points, _ := src.Observe(t0.Add(time.Duration(i)*10*time.Second), page(s.page))
		got, ok := value(points, store.ServiceRequestRate)
		if math.IsNaN(s.rate) && ok || !math.IsNaN(s.rate) && (!ok || math.Abs(got-s.rate) > 1e-9) {
			t.Errorf("step %d: rate %v (present %v), want %v", i, got, ok, s.rate)
		}
	}
}

// bucketIncrease treats a series as reset when any bucket fell, not only
// its total, and skips a series whose bucket bounds changed.
func TestBucketIncrease(t *testing.T) {
	inf := math.Inf(1)
	b := func(bounds []float64, counts ...float64) []promscrape.Bucket {
		out := make([]promscrape.Bucket, len(counts))
		for i := range counts {
			out[i] = promscrape.Bucket{UpperBound: bounds[i], Count: counts[i]}
		}
		return out
	}
	le := []float64{0.1, 1, inf}
	other := []float64{0.2, 1, inf}
	tests := []struct {
		name      string
		prev, cur []promscrape.Bucket
		want      []float64
	}{
		{"increase", b(le, 10, 20, 30), b(le, 15, 30, 40), []float64{5, 10, 10}},
		// Restarted and already past the old total, but the first bucket fell.
		{"reset seen in a low bucket", b(le, 10, 20, 30), b(le, 2, 25, 40), []float64{2, 25, 40}},
		{"bounds changed", b(le, 10, 20, 30), b(other, 15, 30, 40), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := bucketIncrease(map[model.Fingerprint][]promscrape.Bucket{1: tc.prev},
				map[model.Fingerprint][]promscrape.Bucket{1: tc.cur})
			if !ok {
				t.Fatal("ok = false with a previous scrape")
			}
			var counts []float64
			for _, x := range got {
				counts = append(counts, x.Count)
			}
			if fmt.Sprint(counts) != fmt.Sprint(tc.want) {
				t.Errorf("increase %v, want %v", counts, tc.want)
			}
		})
	}
}

// Values no rate can come from (found by FuzzObserve: a negative counter
// made a negative request rate) refuse the signal for that scrape as
// malformed, instead of writing a negative or NaN rate, queue or latency.
func TestImpossibleValuesAreMalformed(t *testing.T) {
	const hist = "# TYPE http_request_duration_seconds histogram\n"
	tests := []struct {
		name, page string
	}{
		{"negative counter", "# TYPE http_requests_total counter\nhttp_requests_total -5\n"},
		{"NaN counter", "# TYPE http_requests_total counter\nhttp_requests_total NaN\n"},
		{"negative queue", "# TYPE queue_length gauge\nqueue_length -1\n"},
		{"NaN bucket", hist + "http_request_duration_seconds_bucket{le=\"1\"} NaN\nhttp_request_duration_seconds_bucket{le=\"+Inf\"} 3\n"},
		{"negative bound", hist + "http_request_duration_seconds_bucket{le=\"-1\"} 1\nhttp_request_duration_seconds_bucket{le=\"+Inf\"} 3\n"},
	}
	good := "# TYPE http_requests_total counter\nhttp_requests_total 10\n# TYPE queue_length gauge\nqueue_length 2\n" +
		hist + "http_request_duration_seconds_bucket{le=\"1\"} 1\nhttp_request_duration_seconds_bucket{le=\"+Inf\"} 1\n"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := New(Config{Name: "api", URL: "http://127.0.0.1:1/metrics", RequestsCounter: "http_requests_total",
				QueueGauge: "queue_length", LatencyHistogram: "http_request_duration_seconds"})
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
			fams, err := promscrape.Parse(strings.NewReader(good))
			if err != nil {
				t.Fatal(err)
			}
			src.Observe(at, fams)
			fams, err = promscrape.Parse(strings.NewReader(tc.page))
			if err != nil {
				t.Fatalf("the page does not parse: %v", err)
			}
			points, err := src.Observe(at.Add(10*time.Second), fams)
			if !errors.Is(err, collector.ErrMalformed) || !strings.Contains(err.Error(), "0 or more") {
				t.Errorf("err = %v, want ErrMalformed saying values must be 0 or more", err)
			}
			for _, p := range points {
				if !(p.Value >= 0) {
					t.Errorf("derived %s = %v", p.Measurement, p.Value)
				}
			}
		})
	}
}
