package embedded

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/prewarm/prewarm/store"
)

var _ store.Store = (*Store)(nil)

// DefaultRetention is the retention prewarm's commands give an embedded
// store unless configured (the collector's store.retention, serve's
// store): 90 days, four times the forecaster's default 28-day history, so
// that the file does not grow without bound. The zero Options keep
// everything.
const DefaultRetention = 90 * 24 * time.Hour

// Options tune an embedded Store. The zero value keeps points forever and
// syncs every write to disk.
type Options struct {
	// Retention is how long points are kept, measured back from Now; zero
	// keeps them forever.
	Retention time.Duration
	// RetentionInterval is how often expired points are deleted after the
	// sweep Open does; zero means every Retention/10, clamped to [1m, 1h].
	RetentionInterval time.Duration
	// NoSync skips the fsync at each commit: faster, but a machine crash
	// can lose recent writes or corrupt the file. For tests and scratch data.
	NoSync bool
	// LockTimeout is how long Open waits for another process holding the
	// file to let go; zero means one second.
	LockTimeout time.Duration
	// Logger receives retention sweeps and their errors; nil discards them.
	Logger *slog.Logger
	// Now is the clock retention measures against; nil means time.Now.
	Now func() time.Time
	// MaxSeries bounds the series the file holds; zero means
	// DefaultMaxSeries. A write's points of new series past it are refused
	// (the rest is written, and Write returns a *store.SeriesLimitError),
	// so that label churn cannot grow the file and its in-memory index
	// without bound. Series whose points all expired free their places.
	MaxSeries int
}

// DefaultMaxSeries is Options.MaxSeries' default: ten times what 1,000
// pools with 20 series each need. Each series costs about 575 bytes of
// memory in the index and the id cache (measured over 100,000), so the
// default bounds them near 115 MB.
const DefaultMaxSeries = 200_000

// Store is the embedded time-series store. It is safe for concurrent use:
// writes are serialised, reads run in parallel with them.
type Store struct {
	db   *bolt.DB
	path string
	opts Options
	log  *slog.Logger

	// writeMu serialises Write and the retention sweep, so that the series
	// id cache always agrees with the committed index.
	writeMu sync.Mutex
	// ids caches series ids: measurement + "\x00" + CanonicalTags -> id.
	ids map[string]uint64
	// index finds a query's series without decoding every series key.
	index *seriesIndex

	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the store file at path, deletes expired
// points when Options.Retention is set, and starts the periodic sweep.
func Open(path string, opts Options) (*Store, error) {
	if opts.Retention < 0 {
		return nil, fmt.Errorf("embedded store %s: negative retention %s", path, opts.Retention)
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RetentionInterval <= 0 {
		opts.RetentionInterval = min(max(opts.Retention/10, time.Minute), time.Hour)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:        opts.LockTimeout,
		NoSync:         opts.NoSync,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("embedded store %s: file is locked by another process (is a collector already running?): %w", path, err)
		}
		return nil, fmt.Errorf("embedded store %s: %w", path, err)
	}
	s := &Store{db: db, path: path, opts: opts, log: logger.With("store", path), ids: make(map[string]uint64),
		index: newSeriesIndex()}
	if err := s.init(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if opts.Retention > 0 {
		if _, err := s.DeleteBefore(context.Background(), opts.Now().Add(-opts.Retention)); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go s.retentionLoop(ctx)
	return s, nil
}

// init creates the top-level buckets of a new file and checks the format of
// an existing one.
func (s *Store) init() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return fmt.Errorf("embedded store %s: %w", s.path, err)
		}
		switch got := meta.Get(keyFormat); {
		case got == nil:
			if err := meta.Put(keyFormat, []byte(formatVersion)); err != nil {
				return fmt.Errorf("embedded store %s: %w", s.path, err)
			}
		case string(got) != formatVersion:
			return fmt.Errorf("embedded store %s: file format %q, this prewarm reads %q", s.path, got, formatVersion)
		}
		if _, err := tx.CreateBucketIfNotExists(bucketMeasurements); err != nil {
			return fmt.Errorf("embedded store %s: %w", s.path, err)
		}
		if err := s.index.load(tx); err != nil {
			return fmt.Errorf("embedded store %s: indexing series: %w", s.path, err)
		}
		return nil
	})
}

