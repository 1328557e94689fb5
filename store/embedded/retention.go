package embedded

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// deleteChunk bounds the points one retention transaction deletes, so that
// a large sweep does not hold the write lock (and memory) for long.
const deleteChunk = 20_000

// retentionLoop deletes expired points every RetentionInterval until ctx
// is cancelled.
func (s *Store) retentionLoop(ctx context.Context) {
	defer close(s.done)
	if s.opts.Retention <= 0 {
		return
	}
	tick := time.NewTicker(s.opts.RetentionInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := s.DeleteBefore(ctx, s.opts.Now().Add(-s.opts.Retention)); err != nil && ctx.Err() == nil {
				s.log.Error("retention sweep failed; will retry", "err", err, "next", s.opts.RetentionInterval)
			}
		}
	}
}

// DeleteBefore deletes every point older than cutoff and drops series left
// without points. It returns how many points it deleted. Retention calls it;
// it is exported for tools that prune by hand.
func (s *Store) DeleteBefore(ctx context.Context, cutoff time.Time) (int, error) {
	var names [][]byte
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeasurements).ForEachBucket(func(k []byte) error {
			names = append(names, bytes.Clone(k))
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("embedded store %s: retention: %w", s.path, err)
	}
	total := 0
	for _, name := range names {
		var from []byte // series key to resume at; nil: the first
		for {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			n, next, err := s.deleteSome(name, cutoff, from)
			total += n
			if err != nil {
				return total, fmt.Errorf("embedded store %s: retention of %q: %w", s.path, name, err)
			}
			if next == nil {
				break
			}
			from = next
		}
	}
	if total > 0 {
		s.log.Info("retention sweep", "deleted_points", total, "cutoff", cutoff.UTC())
	}
	return total, nil
}

// deleteSome deletes up to deleteChunk expired points of one measurement,
// starting with the series whose key is from (nil: the first). It returns
// the series key to resume at, or nil when the measurement is done.
func (s *Store) deleteSome(measurement []byte, cutoff time.Time, from []byte) (deleted int, resume []byte, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var dropped []string
	err = s.db.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeasurements).Bucket(measurement)
		series, points := m.Bucket(bucketSeries), m.Bucket(bucketPoints)
		if series == nil || points == nil {
			return nil
		}
		var empty [][]byte
		sc := series.Cursor()
		k, v := sc.First()
		if from != nil {
			k, v = sc.Seek(from)
		}
		for ; k != nil; k, v = sc.Next() {
			id := decodeID(v)
			n, left, err := deleteExpired(points, id, cutoff, deleteChunk-deleted)
			deleted += n
			if err != nil {
				return err
			}
			if deleted >= deleteChunk {
				// This series may have more to delete: resume at it.
				resume = bytes.Clone(k)
				break
			}
			if !left {
				empty = append(empty, bytes.Clone(k))
			}
		}
		for _, k := range empty {
			if err := series.Delete(k); err != nil {
				return err
			}
			dropped = append(dropped, string(measurement)+"\x00"+string(k))
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	for _, k := range dropped {
		delete(s.ids, k)
		_, canon, _ := strings.Cut(k, "\x00")
		s.index.remove(string(measurement), canon)
	}
	return deleted, resume, nil
}

// deleteExpired deletes up to limit points of series id older than cutoff
// and reports whether the series still has points.
func deleteExpired(points *bolt.Bucket, id uint64, cutoff time.Time, limit int) (int, bool, error) {
	prefix := encodeID(id)
	end := pointKey(id, cutoff)
	var doomed [][]byte
	c := points.Cursor()
	k, _ := c.Seek(prefix)
	for ; k != nil && bytes.HasPrefix(k, prefix) && bytes.Compare(k, end) < 0 && len(doomed) < limit; k, _ = c.Next() {
		doomed = append(doomed, bytes.Clone(k))
	}
	left := k != nil && bytes.HasPrefix(k, prefix)
	// Delete after the scan: deleting under a moving cursor skips keys.
	for _, d := range doomed {
		if err := points.Delete(d); err != nil {
			return 0, true, err
		}
	}
	return len(doomed), left, nil
}
