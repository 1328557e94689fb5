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
	// MemoryPoints is how many points are held in memory before batches go
	// to the spool. Zero means DefaultMemoryPoints.
	MemoryPoints int
	// SpoolDir is the directory of the disk spool; empty disables it.
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

// Stats is a snapshot of a Buffer's contents and losses.
type Stats struct {
	MemoryPoints, SpoolPoints int
	SpoolBytes                int64
	// DroppedPoints counts points lost: refused because every bound was
	// full (or the spool failed), plus CorruptPoints.
	DroppedPoints int64
	// CorruptPoints counts spooled points lost to damaged records (a disk
	// error, a crash mid-write on a machine without a write cache flush).
	CorruptPoints int64
}

// Buffer is a bounded FIFO of point batches, in memory then on disk. It is
// safe for concurrent use by one producer (Push) and one consumer (Peek,
// Ack).
type Buffer struct {
	mu        sync.Mutex
	opts      Options
	mem       [][]store.Point
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
		s, err := openSpool(opts.SpoolDir, opts.SegmentBytes)
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

// Push appends one batch. It returns an error only when the batch could not
// be kept (buffer closed, spool full or failing); the batch's points are then
// counted as dropped.
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
	spooling := b.spool != nil && b.spool.points > 0
	if !spooling && b.memPoints+len(points) <= b.opts.MemoryPoints {
		b.mem = append(b.mem, points)
		b.memPoints += len(points)
		return nil
	}
	if b.spool == nil {
		b.dropped += int64(len(points))
		return fmt.Errorf("buffer full (%d points in memory, no spool configured): dropped %d points", b.memPoints, len(points))
	}
	if b.spool.bytes >= b.opts.SpoolMaxBytes {
		b.dropped += int64(len(points))
		return fmt.Errorf("spool %s full (%d bytes): dropped %d points", b.opts.SpoolDir, b.spool.bytes, len(points))
	}
	if err := b.spool.append(points); err != nil {
		b.dropped += int64(len(points))
		return fmt.Errorf("spool %s: %w", b.opts.SpoolDir, err)
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
	if len(b.mem) > 0 {
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
	if b.spool != nil && b.spool.points > 0 {
		return b.spool.peek(maxPoints)
	}
	return nil, 0, nil
}

// Ack removes the n oldest batches, which the caller has written.
func (b *Buffer) Ack(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if len(b.mem) > 0 {
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
	if b.spool == nil {
		return fmt.Errorf("ack of %d batches but the buffer is empty", n)
	}
	return b.spool.ack(n)
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
	}
	return s
}

// Close persists the batches still in memory to the spool (ahead of what it
// already holds) when a spool is configured, and releases its files. Without
// a spool, points still in memory are lost and Close says how many.
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
	var err error
	if len(b.mem) > 0 {
		err = b.spool.prepend(b.mem)
		b.mem, b.memPoints = nil, 0
	}
	return errors.Join(err, b.spool.close())
}
