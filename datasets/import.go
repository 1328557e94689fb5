package datasets

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/store"
)

// Week is the shift AlignWeeks moves a series by, a whole number of times.
const Week = 7 * 24 * time.Hour

// AlignWeeks returns s moved by a whole number of weeks so that it ends
// in the week before end: s.End() falls in (end−Week, end]. Weekday and
// time of day are kept, so a trace recorded months ago can stand for the
// weeks before now. A series already ending there is returned as is.
func (s Series) AlignWeeks(end time.Time) Series {
	weeks := int64(math.Floor(float64(end.Sub(s.End())) / float64(Week)))
	s.Start = s.Start.Add(time.Duration(weeks) * Week)
	return s
}

// ImportOptions say which series of a store Import writes.
type ImportOptions struct {
	// Measurement and Tags name the series, e.g. service_request_rate
	// {pool: sd}, the series `forecaster serve` reads for pool sd.
	Measurement string
	Tags        map[string]string
	// PointEvery writes each value at every multiple of PointEvery within
	// its step (the value held over the step) instead of once at the
	// step's start, so that a store query with a finer step than the
	// series' finds a value in every window. It must divide the step; zero
	// means one point per step.
	PointEvery time.Duration
	// Until, when set, refuses a series with steps at or after it (a trace
	// whose dates lie in the future would be read as live demand).
	Until time.Time
	// BatchSize is the most points per Write; zero means 5000.
	BatchSize int
}

// Imported says what Import wrote and left out.
type Imported struct {
	// Points is how many points were written; Steps how many steps they
	// came from.
	Points, Steps int
	// First and Last are the first and last steps written.
	First, Last time.Time
	// Missing counts the steps without data (NaN), not written.
	Missing int
	// Overlapping counts the steps left out because another series of the
	// store that the same query matches already has a point in that step
	// (the collector's live series): importing them would count the demand
	// twice when the service sums the matching series.
	Overlapping int
}

// Import writes s into st as opts.Measurement{opts.Tags}, one point per
// step (NaN steps skipped), in batches. It first reads which steps other
// series matching the same tags already cover and leaves those out, so
// that history and live data never add up; a series with exactly
// opts.Tags is an earlier import of the same data, and writing it again
// overwrites it (Import is idempotent). On an error the points of the
// batches before it are written; running Import again is safe.
func Import(ctx context.Context, st interface {
	store.Writer
	store.Querier
}, s Series, opts ImportOptions) (Imported, error) {
	var res Imported
	if s.Step <= 0 || len(s.Values) == 0 {
		return res, fmt.Errorf("import %s: the series is empty", s.Name)
	}
	if opts.PointEvery < 0 || (opts.PointEvery > 0 && s.Step%opts.PointEvery != 0) {
		return res, fmt.Errorf("import %s: a point every %v does not divide the series' step %v", s.Name, opts.PointEvery, s.Step)
	}
	if !opts.Until.IsZero() && s.End().After(opts.Until) {
		return res, fmt.Errorf("import %s: the series runs until %s, after %s; shift it to end before now",
			s.Name, s.End().UTC().Format(time.RFC3339), opts.Until.UTC().Format(time.RFC3339))
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = 5000
	}
	taken, err := coveredSteps(ctx, st, s, opts)
	if err != nil {
		return res, err
	}
	every := opts.PointEvery
	if every == 0 {
		every = s.Step
	}
	points := make([]store.Point, 0, batch)
	flush := func() error {
		if len(points) == 0 {
			return nil
		}
		if err := st.Write(ctx, points); err != nil {
			return fmt.Errorf("import %s: writing %s%s after %d points: %w", s.Name, opts.Measurement, store.CanonicalTags(opts.Tags), res.Points, err)
		}
		res.Points += len(points)
		points = points[:0]
		return nil
	}
	for i, v := range s.Values {
		t := s.Time(i)
		switch {
		case math.IsNaN(v):
			res.Missing++
			continue
		case taken[store.WindowStart(t, s.Step).UnixNano()]:
			res.Overlapping++
			continue
		}
		if res.Steps == 0 {
			res.First = t
		}
		res.Steps++
		res.Last = t
		for off := time.Duration(0); off < s.Step; off += every {
			points = append(points, store.Point{Measurement: opts.Measurement, Tags: opts.Tags, Value: v, Time: t.Add(off)})
			if len(points) == batch {
				if err := flush(); err != nil {
					return res, err
				}
			}
		}
	}
	return res, flush()
}

// coveredSteps returns the steps of s (as WindowStart of s.Step, in Unix
// ns) in which another series that opts.Tags matches has points.
func coveredSteps(ctx context.Context, st store.Querier, s Series, opts ImportOptions) (map[int64]bool, error) {
	series, err := st.Query(ctx, store.Query{Measurement: opts.Measurement, Match: opts.Tags,
		Start: s.Start, End: s.End(), Step: s.Step, Aggregate: store.Count})
	if err != nil {
		return nil, fmt.Errorf("import %s: reading what %s%s already holds: %w", s.Name, opts.Measurement, store.CanonicalTags(opts.Tags), err)
	}
	own := store.CanonicalTags(opts.Tags)
	taken := map[int64]bool{}
	for _, ser := range series {
		if store.CanonicalTags(ser.Tags) == own {
			continue
		}
		for _, smp := range ser.Samples {
			taken[smp.Time.UnixNano()] = true
		}
	}
	return taken, nil
}
