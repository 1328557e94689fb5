// Package buffer holds the points the collector could not write yet, so that
// nothing is lost while the store is down.
//
// A Buffer is a FIFO of batches. Batches stay in memory up to a bound
// (Options.MemoryPoints); beyond it they are appended to a spool on disk: a
// directory of segment files, each a sequence of records framed as
//
//	uint32 length | uint32 CRC-32C of payload | uint32 points | payload (JSON)
//
// (big-endian).
// Once anything is spooled, newer batches are spooled too until the spool is
// drained, so batches always leave in the order they arrived: memory first
// (it holds the oldest), then the spool. The read position within the head
// segment is saved in a small "cursor" file after every Ack, so a restarted
// collector resumes where it stopped; Close writes the batches still in
// memory to a segment placed before the spool's head, keeping the order.
// The cursor is replaced by rename, so a crash leaves the old or the new one;
// a crash can make a batch be written twice, never lost. A record torn by a
// crash is cut off on reopening; one damaged later fails its CRC and is
// dropped and counted (Stats.CorruptPoints). A LOCK file (flock) keeps a
// second collector out of the directory.
//
// The spool is deliberately simple (append, read, delete whole segments): it
// is a queue, not a database, and needs no compaction.
package buffer
