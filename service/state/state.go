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
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/prewarm/prewarm/actuator"
)

// formatVersion is the layout this package writes, stored under
// meta/format as formatPrefix followed by the number. Open migrates the
// older layouts in place and refuses newer ones.
const (
	formatPrefix  = "prewarm-state/"
	formatVersion = 2
)

// ErrCorrupt is returned by Open for a state file that is damaged
// (truncated, overwritten, empty) or is not a state file at all.
var ErrCorrupt = errors.New("state file damaged")

// ErrVersion is returned by Open for a state file of a layout this
// prewarm cannot read: a newer one, or one it cannot migrate.
var ErrVersion = errors.New("state file of another version")

var (
	bucketMeta  = []byte("meta")
	bucketPools = []byte("pools")
	keyFormat   = []byte("format")

	keyActuator   = []byte("actuator")
	keyController = []byte("controller")
	keyRefit      = []byte("next_refit")
	keyMode       = []byte("mode")
	keyStarts     = []byte("start_times")
	keyWarmStarts = []byte("warm_start_times")
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
	// Logger receives the failures of saves not waited for and the
	// migrations of older layouts; nil discards.
	Logger *slog.Logger
}

// Open opens (creating unless read-only) the state file at path. Before
// it returns, every page of the file is checked: a damaged file
// (ErrCorrupt) or one of a newer layout (ErrVersion) is refused with an
// error that names the file and what to do, rather than failing later in
// the middle of a decision. A file of an older layout is migrated in one
// transaction (a read-only open refuses it instead).
func Open(path string, opts Options) (*DB, error) {
	if opts.LockTimeout == 0 {
		opts.LockTimeout = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return nil, damaged(path, errors.New("the file is empty (0 bytes)"))
	}
	if err := checkLayout(path); err != nil {
		return nil, damaged(path, err)
	}
	var db *bolt.DB
	err := guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, ReadOnly: opts.ReadOnly})
		return err
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("state file %s is locked by another process (is another forecaster serve running with it?): %w", path, err)
		}
		if !errors.Is(err, ErrCorrupt) {
			err = damaged(path, err)
		}
		return nil, err
	}
	db.MaxBatchDelay = time.Millisecond
	s := &DB{db: db, path: path, log: opts.Logger}
	err = guard(path, func() error {
		if err := db.View(s.check); err != nil {
			return err
		}
		if opts.ReadOnly {
			return db.View(s.readFormat)
		}
		return db.Update(s.init)
	})
	if err == nil {
		err = db.View(s.lastSeq)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// guard runs f, taking a panic inside bbolt (its assertions on a damaged
// page, or a read of the mapped file at an address a damaged page made
// up) as ErrCorrupt.
func guard(path string, f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damaged(path, fmt.Errorf("%v", r))
		}
	}()
	return f()
}

// damaged is ErrCorrupt for the file at path, with what to do about it.
func damaged(path string, why error) error {
	return fmt.Errorf("%w: %s cannot be read (%v); move it aside (serve then starts afresh, forgetting each pool's "+
		"last change, cooldowns, gate verdict and mode set through the API) or name another with --state or state_file",
		ErrCorrupt, path, why)
}

// check walks every page of the file, so that damage is found at Open and
// not by a background save.
func (s *DB) check(tx *bolt.Tx) error {
	var first error
	n := 0
	for err := range tx.Check() {
		if first == nil {
			first = err
		}
		n++
	}
	switch {
	case n == 1:
		return damaged(s.path, first)
	case n > 1:
		return damaged(s.path, fmt.Errorf("%w, and %d more problems", first, n-1))
	}
	return nil
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

// init readies a file for writing: a new one gets the buckets and the
// current format, an older layout is migrated, anything else refused.
func (s *DB) init(tx *bolt.Tx) error {
	v, err := s.version(tx)
	if err != nil {
		return err
	}
	if v == 0 { // a new file
		v = formatVersion
		if _, err := tx.CreateBucketIfNotExists(bucketPools); err != nil {
			return fmt.Errorf("state file %s: %w", s.path, err)
		}
	}
	if v < formatVersion {
		if err := migrate(tx, v); err != nil {
			return fmt.Errorf("state file %s: migrating format %d to %d: %w", s.path, v, formatVersion, err)
		}
		s.log.Info("state file migrated to the current format", "path", s.path, "from", v, "to", formatVersion)
	}
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err == nil {
		err = meta.Put(keyFormat, []byte(formatPrefix+strconv.Itoa(formatVersion)))
	}
	if err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	return nil
}

// readFormat refuses, for a read-only open, every layout but the current
// one (an older one is migrated by the next serve that writes it).
func (s *DB) readFormat(tx *bolt.Tx) error {
	v, err := s.version(tx)
	if err != nil || v == 0 || v == formatVersion {
		return err
	}
	return fmt.Errorf("%w: %s has format %d, which the next forecaster serve migrates to %d; "+
		"a read-only open does not", ErrVersion, s.path, v, formatVersion)
}

// isEmpty reports whether tx's file holds no bucket at all.
func isEmpty(tx *bolt.Tx) bool {
	k, _ := tx.Cursor().First()
	return k == nil
}

// version reads the file's format: 0 for a new file (no buckets yet).
// A file with data but no format, or one whose format is not a prewarm
// state's, is ErrCorrupt; a newer format is ErrVersion.
func (s *DB) version(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		if tx.Bucket(bucketPools) == nil && isEmpty(tx) {
			return 0, nil
		}
		return 0, damaged(s.path, errors.New("it has data but no format version: not a prewarm state file"))
	}
	raw := string(meta.Get(keyFormat))
	v, err := strconv.Atoi(strings.TrimPrefix(raw, formatPrefix))
	if !strings.HasPrefix(raw, formatPrefix) || err != nil || v < 1 {
		return 0, damaged(s.path, fmt.Errorf("format %q is not a prewarm state file's", raw))
	}
	if v > formatVersion {
		return 0, fmt.Errorf("%w: %s has format %d, written by a newer prewarm; this one reads formats up to %d: "+
			"run the newer prewarm, or move the file aside to start afresh", ErrVersion, s.path, v, formatVersion)
	}
	return v, nil
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
	// StartTimes are the fleet's last measured start times of cold boots,
	// oldest first, and WarmStartTimes those of warm starts
	// (control.StartTimes.Measured of each kind).
	StartTimes, WarmStartTimes []time.Duration
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
		if v := get(keyStarts); v != nil {
			if err := json.Unmarshal(v, &p.StartTimes); err != nil {
				return fmt.Errorf("start times: %w", err)
			}
		}
		if v := get(keyWarmStarts); v != nil {
			if err := json.Unmarshal(v, &p.WarmStartTimes); err != nil {
				return fmt.Errorf("warm start times: %w", err)
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

// SaveStartTimes records the fleet's measured start times, of cold boots
// and of warm starts, without waiting for the disk.
func (s *DB) SaveStartTimes(pool string, cold, warm []time.Duration) error {
	c, err := json.Marshal(cold)
	if err != nil {
		return err
	}
	w, err := json.Marshal(warm)
	if err != nil {
		return err
	}
	return s.put(pool, false, keyStarts, c, keyWarmStarts, w)
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
