// Package state keeps what the scaling service remembers about each pool
// across restarts, in one local bbolt file (by default beside the audit
// log): the actuator's last change and last published schedule (its rate
// and step limits count from them), the controller's memory (the refit in
// force with its gate verdict and plans, the reactive rules' hold and
// cooldown clocks, the forecasts the gate scores), when the next refit is
// due, and a mode set through the API.
//
// Every write is one bbolt transaction, on disk when the call returns
// (concurrent writes share a commit through bbolt's Batch), so a change
// recorded before it is made survives a kill -9. Only one process opens
// the file at a time; a second serve fails fast and says so.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

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
}

// Options tune Open.
type Options struct {
	// ReadOnly opens the file without writing (serve --once to preview):
	// it still waits for a running serve to let go of it.
	ReadOnly bool
	// LockTimeout is how long Open waits for another process holding the
	// file; zero means one second.
	LockTimeout time.Duration
}

// Open opens (creating unless read-only) the state file at path.
func Open(path string, opts Options) (*DB, error) {
	if opts.LockTimeout == 0 {
		opts.LockTimeout = time.Second
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, ReadOnly: opts.ReadOnly})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("state file %s is locked by another process (is another forecaster serve running with it?): %w", path, err)
		}
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	s := &DB{db: db, path: path}
	if opts.ReadOnly {
		err = db.View(s.checkFormat)
	} else {
		err = db.Update(s.init)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
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

// Path returns the file's path.
func (s *DB) Path() string { return s.path }

// Close closes the file.
func (s *DB) Close() error { return s.db.Close() }

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
		if v := b.Get(keyActuator); v != nil {
			p.Actuator = new(actuator.Memory)
			if err := json.Unmarshal(v, p.Actuator); err != nil {
				return fmt.Errorf("actuator memory: %w", err)
			}
		}
		if v := b.Get(keyController); v != nil {
			p.Controller = append([]byte(nil), v...)
		}
		if v := b.Get(keyRefit); v != nil {
			if err := p.NextRefit.UnmarshalText(v); err != nil {
				return fmt.Errorf("next refit: %w", err)
			}
		}
		if v := b.Get(keyMode); v != nil {
			p.Mode = new(ModeOverride)
			if err := json.Unmarshal(v, p.Mode); err != nil {
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

// put writes key=value for pool (value nil deletes) in a batched commit.
func (s *DB) put(pool string, kv ...[]byte) error {
	err := s.db.Batch(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketPools).CreateBucketIfNotExists([]byte(pool))
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				err = b.Delete(kv[i])
			} else {
				err = b.Put(kv[i], kv[i+1])
			}
			if err != nil {
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

// SaveActuator records the actuator's memory of pool (actuator.SafetyOptions.Persist).
func (s *DB) SaveActuator(pool string, m actuator.Memory) error {
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.put(pool, keyActuator, v)
}

// SaveController records the controller's memory and the next refit time.
func (s *DB) SaveController(pool string, controller []byte, nextRefit time.Time) error {
	t, err := nextRefit.MarshalText()
	if err != nil {
		return err
	}
	return s.put(pool, keyController, controller, keyRefit, t)
}

// SaveMode records a mode set through the API; nil clears it.
func (s *DB) SaveMode(pool string, o *ModeOverride) error {
	if o == nil {
		return s.put(pool, keyMode, nil)
	}
	v, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return s.put(pool, keyMode, v)
}
