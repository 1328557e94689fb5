package state

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bucketDecisions is the nested bucket, inside a pool's, that holds the
// pool's decision history: keys are the decisions' sequence numbers (big
// endian, so a cursor walks them in order), values what the service wrote.
var bucketDecisions = []byte("decisions")

// Record is one stored decision: its sequence number in the pool's
// history and the value the service saved (JSON).
type Record struct {
	Seq   uint64
	Value []byte
}

// MaxPage bounds how many records one Decisions call returns.
const MaxPage = 500

// LastDecision returns the newest decision recorded for pool (Seq 0: none),
// so a restarted service numbers on from it and does not record the same
// decision twice.
func (s *DB) LastDecision(pool string) (Record, error) {
	var r Record
	err := s.db.View(func(tx *bolt.Tx) error {
		b := decisionsBucket(tx, pool)
		if b == nil {
			return nil
		}
		if k, v := b.Cursor().Last(); k != nil {
			r = Record{Seq: binary.BigEndian.Uint64(k), Value: append([]byte(nil), v...)}
		}
		return nil
	})
	if err != nil {
		return Record{}, fmt.Errorf("state file %s: pool %q: decisions: %w", s.path, pool, err)
	}
	return r, nil
}

// SaveDecision appends the decision seq (numbered by the caller, one
// above the last) to pool's history without waiting for the disk, and
// drops the oldest records beyond keep (keep ≤ 0 keeps all). Records are
// written in the background in commit order, which may differ from seq
// order; the keys keep the history ordered whatever the commit order.
func (s *DB) SaveDecision(pool string, seq uint64, value []byte, keep int) {
	if seq == 0 {
		return // 0 means "none" to LastDecision
	}
	value = append([]byte(nil), value...)
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		err := s.db.Batch(func(tx *bolt.Tx) error {
			pb, err := tx.Bucket(bucketPools).CreateBucketIfNotExists([]byte(pool))
			if err != nil {
				return err
			}
			b, err := pb.CreateBucketIfNotExists(bucketDecisions)
			if err != nil {
				return err
			}
			if err := b.Put(binary.BigEndian.AppendUint64(nil, seq), value); err != nil {
				return err
			}
			return prune(b, keep)
		})
		if err != nil {
			s.log.Error("decision not recorded in the state file", "pool", pool, "err", err)
		}
	}()
}

// prune deletes the oldest records until the keys span at most keep
// sequence numbers (gaps, left by failed saves, count as records).
func prune(b *bolt.Bucket, keep int) error {
	if keep <= 0 {
		return nil
	}
	c := b.Cursor()
	last, _ := c.Last()
	if last == nil {
		return nil
	}
	top := binary.BigEndian.Uint64(last)
	for k, _ := c.First(); k != nil && top-binary.BigEndian.Uint64(k) >= uint64(keep); k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// ErrBadPage is returned for a page size outside [1, MaxPage].
var ErrBadPage = errors.New("page size must be in [1, 500]")

// Decisions returns up to limit records of pool's history older than
// before (0: from the newest), newest first, and whether older ones
// remain. It reads one page, whatever the history's length.
func (s *DB) Decisions(pool string, before uint64, limit int) (page []Record, more bool, err error) {
	if limit < 1 || limit > MaxPage {
		return nil, false, ErrBadPage
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		b := decisionsBucket(tx, pool)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		var k, v []byte
		if before == 0 {
			k, v = c.Last()
		} else {
			k, v = c.Seek(binary.BigEndian.AppendUint64(nil, before))
			if k == nil {
				k, v = c.Last() // before is past the newest
			}
			for k != nil && binary.BigEndian.Uint64(k) >= before {
				k, v = c.Prev()
			}
		}
		for ; k != nil; k, v = c.Prev() {
			if len(page) == limit {
				more = true
				return nil
			}
			page = append(page, Record{Seq: binary.BigEndian.Uint64(k), Value: append([]byte(nil), v...)})
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("state file %s: pool %q: decisions: %w", s.path, pool, err)
	}
	return page, more, nil
}

func decisionsBucket(tx *bolt.Tx, pool string) *bolt.Bucket {
	if pb := poolBucket(tx, pool); pb != nil {
		return pb.Bucket(bucketDecisions)
	}
	return nil
}
