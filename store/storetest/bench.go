package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

// BenchWrite measures s.Write with batches of batchSize points spread over
// series series (a collector cycle writes one point per series), and
// reports points/s. Each iteration writes the next batchSize/series time
// steps, 10 s apart, so the store grows as it would in production.
func BenchWrite(b *testing.B, s store.Store, series, batchSize int) {
	ctx := context.Background()
	points := make([]store.Point, batchSize)
	for i := range points {
		points[i] = store.Point{
			Tags: map[string]string{
				"pool": fmt.Sprintf("pool%d", i%series%4),
				"host": fmt.Sprintf("host%03d", i%series/8),
				"gpu":  fmt.Sprint(i % series % 8),
			},
			Value: float64(i % 100),
		}
	}
	steps := batchSize / series
	// A fresh measurement per run: rewriting the points of an earlier run
	// would measure InfluxDB's overwrite path, not plain ingestion.
	m := fmt.Sprintf("bench_write_%x", rand.Uint32())
	for i := range points {
		points[i].Measurement = m
	}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	// Create the series first: a collector's steady state writes to series
	// that exist, and creating them (indexing) is a one-off cost.
	for i := range points {
		points[i].Time = start.Add(-time.Hour)
	}
	if err := s.Write(ctx, points); err != nil {
		b.Fatal(err)
	}
	written := 0
	b.ResetTimer()
	for iter := 0; b.Loop(); iter++ {
		for i := range points {
			points[i].Time = start.Add(time.Duration(iter*steps+i/series) * 10 * time.Second)
		}
		if err := s.Write(ctx, points); err != nil {
			b.Fatal(err)
		}
		written += len(points)
	}
	b.ReportMetric(float64(written)/b.Elapsed().Seconds(), "points/s")
}
