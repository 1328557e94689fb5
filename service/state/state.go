// Package state keeps what the scaling service remembers about each pool
// across restarts, in one local bbolt file (by default beside the audit
// log): the actuator's last change and last published schedule (its rate
// and step limits count from them), the controller's memory (the refit in
// force with its gate verdict and plans, the reactive rules' hold and
// cooldown clocks, the forecasts the gate scores), when the next refit is
// due, a mode set through the API, and the pool's decision history (the
// last changes and changed verdicts, paged by sequence number).
//
// A change recorded before it is made (a pending actuator change, a mode
// set through the API) is on disk when the save returns, so it survives a
// kill -9; concurrent saves share a commit (bbolt's Batch, with a 1 ms
// window). Everything else (a change confirmed or taken back, the
// controller's memory) is saved without waiting, committed within
// milliseconds: a crash in between loses only what errs on the safe side
// (a pending change still counts as made). Each value carries a sequence
// number, so a late background save never overwrites a newer one. Only one
// process opens the file at a time; a second serve fails fast and says so.
package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/prewarm/prewarm/actuator"
)

// formatVersion is stored under meta/format; Open refuses other layouts.
const formatVersion = "prewarm-state/1"

var (
	bucketMeta  = []byte("meta")
	bucketPools = []byte("pools")
	keyFormat   = []byte("format")

	keyActuator   = []byte("actuator")
	keyController = []byte("controller")
	keyRefit      = []byte("next_refit")
	keyMode       = []byte("mode")
)

// DB is the state file. It is safe for concurrent use.
type DB struct {
	db   *bolt.DB
	path string
	log  *slog.Logger
	seq  atomic.Uint64  // orders saves, so the newest value of a key wins
	bg   sync.WaitGroup // saves not waited for
}

// Options tune Open.
type Options struct {
	// ReadOnly opens the file without writing (serve --once to preview):
	// it still waits for a running serve to let go of it.
	ReadOnly bool
	// LockTimeout is how long Open waits for another process holding the
	// file; zero means one second.
	LockTimeout time.Duration
	// Logger receives the failures of saves not waited for; nil discards.
	Logger *slog.Logger
}

// Open opens (creating unless read-only) the state file at path.
func Open(path string, opts Options) (*DB, error) {
	if opts.LockTimeout == 0 {
		opts.LockTimeout = time.Second
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, ReadOnly: opts.ReadOnly})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("state file %s is locked by another process (is another forecaster serve running with it?): %w", path, err)
		}
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	db.MaxBatchDelay = time.Millisecond
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &DB{db: db, path: path, log: opts.Logger}
	if opts.ReadOnly {
		err = db.View(s.checkFormat)
	} else {
		err = db.Update(s.init)
	}
	if err == nil {
		err = db.View(s.lastSeq)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// lastSeq starts the save sequence above every value in the file, so
// that this run's saves win over an earlier run's whatever the clock says.
func (s *DB) lastSeq(tx *bolt.Tx) error {
	pools := tx.Bucket(bucketPools)
	if pools == nil {
		return nil
	}
	var top uint64
	err := pools.ForEachBucket(func(name []byte) error {
		return pools.Bucket(name).ForEach(func(_, v []byte) error {
			if len(v) >= 8 {
				top = max(top, binary.BigEndian.Uint64(v))
			}
			return nil
		})
	})
	s.seq.Store(top)
	return err
}

func (s *DB) init(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	if meta.Get(keyFormat) == nil {
		if err := meta.Put(keyFormat, []byte(formatVersion)); err != nil {
			return fmt.Errorf("state file %s: %w", s.path, err)
		}
	}
	if _, err := tx.CreateBucketIfNotExists(bucketPools); err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	return s.checkFormat(tx)
}

func (s *DB) checkFormat(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return nil // a new, empty file opened read-only
	}
	if got := string(meta.Get(keyFormat)); got != formatVersion {
		return fmt.Errorf("state file %s: format %q, this prewarm reads %q", s.path, got, formatVersion)
	}
	return nil
}

// Flush waits for the saves in flight (those not waited for). Saves
// started meanwhile may or may not be waited for.
func (s *DB) Flush() { s.bg.Wait() }

