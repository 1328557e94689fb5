// Package embedded is prewarm's default time-series store: one local file,
// no server to run.
//
// It is built on bbolt (go.etcd.io/bbolt), the B+tree key/value store that
// etcd and Consul keep their state in. bbolt is pure Go (no cgo, so prewarm
// cross-compiles and ships as a static binary), keeps everything in a single
// file, and gives ACID transactions with one writer and many concurrent
// readers: a Write either lands whole or not at all, even if the process is
// killed mid-way. SQLite would need cgo (or a transpiled driver far larger
// than the store itself); Pebble is an LSM built for much larger write
// volumes than one fleet's metrics and keeps a directory of files.
//
// # Layout
//
// The only format this package defines is its key encoding; everything else
// is bbolt's. A bucket "meta" holds the layout's version ("format"), which
// Open checks. A bucket "measurements" holds one nested bucket per
// measurement, which holds two buckets:
//
//	series: CanonicalTags(tags) (JSON)        -> series id (uint64, big-endian)
//	points: series id (8 bytes) + time (8 bytes) -> value (float64 bits, big-endian)
//
// The time is the Unix time in nanoseconds with its sign bit flipped, so that
// byte order is time order (also before 1970). Because a series' points are
// contiguous and sorted, a range query is one cursor Seek and a forward scan.
// Writing the same series at the same time again replaces the value, as
// InfluxDB does.
//
// # Series index
//
// Open reads every series key once and keeps an in-memory index: per
// measurement, each series' tags and, per tag key and value, the series
// that carry it. A query picks its series from the shortest list of its
// matchers, so its cost grows with the series it returns, not with every
// series in the file (one pool's read among 1,000 pools of 3 series takes
// 6 µs, against 4 ms for a scan of every series key). Only one process
// opens a file, so Write and retention keep the index in step after each
// commit.
//
// # Aggregation
//
// A query with a Step returns one sample per window that holds at least one
// point, with InfluxDB's aggregateWindow semantics: windows are [k·Step,
// (k+1)·Step) counted from the Unix epoch, clipped to the query range, and a
// sample's Time is the window's start (aligned to the epoch even when the
// query's Start is not). Windows without points are left out.
//
// # Retention
//
// With Options.Retention set, points older than now−Retention are deleted on
// Open and then every Options.RetentionInterval; series left without points
// are dropped from the index.
//
// # Durability and speed
//
// Every Write is one bbolt transaction, so batch many points per Write: the
// cost of a commit (an fsync) is paid per batch, not per point. By default a
// commit is on disk when Write returns. Options.NoSync skips the fsync:
// several times faster for small batches, but a machine crash (not a process
// crash) can lose the last writes or corrupt the file, so it is meant for
// tests and scratch data. The freelist is not synced (bbolt's
// NoFreelistSync, as etcd does) and kept as a hash map: commits write fewer
// pages, at the cost of a scan of the file on Open to rebuild it.
package embedded