// Close stops the retention sweep and closes the file. It is safe to call
// more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.done
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

// entry is one point ready to be put: its bucket and encoded key.
type entry struct {
	measurement string
	key         []byte
	value       []byte
}

// Write stores a batch of points in one transaction: all of them or, with
// an error, none. Invalid points (see store.Point.Validate) fail the whole
// batch with an error wrapping store.ErrInvalidPoint; a failure of the file
// itself (a full disk, an I/O error, a closed store) wraps
// store.ErrUnavailable, so that a writer keeps the batch and retries.
func (s *Store) Write(ctx context.Context, points []store.Point) error {
	if len(points) == 0 {
		return nil
	}
	if err := store.ValidatePoints(points); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()

	created := make(map[string]uint64)
	refused := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		entries, n, err := s.encode(tx, points, created)
		if err != nil {
			return err
		}
		refused = n
		// Sorted puts fill bbolt's pages sequentially instead of splitting
		// them at random; the stable sort keeps the last of duplicates last.
		slices.SortStableFunc(entries, func(a, b entry) int {
			if c := cmp.Compare(a.measurement, b.measurement); c != 0 {
				return c
			}
			return bytes.Compare(a.key, b.key)
		})
		return s.put(tx, entries)
	})
	if err != nil {
		if refusesData(err) {
			return fmt.Errorf("embedded store %s: write %d points: %w", s.path, len(points), err)
		}
		// The file, not the points, failed (a full disk, an I/O error, the
		// store closed): keep the batch and retry, as for a server down.
		return fmt.Errorf("embedded store %s: write %d points: %w: %w", s.path, len(points), store.ErrUnavailable, err)
	}
	for k, id := range created {
		s.ids[k] = id
		measurement, canon, _ := strings.Cut(k, "\x00")
		if err := s.index.add(measurement, canon, id); err != nil {
			return fmt.Errorf("embedded store %s: %w", s.path, err)
		}
	}
	if refused > 0 {
		return &store.SeriesLimitError{Store: "embedded store " + s.path, Refused: refused, Limit: s.maxSeries()}
	}
	return nil
}

func (s *Store) maxSeries() int { return cmp.Or(s.opts.MaxSeries, DefaultMaxSeries) }

// refusesData reports whether a failed write was bbolt refusing the points
// themselves (a measurement or tag set too large for a key), which no retry
// fixes, rather than the file failing.
func refusesData(err error) bool {
	for _, e := range []error{berrors.ErrKeyTooLarge, berrors.ErrKeyRequired, berrors.ErrValueTooLarge,
		berrors.ErrIncompatibleValue, berrors.ErrBucketNameRequired} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// encode resolves each point's series id (creating new series in tx and
// recording them in created) and encodes its key and value. The points of
// new series past the series limit are left out and counted (refused).
func (s *Store) encode(tx *bolt.Tx, points []store.Point, created map[string]uint64) (entries []entry, refused int, err error) {
	keys := make([]byte, len(points)*keyLen)
	values := make([]byte, len(points)*8)
	entries = make([]entry, 0, len(points))
	room := s.maxSeries() - s.index.len()
	for i, p := range points {
		canon := store.CanonicalTags(p.Tags)
		id, ok, err := s.seriesID(tx, p.Measurement, canon, created, room-len(created) > 0)
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			refused++
			continue
		}
		k := keys[i*keyLen : (i+1)*keyLen : (i+1)*keyLen]
		putID(k, id)
		encodeTime(k[idLen:], p.Time)
		v := values[i*8 : (i+1)*8 : (i+1)*8]
		putValue(v, p.Value)
		entries = append(entries, entry{measurement: p.Measurement, key: k, value: v})
	}
	return entries, refused, nil
}

