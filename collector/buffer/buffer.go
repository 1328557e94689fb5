package buffer

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prewarm/prewarm/store"
)

// Options bound a Buffer. The zero value keeps up to DefaultMemoryPoints in
// memory and has no spool: beyond the bound, new batches are dropped and
// counted.
type Options struct {
	// MemoryPoints bounds the points held in memory. Without a spool it is
	// the buffer's capacity. With a spool every batch is on disk and
	// MemoryPoints only bounds the copies of the newest batches kept in
	// memory, so that the writer does not read them back from disk. Zero
	// means DefaultMemoryPoints.
	MemoryPoints int
	// SpoolDir is the directory of the write-ahead spool; empty disables it.
	SpoolDir string
	// SpoolMaxBytes bounds the spool's size on disk; zero means
	// DefaultSpoolMaxBytes. Batches beyond it are dropped and counted.
	SpoolMaxBytes int64
	// SegmentBytes is the size at which a new spool segment is started;
	// zero means DefaultSegmentBytes.
	SegmentBytes int64
}

// Defaults for Options' zero fields.
const (
	DefaultMemoryPoints  = 100_000
	DefaultSpoolMaxBytes = 1 << 30
	DefaultSegmentBytes  = 16 << 20
)

// ErrClosed is returned by operations on a closed Buffer.
var ErrClosed = errors.New("buffer closed")

// ErrFull wraps Push's error when the batch was dropped because a bound was
// reached (MemoryPoints without a spool, SpoolMaxBytes with one). Any other
// Push error means the spool could not be written (a full disk, an I/O
// error): errors.Is(err, syscall.ENOSPC) tells a full disk.
var ErrFull = errors.New("buffer full")

// Stats is a snapshot of a Buffer's contents and losses.
type Stats struct {
	// MemoryPoints counts points held in memory only (no spool): a crash
	// would lose them. With a spool it is zero.
	MemoryPoints int
	// SpoolPoints counts points on disk, not yet acknowledged.
	SpoolPoints int
	SpoolBytes  int64
	// DroppedPoints counts points lost: refused because a bound was
	// reached or the spool failed, plus CorruptPoints.
	DroppedPoints int64
	// CorruptPoints counts spooled points lost to damaged records (a disk
	// error).
	CorruptPoints int64
	// Syncs counts the fsyncs of spool segments, one per Push at most.
	Syncs int64
}

// Buffer is a bounded FIFO of point batches, in memory or in a write-ahead
// spool on disk. It is safe for concurrent use by one producer (Push) and
// one consumer (Peek, Ack).
type Buffer struct {
	mu        sync.Mutex
	opts      Options
	mem       [][]store.Point // without a spool only
	memPoints int
	spool     *spool // nil without SpoolDir
	dropped   int64
	closed    bool
	notify    chan struct{}
}

// New returns a Buffer; with a SpoolDir it creates the directory if needed
// and reopens any spool a previous run left there.
func New(opts Options) (*Buffer, error) {
	if opts.MemoryPoints <= 0 {
		opts.MemoryPoints = DefaultMemoryPoints
	}
	if opts.SpoolMaxBytes <= 0 {
		opts.SpoolMaxBytes = DefaultSpoolMaxBytes
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	b := &Buffer{opts: opts, notify: make(chan struct{}, 1)}
	if opts.SpoolDir != "" {
		s, err := openSpool(opts.SpoolDir, opts.SegmentBytes, opts.MemoryPoints)
		if err != nil {
			return nil, err
		}
		b.spool = s
	}
	return b, nil
}

// Ready is signalled (without blocking) after each Push, so a consumer can
// wait for work.
func (b *Buffer) Ready() <-chan struct{} { return b.notify }

// Push appends one batch. With a spool it returns once the batch is
// fsynced to disk. It returns an error only when the batch could not be
// kept (buffer closed, ErrFull, a spool write that failed); the batch's
// points are then counted as dropped. Push keeps points (without copying):
// the caller must not modify them afterwards.
func (b *Buffer) Push(points []store.Point) error {
	if len(points) == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.signal()
	if b.closed {
		b.dropped += int64(len(points))
		return ErrClosed
	}
	if b.spool == nil {
		if b.memPoints+len(points) > b.opts.MemoryPoints {
			b.dropped += int64(len(points))
			return fmt.Errorf("%w (%d points in memory, no spool configured): dropped %d points", ErrFull, b.memPoints, len(points))
		}
		b.mem = append(b.mem, points)
		b.memPoints += len(points)
		return nil
	}
	if b.spool.bytes >= b.opts.SpoolMaxBytes {
		b.dropped += int64(len(points))
		return fmt.Errorf("%w: spool %s holds %d bytes (the limit): dropped %d points", ErrFull, b.opts.SpoolDir, b.spool.bytes, len(points))
	}
	if err := b.spool.append(points); err != nil {
		b.dropped += int64(len(points))
		return fmt.Errorf("spool %s: dropped %d points: %w", b.opts.SpoolDir, len(points), err)
	}
	return nil
}

func (b *Buffer) signal() {
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// Peek returns the oldest batches, concatenated, up to maxPoints points (but
// always at least one whole batch when any is held), and how many batches
// that is; pass the count to Ack once they are written. It returns (nil, 0,
// nil) when the buffer is empty.
func (b *Buffer) Peek(maxPoints int) ([]store.Point, int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, 0, ErrClosed
	}
	if b.spool != nil {
		return b.spool.peek(maxPoints)
	}
	var out []store.Point
	n := 0
	for _, batch := range b.mem {
		if n > 0 && len(out)+len(batch) > maxPoints {
			break
		}
		out = append(out, batch...)
		n++
	}
	return out, n, nil
}

// Ack removes the n oldest batches, which the caller has written.
func (b *Buffer) Ack(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if b.spool != nil {
		return b.spool.ack(n)
	}
	if n > len(b.mem) {
		return fmt.Errorf("ack of %d batches but %d in memory", n, len(b.mem))
	}
	for _, batch := range b.mem[:n] {
		b.memPoints -= len(batch)
	}
	clear(b.mem[:n])
	b.mem = b.mem[n:]
	return nil
}

// Stats reports what the buffer holds and has dropped.
func (b *Buffer) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Stats{MemoryPoints: b.memPoints, DroppedPoints: b.dropped}
	if b.spool != nil {
		s.SpoolPoints = b.spool.points
		s.SpoolBytes = b.spool.bytes
		s.CorruptPoints = b.spool.corrupt
		s.DroppedPoints += b.spool.corrupt
		s.Syncs = b.spool.syncs
	}
	return s
}

// Close releases the spool's files (everything in it is already on disk).
// Without a spool, points still in memory are lost and Close says how many.
func (b *Buffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.spool == nil {
		if b.memPoints > 0 {
			return fmt.Errorf("buffer closed with %d unwritten points and no spool", b.memPoints)
		}
		return nil
	}
	return b.spool.close()
}
