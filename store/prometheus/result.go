package prometheus

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/store"
)

// accumulator joins the answers of a plan's requests into store.Series,
// one per label set. Requests come in time order and cover disjoint
// times, so appending keeps each series' samples sorted.
type accumulator struct {
	measurement string
	byMetric    map[string]*entry
}

type entry struct {
	metric  model.Metric
	samples []store.Sample
}

func newAccumulator(measurement string) *accumulator {
	return &accumulator{measurement: measurement, byMetric: map[string]*entry{}}
}

// add folds one answer in, as r says to read it.
func (a *accumulator) add(v model.Value, r request) error {
	switch v := v.(type) {
	case model.Matrix:
		for _, ss := range v {
			if len(ss.Histograms) > 0 {
				return fmt.Errorf("the answer holds native histograms; select a float series (e.g. histogram_quantile or rate of a _count)")
			}
			for _, sp := range ss.Values {
				a.put(ss.Metric, int64(sp.Timestamp), float64(sp.Value), r)
			}
		}
	case model.Vector:
		for _, s := range v {
			if s.Histogram != nil {
				return fmt.Errorf("the answer holds native histograms; select a float series (e.g. histogram_quantile or rate of a _count)")
			}
			a.put(s.Metric, int64(s.Timestamp), float64(s.Value), r)
		}
	case *model.Scalar:
		a.put(model.Metric{}, int64(v.Timestamp), float64(v.Value), r)
	case nil:
	default:
		return fmt.Errorf("the answer is a %s; want an instant vector expression", v.Type())
	}
	return nil
}

func (a *accumulator) put(m model.Metric, t int64, v float64, r request) {
	if r.keep && (t < r.keepFrom || t >= r.keepTo) {
		return
	}
	t -= r.shift
	if r.asWindow {
		// A raw read standing for a window: named like the aggregated
		// answers of the other windows, which PromQL gives no __name__.
		t = r.window
		if r.count {
			v = 1
		}
		if _, named := m[model.MetricNameLabel]; named {
			m = m.Clone()
			delete(m, model.MetricNameLabel)
		}
	}
	key := m.String()
	e := a.byMetric[key]
	if e == nil {
		e = &entry{metric: m}
		a.byMetric[key] = e
	}
	e.samples = append(e.samples, store.Sample{Time: msTime(t), Value: v})
}

// series returns the result in store order: sorted by the canonical tags,
// then by measurement.
func (a *accumulator) series() []store.Series {
	out := make([]store.Series, 0, len(a.byMetric))
	for _, e := range a.byMetric {
		if len(e.samples) == 0 {
			continue
		}
		ser := store.Series{Measurement: a.measurement, Samples: e.samples}
		if ser.Measurement == "" {
			ser.Measurement = string(e.metric[model.MetricNameLabel])
		}
		for k, v := range e.metric {
			if k == model.MetricNameLabel || v == "" {
				continue
			}
			if ser.Tags == nil {
				ser.Tags = make(map[string]string, len(e.metric))
			}
			ser.Tags[string(k)] = string(v)
		}
		out = append(out, ser)
	}
	slices.SortFunc(out, func(x, y store.Series) int {
		if c := strings.Compare(store.CanonicalTags(x.Tags), store.CanonicalTags(y.Tags)); c != 0 {
			return c
		}
		return strings.Compare(x.Measurement, y.Measurement)
	})
	return out
}
