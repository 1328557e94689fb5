package embedded

import (
	"time"

	"github.com/prewarm/prewarm/store"
)

// aggregator folds time-ordered points into epoch-aligned windows of step,
// like InfluxDB's aggregateWindow with createEmpty: false. Each window is
// folded by store.Fold, the one definition of the aggregates.
type aggregator struct {
	step time.Duration

	out    []store.Sample
	open   bool
	window time.Time // start of the current window
	fold   store.Fold
}

func newAggregator(fn store.Aggregate, step time.Duration) *aggregator {
	return &aggregator{fold: store.Fold{Agg: fn}, step: step}
}

// add folds one point; points must come in time order.
func (a *aggregator) add(t time.Time, v float64) {
	w := store.WindowStart(t, a.step)
	if !a.open || !w.Equal(a.window) {
		a.flush()
		a.open, a.window = true, w
		a.fold.Reset()
	}
	a.fold.Add(v)
}

func (a *aggregator) flush() {
	if !a.open {
		return
	}
	if v, ok := a.fold.Value(); ok {
		a.out = append(a.out, store.Sample{Time: a.window, Value: v})
	}
}

// samples returns one sample per non-empty window, in time order.
func (a *aggregator) samples() []store.Sample {
	a.flush()
	a.open = false
	return a.out
}