// Close waits for the saves in flight and closes the file.
func (s *DB) Close() error {
	s.bg.Wait()
	return s.db.Close()
}

// ModeOverride is a mode set through the API. It stays in force across
// restarts while the configuration still says ConfigMode; once the file
// says another mode, the file's (newer) word wins.
type ModeOverride struct {
	Mode       string    `json:"mode"`
	ConfigMode string    `json:"config_mode"`
	At         time.Time `json:"at"`
	By         string    `json:"by"`
}

// Pool is everything kept about one pool; absent parts are nil or zero.
type Pool struct {
	Actuator *actuator.Memory
	// Controller is control.State.Encode's output.
	Controller []byte
	NextRefit  time.Time
	Mode       *ModeOverride
}

// Load returns what is kept about pool (the zero Pool for a new one).
func (s *DB) Load(pool string) (Pool, error) {
	var p Pool
	err := s.db.View(func(tx *bolt.Tx) error {
		b := poolBucket(tx, pool)
		if b == nil {
			return nil
		}
		get := func(key []byte) []byte {
			v := b.Get(key)
			if len(v) < 8 {
				return nil
			}
			return v[8:] // after the sequence number
		}
		if v := get(keyActuator); v != nil {
			p.Actuator = new(actuator.Memory)
			if err := json.Unmarshal(v, p.Actuator); err != nil {
				return fmt.Errorf("actuator memory: %w", err)
			}
		}
		if v := get(keyController); v != nil {
			p.Controller = append([]byte(nil), v...)
		}
		if v := get(keyRefit); v != nil {
			if err := p.NextRefit.UnmarshalText(v); err != nil {
				return fmt.Errorf("next refit: %w", err)
			}
		}
		if v := get(keyMode); v != nil {
			if err := json.Unmarshal(v, &p.Mode); err != nil {
				return fmt.Errorf("mode: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return Pool{}, fmt.Errorf("state file %s: pool %q: %w", s.path, pool, err)
	}
	return p, nil
}

func poolBucket(tx *bolt.Tx, pool string) *bolt.Bucket {
	pools := tx.Bucket(bucketPools)
	if pools == nil {
		return nil
	}
	return pools.Bucket([]byte(pool))
}

// put writes key=value pairs for pool (a nil value clears the key) in a
// batched commit, unless a newer save of the key is there already. wait
// false returns at once; a failure is logged.
func (s *DB) put(pool string, wait bool, kv ...[]byte) error {
	seq := s.seq.Add(1)
	write := func() error {
		err := s.db.Batch(func(tx *bolt.Tx) error {
			b, err := tx.Bucket(bucketPools).CreateBucketIfNotExists([]byte(pool))
			if err != nil {
				return err
			}
			for i := 0; i+1 < len(kv); i += 2 {
				if old := b.Get(kv[i]); len(old) >= 8 && binary.BigEndian.Uint64(old) > seq {
					continue // a newer save got there first
				}
				v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(kv[i+1])), seq)
				if err := b.Put(kv[i], append(v, kv[i+1]...)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("state file %s: pool %q: %w", s.path, pool, err)
		}
		return nil
	}
	if wait {
		return write()
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		if err := write(); err != nil {
			s.log.Error("pool state not saved", "err", err)
		}
	}()
	return nil
}

// SaveActuator records the actuator's memory of pool (it is
// actuator.SafetyOptions.Persist). A pending change, about to be made, is
// on disk when it returns; a confirmation or a change taken back is saved
// without waiting.
func (s *DB) SaveActuator(pool string, m actuator.Memory) error {
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.put(pool, m.LastChange.Pending, keyActuator, v)
}

// SaveController records the controller's memory and the next refit time,
// without waiting for the disk.
func (s *DB) SaveController(pool string, controller []byte, nextRefit time.Time) error {
	t, err := nextRefit.MarshalText()
	if err != nil {
		return err
	}
	return s.put(pool, false, keyController, controller, keyRefit, t)
}

// SaveMode records a mode set through the API (nil clears it); it is on
// disk when it returns.
func (s *DB) SaveMode(pool string, o *ModeOverride) error {
	v := []byte("null")
	if o != nil {
		var err error
		if v, err = json.Marshal(o); err != nil {
			return err
		}
	}
	return s.put(pool, true, keyMode, v)
}
