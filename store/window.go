package store

import "time"

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
