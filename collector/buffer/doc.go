// Package buffer holds the points the collector could not write yet, so that
// nothing is lost while the store is down.
//
// A Buffer is a FIFO of batches. Batches stay in memory up to a bound
// (Options.MemoryPoints); beyond it they are appended to a spool on disk: a
// directory of segment files, each a sequence of records framed as
//
//	uint32 length (big-endian) | uint32 CRC-32C of payload | payload (JSON)
//
// Once anything is spooled, newer batches are spooled too until the spool is
// drained, so batches always leave in the order they arrived: memory first
// (it holds the oldest), then the spool. The read position within the head
// segment is saved in a small "cursor" file after every Ack, so a restarted
// collector resumes where it stopped; Close writes the batches still in
// memory to a segment placed before the spool's head, keeping the order.
//
// The spool is deliberately simple (append, read, delete whole segments): it
// is a queue, not a database, and needs no compaction.
package buffer
