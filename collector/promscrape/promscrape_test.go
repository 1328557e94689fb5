package promscrape

import (
	"math"
	"testing"
)

// Reference values follow PromQL's bucketQuantile (promql/quantile.go):
// linear interpolation within the bucket, lower bound 0 for the first,
// the highest finite bound when the rank lands in +Inf.
func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name    string
		q       float64
		buckets []Bucket
		want    float64
	}{
		{"middle of a bucket", 0.5, []Bucket{{1, 10}, {2, 30}, {inf, 30}}, 1.25},              // rank 15: 1 + 1*(5/20)
		{"first bucket from 0", 0.5, []Bucket{{0.1, 100}, {inf, 100}}, 0.05},                  // rank 50 of 100 in (0, 0.1]
		{"rank in +Inf", 0.99, []Bucket{{1, 10}, {2, 20}, {inf, 100}}, 2},                     // highest finite bound
		{"exact bucket edge", 0.5, []Bucket{{1, 5}, {2, 10}, {inf, 10}}, 1},                   // rank 5 == count of le=1
		{"non-monotonic repaired", 0.5, []Bucket{{1, 10}, {2, 9}, {inf, 20}}, 1},              // le=2 raised to 10; rank 10 in (0, 1]
		{"no observations", 0.99, []Bucket{{1, 0}, {inf, 0}}, math.NaN()},                     // nothing to report
		{"single bucket", 0.5, []Bucket{{inf, 3}}, math.NaN()},                                // < 2 buckets
		{"negative first bound", 0.5, []Bucket{{-1, 10}, {inf, 10}}, -1},                      // as PromQL
		{"p99 typical", 0.99, []Bucket{{0.05, 200}, {0.5, 500}, {1, 510}, {inf, 510}}, 0.745}, // 0.5+0.5*4.9/10
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Quantile(tc.q, tc.buckets)
			if math.IsNaN(tc.want) {
				if !math.IsNaN(got) {
					t.Fatalf("got %v, want NaN", got)
				}
				return
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
