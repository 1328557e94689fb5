// Package buffer holds the points the collector has accepted but not yet
// written, so that neither a store outage nor a crash of the collector
// loses them.
//
// A Buffer is a FIFO of batches (one batch per collection cycle). With a
// spool directory (Options.SpoolDir) it is a write-ahead log: Push appends
// the batch to a segment file and fsyncs it before returning, so a point is
// on disk before the cycle that gathered it ends, and the file is synced at
// most once per cycle. The most recent batches are also kept in memory (up
// to Options.MemoryPoints points) so that a healthy writer never reads the
// disk. Segments hold records framed as
//
//	uint32 length | uint32 CRC-32C of payload | uint32 points | payload (JSON)
//
// (big-endian). The read position within the head segment is saved in a
// small "cursor" file after every Ack; the cursor is written to a temporary
// file, fsynced, renamed over the old one, and the directory fsynced, so a
// crash or a power cut leaves the old cursor or the new one. A LOCK file
// (flock) keeps a second collector out of the directory.
//
// # What a crash costs
//
//   - kill -9, an OOM kill, a panic: nothing accepted. Every batch Push
//     returned for is in the page cache, and survives the process; a
//     restarted collector reopens the spool and writes it. The batch the
//     writer had sent but not acknowledged is sent again: points carry
//     their measurement, tags and timestamp on disk, so the store (InfluxDB,
//     the embedded store) overwrites them with identical values instead of
//     doubling them.
//   - A power cut or kernel crash: at most the batch whose Push had not
//     returned (the cycle in flight). Earlier batches were fsynced; the
//     torn or missing tail of the last segment is cut off on reopening. An
//     older cursor makes batches be written twice, never lost.
//
// Records are checked (length and CRC) on reopening. In the last segment
// the first bad record and everything after it are a torn tail and are cut
// off; a bad record in an older, fully synced segment is disk damage: it is
// dropped and its points counted (Stats.CorruptPoints).
//
// Without a spool directory, batches stay in memory up to MemoryPoints and
// are lost on any crash; beyond the bound new batches are dropped and
// counted.
//
// The spool is deliberately simple (append, read, delete whole segments): it
// is a queue, not a database, and needs no compaction.
package buffer
