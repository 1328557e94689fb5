package remote_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

// BenchmarkQuery compares one query answered by the embedded store directly
// with the same query through the HTTP API (loopback, real server), over
// four weeks of one-minute demand for 8 series of one pool: the hourly
// aggregate the forecaster reads, and the raw points.
//
//	go test -run='^$' -bench=BenchmarkQuery -benchtime=20x ./store/remote
func BenchmarkQuery(b *testing.B) {
	backing, srv, client := openBacked(b)
	defer srv.Close()
	defer backing.Close()
	ctx := context.Background()
	const series, weeks = 8, 4
	end := time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)
	start := end.Add(-weeks * 7 * 24 * time.Hour)
	var points []store.Point
	for s := range series {
		tags := map[string]string{"pool": "inference", "host": fmt.Sprintf("h%d", s)}
		for t := start; t.Before(end); t = t.Add(time.Minute) {
			points = append(points, store.Point{Measurement: "requests_rps", Tags: tags, Value: float64(t.Minute()) + 0.25, Time: t})
		}
	}
	if err := backing.Write(ctx, points); err != nil {
		b.Fatal(err)
	}
	queries := []struct {
		name string
		q    store.Query
	}{
		{"hourly-mean", store.Query{Measurement: "requests_rps", Match: map[string]string{"pool": "inference"},
			Start: start, End: end, Step: time.Hour, Aggregate: store.Mean}},
		{"raw", store.Query{Measurement: "requests_rps", Match: map[string]string{"pool": "inference"}, Start: start, End: end}},
	}
	for _, qc := range queries {
		for _, via := range []struct {
			name string
			q    store.Querier
		}{{"direct", backing}, {"http", client}} {
			b.Run(qc.name+"/"+via.name, func(b *testing.B) {
				samples := 0
				for b.Loop() {
					got, err := via.q.Query(ctx, qc.q)
					if err != nil {
						b.Fatal(err)
					}
					samples = 0
					for _, s := range got {
						samples += len(s.Samples)
					}
				}
				b.ReportMetric(float64(samples), "samples/op")
			})
		}
	}
}
