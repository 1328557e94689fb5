package embedded

import (
	"time"

	"github.com/prewarm/prewarm/store"
)

// aggregator folds time-ordered points into epoch-aligned windows of step,
// like InfluxDB's aggregateWindow with createEmpty: false.
type aggregator struct {
	fn   store.Aggregate
	step time.Duration

	out    []store.Sample
	open   bool
	window time.Time // start of the current window
	n      int
	acc    float64 // sum, max, min or last, by fn
}

func newAggregator(fn store.Aggregate, step time.Duration) *aggregator {
	return &aggregator{fn: fn, step: step}
}

// add folds one point; points must come in time order.
func (a *aggregator) add(t time.Time, v float64) {
	w := store.WindowStart(t, a.step)
	if !a.open || !w.Equal(a.window) {
		a.flush()
		a.open, a.window, a.n = true, w, 0
	}
	if a.n == 0 {
		a.acc = v
	} else {
		switch a.fn {
		case store.Sum, store.Mean:
			a.acc += v
		case store.Max:
			a.acc = max(a.acc, v)
		case store.Min:
			a.acc = min(a.acc, v)
		case store.Last:
			a.acc = v
		}
	}
	a.n++
}

func (a *aggregator) flush() {
	if !a.open || a.n == 0 {
		return
	}
	v := a.acc
	switch a.fn {
	case store.Mean:
		v = a.acc / float64(a.n)
	case store.Count:
		v = float64(a.n)
	}
	a.out = append(a.out, store.Sample{Time: a.window, Value: v})
}

// samples returns one sample per non-empty window, in time order.
func (a *aggregator) samples() []store.Sample {
	a.flush()
	a.open = false
	return a.out
}
