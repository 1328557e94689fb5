package store

import (
	"math"
	"time"
)

// WindowStart returns the start of the aggregation window of width step
// that holds t. Windows are aligned to the Unix epoch, as InfluxDB's
// aggregateWindow aligns them: [k·step, (k+1)·step) for integer k, also
// before 1970. Every Store reports an aggregated Sample at this time.
func WindowStart(t time.Time, step time.Duration) time.Time {
	tns, s := t.UnixNano(), int64(step)
	w := tns / s * s
	if w > tns {
		w -= s // Go's division truncates towards zero; we want floor.
	}
	return time.Unix(0, w).UTC()
}

// SumOnGrid places the samples of series on n steps of width step from
// start, summing the tag sets per step (a pool's demand over its replicas);
// a step no series has a sample in, and samples outside the grid or NaN,
// leave it NaN (missing, not zero). The service's history reads and the
// report's use it, so both see the same series the same way.
func SumOnGrid(series []Series, start time.Time, step time.Duration, n int) []float64 {
	out := make([]float64, max(n, 0))
	for i := range out {
		out[i] = math.NaN()
	}
	for _, s := range series {
		for _, smp := range s.Samples {
			i := int(smp.Time.Sub(start) / step)
			if smp.Time.Before(start) || i >= len(out) || math.IsNaN(smp.Value) {
				continue
			}
			if math.IsNaN(out[i]) {
				out[i] = 0
			}
			out[i] += smp.Value
		}
	}
	return out
}
