package state

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// migrate rewrites a file of format from into the current one, inside
// the open transaction tx: a failure leaves the file as it was.
//
// Format 1 stored a pool's values bare before the sequence numbers came
// and, later under the same format, behind them. A value behind a sequence
// number starts with a zero byte (no sequence number reaches 2⁵⁶); a bare
// one never does (JSON, a time's text, or a gob stream, whose first byte
// is a non-zero length). Format 2 puts every value behind one; a bare
// value gets sequence number 0, older than any save.
func migrate(tx *bolt.Tx, from int) error {
	if from != 1 {
		return fmt.Errorf("no migration from format %d", from)
	}
	pools := tx.Bucket(bucketPools)
	if pools == nil {
		_, err := tx.CreateBucket(bucketPools)
		return err
	}
	var names [][]byte
	if err := pools.ForEachBucket(func(name []byte) error {
		names = append(names, append([]byte(nil), name...))
		return nil
	}); err != nil {
		return err
	}
	for _, name := range names {
		if err := prefixBare(pools.Bucket(name)); err != nil {
			return fmt.Errorf("pool %q: %w", name, err)
		}
	}
	return nil
}

// prefixBare puts sequence number 0 before each of b's values that has
// none.
func prefixBare(b *bolt.Bucket) error {
	for _, key := range [][]byte{keyActuator, keyController, keyRefit, keyMode} {
		v := b.Get(key)
		if v == nil || (len(v) >= 8 && v[0] == 0) {
			continue
		}
		seqd := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(v)), 0)
		if err := b.Put(key, append(seqd, v...)); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}