// seriesID returns the id of a series, creating it in tx when new and
// room allows (ok false: a new series with no room).
func (s *Store) seriesID(tx *bolt.Tx, measurement, canon string, created map[string]uint64, room bool) (id uint64, ok bool, err error) {
	cacheKey := measurement + "\x00" + canon
	if id, ok := s.ids[cacheKey]; ok {
		return id, true, nil
	}
	if id, ok := created[cacheKey]; ok {
		return id, true, nil
	}
	if m := tx.Bucket(bucketMeasurements).Bucket([]byte(measurement)); m != nil {
		if series := m.Bucket(bucketSeries); series != nil {
			if v := series.Get([]byte(canon)); v != nil {
				id := decodeID(v)
				s.ids[cacheKey] = id // committed earlier, so safe to cache now
				return id, true, nil
			}
		}
	}
	if !room {
		return 0, false, nil
	}
	m, err := tx.Bucket(bucketMeasurements).CreateBucketIfNotExists([]byte(measurement))
	if err != nil {
		return 0, false, fmt.Errorf("measurement %q: %w", measurement, err)
	}
	series, err := m.CreateBucketIfNotExists(bucketSeries)
	if err != nil {
		return 0, false, fmt.Errorf("measurement %q: %w", measurement, err)
	}
	if id, err = series.NextSequence(); err != nil {
		return 0, false, fmt.Errorf("measurement %q: new series: %w", measurement, err)
	}
	if err := series.Put([]byte(canon), encodeID(id)); err != nil {
		return 0, false, fmt.Errorf("measurement %q: new series %s: %w", measurement, canon, err)
	}
	created[cacheKey] = id
	return id, true, nil
}

func (s *Store) put(tx *bolt.Tx, entries []entry) error {
	var points *bolt.Bucket
	current := ""
	for _, e := range entries {
		if points == nil || e.measurement != current {
			m := tx.Bucket(bucketMeasurements).Bucket([]byte(e.measurement))
			var err error
			if points, err = m.CreateBucketIfNotExists(bucketPoints); err != nil {
				return fmt.Errorf("measurement %q: %w", e.measurement, err)
			}
			// Keys of one series arrive mostly in time order: pack pages
			// fuller than the default half, as appends would.
			points.FillPercent = 0.9
			current = e.measurement
		}
		if err := points.Put(e.key, e.value); err != nil {
			return fmt.Errorf("measurement %q: %w", e.measurement, err)
		}
	}
	return nil
}

// seriesRef is one series of a measurement matched by a query.
type seriesRef struct {
	id   uint64
	tags map[string]string
}

// Query returns the series of q.Measurement whose tags include q.Match,
// over [q.Start, q.End), raw or aggregated to q.Step (see the package doc).
// Series without points in the range are left out. A query expression
// (q.Expr, PromQL) is refused: this store has no query language.
func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	if err := store.RefuseExpr(q, "embedded"); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	refs := s.index.match(q.Measurement, q.Match)
	if len(refs) == 0 {
		return nil, nil
	}
	var out []store.Series
	err := s.db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeasurements).Bucket([]byte(q.Measurement))
		if m == nil {
			return nil
		}
		points := m.Bucket(bucketPoints)
		if points == nil {
			return nil
		}
		for _, ref := range refs {
			if err := ctx.Err(); err != nil {
				return err
			}
			samples := scan(points.Cursor(), ref.id, q)
			if len(samples) == 0 {
				continue
			}
			out = append(out, store.Series{Measurement: q.Measurement, Tags: maps.Clone(ref.tags), Samples: samples})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("embedded store %s: query %s: %w", s.path, q.Measurement, err)
	}
	return out, nil
}

// scan reads one series' points in [q.Start, q.End) and aggregates them
// when q.Step is set.
func scan(c *bolt.Cursor, id uint64, q store.Query) []store.Sample {
	from, to := pointKey(id, q.Start), pointKey(id, q.End)
	var raw []store.Sample
	var agg *aggregator
	if q.Step > 0 {
		agg = newAggregator(q.Aggregate, q.Step)
	}
	for k, v := c.Seek(from); k != nil && bytes.Compare(k, to) < 0; k, v = c.Next() {
		t, val := decodeTime(k[idLen:]), decodeValue(v)
		if agg != nil {
			agg.add(t, val)
		} else {
			raw = append(raw, store.Sample{Time: t, Value: val})
		}
	}
	if agg != nil {
		return agg.samples()
	}
	return raw
}
