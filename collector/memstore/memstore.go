// Package memstore is an in-memory store.Store for the collector's tests and
// benchmarks: it keeps every point written, in order, and can be switched
// "down" to make writes fail with store.ErrUnavailable. Query returns raw
// points only (no aggregation); it is not a storage engine.
package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/prewarm/prewarm/store"
)

// Store keeps points in memory.
type Store struct {
	mu     sync.Mutex
	points []store.Point
	down   bool
	writes int
	// OnWrite, if set, is called with each batch before it is stored; a
	// non-nil error fails the write.
	OnWrite func(points []store.Point) error
}

var _ store.Store = (*Store)(nil)

// SetDown makes writes fail with store.ErrUnavailable while down is true.
func (s *Store) SetDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

// Write stores points unless the store is down.
func (s *Store) Write(ctx context.Context, points []store.Point) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return fmt.Errorf("memstore: %w", store.ErrUnavailable)
	}
	if s.OnWrite != nil {
		if err := s.OnWrite(points); err != nil {
			return err
		}
	}
	s.writes++
	s.points = append(s.points, points...)
	return nil
}

// Points returns a copy of everything written, in write order.
func (s *Store) Points() []store.Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.points)
}

// Writes counts successful Write calls.
func (s *Store) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// Query returns the raw points of q.Measurement matching q.Match in
// [q.Start, q.End), one Series per tag set; Step and Aggregate are ignored.
func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bySeries := map[string]*store.Series{}
	for _, p := range s.points {
		if p.Measurement != q.Measurement || p.Time.Before(q.Start) || !p.Time.Before(q.End) {
			continue
		}
		match := true
		for k, v := range q.Match {
			if p.Tags[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		key := canonical(p.Tags)
		sr, ok := bySeries[key]
		if !ok {
			sr = &store.Series{Measurement: p.Measurement, Tags: maps.Clone(p.Tags)}
			bySeries[key] = sr
		}
		sr.Samples = append(sr.Samples, store.Sample{Time: p.Time, Value: p.Value})
	}
	out := make([]store.Series, 0, len(bySeries))
	for _, k := range slices.Sorted(maps.Keys(bySeries)) {
		out = append(out, *bySeries[k])
	}
	return out, nil
}

func canonical(tags map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		fmt.Fprintf(&b, "%s=%s,", k, tags[k])
	}
	return b.String()
}

// Close does nothing.
func (s *Store) Close() error { return nil }
