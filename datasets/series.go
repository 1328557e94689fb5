package datasets

import (
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/store"
)

// Series is a regularly spaced time series: Values[i] is the value of the
// interval that starts at Start + i·Step. NaN marks a step with no data (a gap
// in the recorded trace), never a zero.
//
// The unit of Values is whatever the source held: a rate (requests/s, % GPU
// utilisation) or a count per step (requests per hour). [Series.PerSecond]
// turns counts into rates.
type Series struct {
	// Name says where the series came from: the file's base name and the
	// value column ("nyc_taxi.csv:value"), or "synthetic".
	Name string
	// Start is the time of Values[0].
	Start time.Time
	// Step is the spacing between consecutive values; always > 0 in a series
	// returned by this package.
	Step time.Duration
	// Values holds one value per step; NaN = missing.
	Values []float64
	// Index is true when the file's timestamps were a plain integer index
	// (0, 1, 2, ...) rather than clock times: row k is then placed at the
	// Unix epoch + k·unit, the unit being CSVOptions.Step (default 1 min),
	// so the times are positions, not dates.
	Index bool
}

// Time returns the start time of the i-th value: Start + i·Step.
func (s Series) Time(i int) time.Time {
	return s.Start.Add(time.Duration(i) * s.Step)
}

// Len returns the number of steps in the series.
func (s Series) Len() int { return len(s.Values) }

// End returns the end of the last interval (Start + Len·Step): the time just
// after the series' data.
func (s Series) End() time.Time { return s.Time(len(s.Values)) }

// Missing returns how many values are NaN.
func (s Series) Missing() int {
	n := 0
	for _, v := range s.Values {
		if math.IsNaN(v) {
			n++
		}
	}
	return n
}

// PerSecond returns a copy of s whose values, taken as counts per step, are
// divided by the step in seconds: requests per hour become requests/s.
func (s Series) PerSecond() Series {
	out := s
	out.Values = make([]float64, len(s.Values))
	sec := s.Step.Seconds()
	for i, v := range s.Values {
		out.Values[i] = v / sec
	}
	return out
}

// Aggregates accepted by [Resample] and the Aggregate options.
const (
	AggregateMean = "mean"
	AggregateSum  = "sum"
	AggregateMax  = "max"
)

// aggregator folds the values that fall into one step into one value. It
// ignores NaN inputs; a step with no non-NaN input yields NaN.
type aggregator struct {
	sum   float64
	max   float64
	count int
}

func validAggregate(agg string) error {
	switch agg {
	case AggregateMean, AggregateSum, AggregateMax:
		return nil
	}
	return fmt.Errorf("unknown aggregate %q: want %s, %s or %s", agg, AggregateMean, AggregateSum, AggregateMax)
}

func (a *aggregator) add(v float64) {
	if math.IsNaN(v) {
		return
	}
	if a.count == 0 || v > a.max {
		a.max = v
	}
	a.sum += v
	a.count++
}

// value returns the aggregate (mean, sum or max) of the values added.
func (a *aggregator) value(kind string) float64 {
	if a.count == 0 {
		return math.NaN()
	}
	switch kind {
	case AggregateSum:
		return a.sum
	case AggregateMax:
		return a.max
	default:
		return a.sum / float64(a.count)
	}
}

// Resample returns s on a coarser step: each output value aggregates (mean,
// sum or max) the input values whose start time falls in
// [out.Start + k·step, out.Start + (k+1)·step). The output starts at the
// window holding s.Start on the store's grid (store.WindowStart: multiples
// of step from the Unix epoch, so hourly buckets begin on the hour, in UTC,
// and a series resampled here lines up with what the store aggregates). NaN inputs are ignored; a bucket with no data is NaN.
//
// Use "sum" for counts per step (requests per row) and "mean" for rates. A
// step that is not a multiple of s.Step is allowed: each input sample is
// assigned whole to the bucket its start falls in. A step finer than s.Step is
// an error: resampling never invents data.
func Resample(s Series, step time.Duration, agg string) (Series, error) {
	if err := validAggregate(agg); err != nil {
		return Series{}, err
	}
	if step <= 0 {
		return Series{}, fmt.Errorf("resample %s: step %v must be positive", s.Name, step)
	}
	if s.Step <= 0 {
		return Series{}, fmt.Errorf("resample %s: series step %v must be positive", s.Name, s.Step)
	}
	if step < s.Step {
		return Series{}, fmt.Errorf("resample %s: step %v is finer than the series' step %v; upsampling is not supported", s.Name, step, s.Step)
	}
	out := Series{Name: s.Name, Start: store.WindowStart(s.Start, step), Step: step, Index: s.Index}
	if len(s.Values) == 0 {
		return out, nil
	}
	n := int(s.Time(len(s.Values)-1).Sub(out.Start)/step) + 1
	aggs := make([]aggregator, n)
	for i, v := range s.Values {
		k := int(s.Time(i).Sub(out.Start) / step)
		aggs[k].add(v)
	}
	out.Values = make([]float64, n)
	for k := range aggs {
		out.Values[k] = aggs[k].value(agg)
	}
	return out, nil
}
