package store

import (
	"context"
	"errors"
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
}

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
