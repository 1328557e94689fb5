package store

import (
	"math"
	"testing"
	"time"
)

func TestSumOnGrid(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return start.Add(time.Duration(min) * time.Minute) }
	series := func(samples ...Sample) Series { return Series{Samples: samples} }
	nan := math.NaN()
	tests := []struct {
		name   string
		series []Series
		n      int
		want   []float64
	}{
		{"no series: every step missing", nil, 3, []float64{nan, nan, nan}},
		{"tag sets are summed per step", []Series{
			series(Sample{at(0), 1}, Sample{at(10), 2}),
			series(Sample{at(0), 3}),
		}, 3, []float64{4, 2, nan}},
		{"a sample inside a step counts for that step", []Series{series(Sample{at(19), 5})}, 3, []float64{nan, 5, nan}},
		{"samples before start or past the grid are left out", []Series{
			series(Sample{at(-1), 7}, Sample{at(30), 7}, Sample{at(20), 1}),
		}, 3, []float64{nan, nan, 1}},
		{"a NaN sample is missing, not zero", []Series{
			series(Sample{at(0), nan}),
			series(Sample{at(10), nan}, Sample{at(10), 2}),
		}, 2, []float64{nan, 2}},
		{"zero is a value", []Series{series(Sample{at(0), 0})}, 1, []float64{0}},
		{"an empty grid", []Series{series(Sample{at(0), 1})}, 0, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SumOnGrid(tt.series, start, 10*time.Minute, tt.n)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d steps %v, want %v", len(got), got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] && !(math.IsNaN(got[i]) && math.IsNaN(tt.want[i])) {
					t.Errorf("step %d = %v, want %v (all %v)", i, got[i], tt.want[i], got)
				}
			}
		})
	}
}
