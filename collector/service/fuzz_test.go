package service

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prewarm/prewarm/collector/promscrape"
)

// FuzzObserve feeds two arbitrary pages, taken dt apart, through the
// parser and the rate and histogram logic. It must never panic, and every
// point it derives is one a store keeps and the forecaster can use: a
// finite value of 0 or more, a request rate no larger than the counters'
// total over dt, a latency quantile within the histogram's finite bounds.
//
//	go test -run='^$' -fuzz=FuzzObserve -fuzztime=20s ./collector/service
func FuzzObserve(f *testing.F) {
	var seeds [][]byte
	for _, name := range []string{"api-t0.prom", "api-t1.prom", "api-t2-restarted.prom"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, raw)
	}
	f.Add(seeds[0], seeds[1], int64(10*time.Second))
	f.Add(seeds[1], seeds[2], int64(10*time.Second))
	f.Add(seeds[0], seeds[0], int64(time.Millisecond))
	f.Add([]byte("# TYPE http_requests_total counter\nhttp_requests_total 10\n"),
		[]byte("# TYPE http_requests_total counter\nhttp_requests_total -5\n"), int64(time.Second))
	f.Add([]byte("# TYPE http_request_duration_seconds histogram\nhttp_request_duration_seconds_bucket{le=\"1\"} 1\nhttp_request_duration_seconds_bucket{le=\"+Inf\"} 1\n"),
		[]byte("# TYPE http_request_duration_seconds histogram\nhttp_request_duration_seconds_bucket{le=\"1\"} NaN\nhttp_request_duration_seconds_bucket{le=\"+Inf\"} 3\n"), int64(time.Second))
	f.Fuzz(func(t *testing.T, page0, page1 []byte, dt int64) {
		if dt <= 0 || dt > int64(24*time.Hour) {
			return
		}
		src, err := New(Config{Name: "api", URL: "http://127.0.0.1:1/metrics", RequestsCounter: "http_requests_total",
			QueueGauge: "queue_length", LatencyHistogram: "http_request_duration_seconds"})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
		for i, page := range [][]byte{page0, page1} {
			fams, err := promscrape.Parse(bytes.NewReader(page))
			if err != nil {
				continue
			}
			points, _ := src.Observe(at.Add(time.Duration(i)*time.Duration(dt)), fams)
			for _, p := range points {
				if err := p.Validate(); err != nil {
					t.Fatalf("page %d: point %+v: %v", i, p, err)
				}
				if !(p.Value >= 0) || math.IsInf(p.Value, 0) {
					t.Fatalf("page %d: %s = %v, want a finite value >= 0", i, p.Measurement, p.Value)
				}
			}
		}
	})
}
