package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Point is one observation of one series.
type Point struct {
	// Measurement names what is measured, e.g. "gpu_util" or "requests".
	Measurement string
	// Tags identify the series within the measurement (pool, host, gpu, ...).
	Tags map[string]string
	// Value is the observation; it must be finite.
	Value float64
	// Time is when it was observed.
	Time time.Time
}

// Aggregate names how points falling into one query step are combined.
type Aggregate string

// The aggregates every Store supports.
const (
	Mean  Aggregate = "mean"
	Sum   Aggregate = "sum"
	Max   Aggregate = "max"
	Min   Aggregate = "min"
	Last  Aggregate = "last"
	Count Aggregate = "count"
)

// Query selects the series of one measurement whose tags include every
// key/value in Match, over [Start, End), aggregated into windows of Step.
type Query struct {
	Measurement string
	Match       map[string]string
	Start, End  time.Time
	// Step is the aggregation window; zero returns raw points.
	Step      time.Duration
	Aggregate Aggregate
	// Expr is a query in the store's own language, e.g. the PromQL
	// sum(rate(http_requests_total{pool="sd"}[1m])) for store/prometheus.
	// When set, Measurement and Match are not used (Measurement, if given,
	// names the result); Start, End, Step and Aggregate keep their meaning.
	// Stores that cannot run it return an error wrapping
	// ErrExprUnsupported.
	Expr string
}

// ErrExprUnsupported wraps the error of a store asked to run a Query.Expr
// it has no language for. It matches ErrInvalidQuery too: retrying will not
// help.
var ErrExprUnsupported = fmt.Errorf("%w: this store cannot run query expressions", ErrInvalidQuery)

// RefuseExpr returns nil when q has no Expr, else an error wrapping
// ErrExprUnsupported that names the store and the expression. A store
// without a query language calls it first thing in Query.
func RefuseExpr(q Query, storeName string) error {
	if q.Expr == "" {
		return nil
	}
	return fmt.Errorf("%w: the %s store cannot run the expression `%s`; select the series with measurement and match instead, "+
		"or read from Prometheus (--store prometheus:URL)", ErrExprUnsupported, storeName, q.Expr)
}

// Fold folds values into one aggregate, the way every Store folds the
// points of one window: mean (the default for ""), sum, max, min, last
// (the last value added) or count. The zero Fold of an aggregate is empty;
// add values in time order.
type Fold struct {
	Agg Aggregate
	n   int
	acc float64
}

// Add folds v in.
func (f *Fold) Add(v float64) {
	switch {
	case f.n == 0:
		f.acc = v
	case f.Agg == Max:
		f.acc = max(f.acc, v)
	case f.Agg == Min:
		f.acc = min(f.acc, v)
	case f.Agg == Last:
		f.acc = v
	default: // mean, sum
		f.acc += v
	}
	f.n++
}

// Value returns the aggregate; ok is false when nothing was added.
func (f *Fold) Value() (v float64, ok bool) {
	switch {
	case f.n == 0:
		return 0, false
	case f.Agg == Count:
		return float64(f.n), true
	case f.Agg == Mean, f.Agg == "":
		return f.acc / float64(f.n), true
	}
	return f.acc, true
}

// Reset empties f, keeping its aggregate.
func (f *Fold) Reset() { f.n, f.acc = 0, 0 }

// Sample is one (possibly aggregated) value of a series at a time. For an
// aggregated query Time is the start of the window.
type Sample struct {
	Time  time.Time
	Value float64
}

// Series is the result for one distinct tag set.
type Series struct {
	Measurement string
	Tags        map[string]string
	Samples     []Sample
}

// Writer accepts batches of points. A batch is written whole or the error
// says it was not; callers may retry a failed batch.
type Writer interface {
	Write(ctx context.Context, points []Point) error
}

// Querier reads series back, one Series per distinct tag set, sorted by the
// tags' canonical string and each Series' samples by time.
type Querier interface {
	Query(ctx context.Context, q Query) ([]Series, error)
}

// Store is a Writer and a Querier that must be closed after use.
type Store interface {
	Writer
	Querier
	Close() error
}

// ErrUnavailable wraps errors that mean the store cannot be reached right
// now (server down, timeout); the write may succeed later. Other errors mean
// the request itself is wrong and retrying will not help.
var ErrUnavailable = errors.New("store unavailable")

// ErrMisconfigured wraps errors that mean the store refuses every request
// as configured (bad credentials, a missing bucket or database), whatever
// the points: no batch can succeed until an operator fixes the setting, and
// then every batch can. A writer keeps its points and retries, as for
// ErrUnavailable, instead of dropping batch after batch.
var ErrMisconfigured = errors.New("store misconfigured")

// ErrSeriesLimit is matched by a *SeriesLimitError.
var ErrSeriesLimit = errors.New("series limit reached")

// SeriesLimitError reports a write that stored every point of the series
// the store already had (and of new ones up to its limit) and refused the
// points of the new series past it. The write is done: retrying it stores
// nothing more until series expire.
type SeriesLimitError struct {
	Store   string // which store, for the message
	Refused int    // points refused
	Limit   int    // the store's series limit
}

func (e *SeriesLimitError) Error() string {
	return fmt.Sprintf("%s: %d points of new series refused: the store holds %d series, its limit", e.Store, e.Refused, e.Limit)
}

// Unwrap makes errors.Is(err, ErrSeriesLimit) hold.
func (e *SeriesLimitError) Unwrap() error { return ErrSeriesLimit }
