package buffer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

// batch returns n points whose values continue a global sequence starting at
// first, so order and completeness can be checked by value.
func batch(first, n int) []store.Point {
	out := make([]store.Point, n)
	for i := range out {
		out[i] = store.Point{
			Measurement: "gpu_util",
			Tags:        map[string]string{"gpu": "0"},
			Value:       float64(first + i),
			Time:        time.Unix(int64(first+i), 0).UTC(),
		}
	}
	return out
}

// drain reads everything from b in chunks of maxPoints and returns the values.
func drain(t *testing.T, b *Buffer, maxPoints int) []float64 {
	t.Helper()
	var got []float64
	for {
		pts, n, err := b.Peek(maxPoints)
		if err != nil {
			t.Fatalf("Peek: %v", err)
		}
		if n == 0 {
			return got
		}
		for _, p := range pts {
			got = append(got, p.Value)
		}
		if err := b.Ack(n); err != nil {
			t.Fatalf("Ack(%d): %v", n, err)
		}
	}
}

func wantSequence(t *testing.T, got []float64, from, to int) {
	t.Helper()
	if len(got) != to-from {
		t.Fatalf("got %d points, want %d", len(got), to-from)
	}
	for i, v := range got {
		if v != float64(from+i) {
			t.Fatalf("point %d has value %v, want %d (order or loss)", i, v, from+i)
		}
	}
}

func TestBufferOrder(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		batches   int
		batchSize int
		peekMax   int
	}{
		{"memory only", Options{MemoryPoints: 1000}, 10, 10, 25},
		{"spills to spool", Options{MemoryPoints: 35, SegmentBytes: 400}, 20, 10, 25},
		{"spool only", Options{MemoryPoints: 1, SegmentBytes: 1 << 20}, 7, 3, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.MemoryPoints < 1000 {
				tc.opts.SpoolDir = t.TempDir()
			}
			b, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			for i := range tc.batches {
				if err := b.Push(batch(i*tc.batchSize, tc.batchSize)); err != nil {
					t.Fatalf("Push %d: %v", i, err)
				}
			}
			st := b.Stats()
			if st.MemoryPoints+st.SpoolPoints != tc.batches*tc.batchSize {
				t.Fatalf("stats %+v, want %d points held", st, tc.batches*tc.batchSize)
			}
			wantSequence(t, drain(t, b, tc.peekMax), 0, tc.batches*tc.batchSize)
			if st := b.Stats(); st.MemoryPoints != 0 || st.SpoolPoints != 0 || st.SpoolBytes != 0 {
				t.Fatalf("after drain stats = %+v, want empty", st)
			}
		})
	}
}

// Pushes that arrive while the spool is being drained must queue behind it.
func TestBufferInterleavedPushAndDrain(t *testing.T) {
	b, err := New(Options{MemoryPoints: 10, SpoolDir: t.TempDir(), SegmentBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	next := 0
	push := func() {
		if err := b.Push(batch(next, 4)); err != nil {
			t.Fatal(err)
		}
		next += 4
	}
	for range 10 {
		push()
	}
	var got []float64
	for range 30 {
		pts, n, err := b.Peek(6)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			got = append(got, p.Value)
		}
		if n > 0 {
			if err := b.Ack(n); err != nil {
				t.Fatal(err)
			}
		}
		push()
	}
	got = append(got, drain(t, b, 100)...)
	wantSequence(t, got, 0, next)
}

func TestBufferWithoutSpoolDropsAndCounts(t *testing.T) {
	b, err := New(Options{MemoryPoints: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Push(batch(0, 8)); err != nil {
		t.Fatal(err)
	}
	if err := b.Push(batch(8, 5)); err == nil {
		t.Fatal("Push beyond the bound without a spool: want an error")
	}
	if got := b.Stats().DroppedPoints; got != 5 {
		t.Fatalf("DroppedPoints = %d, want 5", got)
	}
	wantSequence(t, drain(t, b, 100), 0, 8)
}

func TestBufferSpoolFull(t *testing.T) {
	b, err := New(Options{MemoryPoints: 1, SpoolDir: t.TempDir(), SpoolMaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Push(batch(0, 5)); err != nil {
		t.Fatal(err)
	}
	if err := b.Push(batch(5, 5)); err == nil {
		t.Fatal("Push into a full spool: want an error")
	}
	if got := b.Stats().DroppedPoints; got != 5 {
		t.Fatalf("DroppedPoints = %d, want 5", got)
	}
}

// A restarted collector resumes where the previous one stopped: acked
// batches are not repeated, and none is lost, including those whose copy
// was also held in memory.
func TestBufferSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	b, err := New(Options{MemoryPoints: 20, SpoolDir: dir, SegmentBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if err := b.Push(batch(i*5, 5)); err != nil {
			t.Fatal(err)
		}
	}
	// Everything is on disk; memory also caches 0..19. Write out 0..9 only.
	if _, n, err := b.Peek(10); err != nil || n != 2 {
		t.Fatalf("Peek = %d batches, %v; want 2", n, err)
	}
	if err := b.Ack(2); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b2, err := New(Options{MemoryPoints: 20, SpoolDir: dir, SegmentBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	// Read part of the spool, then restart again mid-segment.
	if _, n, err := b2.Peek(12); err != nil || n != 2 {
		t.Fatalf("Peek = %d batches, %v; want 2", n, err)
	}
	if err := b2.Ack(2); err != nil {
		t.Fatal(err)
	}
	if err := b2.Close(); err != nil {
		t.Fatal(err)
	}
	b3, err := New(Options{MemoryPoints: 20, SpoolDir: dir, SegmentBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer b3.Close()
	wantSequence(t, drain(t, b3, 7), 20, 60)
	left, _ := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if len(left) != 0 {
		t.Fatalf("segments left after drain: %v", left)
	}
}

// A crash in the middle of an append leaves a torn record; reopening keeps
// every whole record before it.
func TestBufferTornRecord(t *testing.T) {
	dir := t.TempDir()
	b, err := New(Options{MemoryPoints: 1, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := b.Push(batch(i*4, 4)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if len(segs) != 1 {
		t.Fatalf("segments = %v, want 1", segs)
	}
	f, err := os.OpenFile(segs[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0, 0, 1, 0, 9, 9}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b2, err := New(Options{MemoryPoints: 1, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	wantSequence(t, drain(t, b2, 100), 0, 12)
}

// A record whose bytes were damaged on disk is dropped and counted instead
// of stalling the queue.
func TestBufferCorruptRecordSkipped(t *testing.T) {
	dir := t.TempDir()
	b, err := New(Options{MemoryPoints: 1, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := b.Push(batch(i*4, 4)); err != nil {
			t.Fatal(err)
		}
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	f, err := os.OpenFile(segs[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("XX"), headerBytes+3); err != nil { // inside the first payload
		t.Fatal(err)
	}
	f.Close()
	wantSequence(t, drain(t, b, 100), 4, 12)
	if st := b.Stats(); st.DroppedPoints != 4 || st.CorruptPoints != 4 {
		t.Fatalf("DroppedPoints = %d, CorruptPoints = %d, want 4 and 4", st.DroppedPoints, st.CorruptPoints)
	}
	b.Close()
}

// A crash after a drained spool deleted its segments but before it saved
// the cursor leaves a stale cursor entry; a new segment that reuses the
// number must still be read from its start.
func TestBufferStaleCursorIgnored(t *testing.T) {
	dir := t.TempDir()
	stale := []byte("1099511627776 200\n") // firstSegment, past the first records
	if err := os.WriteFile(filepath.Join(dir, cursorFile), stale, 0o640); err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{MemoryPoints: 1, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := b.Push(batch(i*5, 5)); err != nil { // all spooled: over the memory bound
			t.Fatal(err)
		}
	}
	crash(b)
	b2, err := New(Options{MemoryPoints: 1, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	wantSequence(t, drain(t, b2, 100), 0, 30)
}

// A failed append (a full disk, here a closed file) costs only its own
// batch: the next one starts a new segment and everything else reads back.
func TestBufferFailedAppend(t *testing.T) {
	b, err := New(Options{MemoryPoints: 1, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Push(batch(0, 5)); err != nil {
		t.Fatal(err)
	}
	b.spool.tail.Close() // the next write fails
	if err := b.Push(batch(5, 5)); err == nil {
		t.Fatal("Push to a failing spool succeeded")
	}
	if err := b.Push(batch(10, 5)); err != nil {
		t.Fatalf("Push after a failed append: %v", err)
	}
	got := drain(t, b, 100)
	want := []float64{0, 1, 2, 3, 4, 10, 11, 12, 13, 14}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if st := b.Stats(); st.DroppedPoints != 5 {
		t.Errorf("dropped %d points, want 5", st.DroppedPoints)
	}
}

// crash lets go of b's files as a dying process would, without Close's
// saving of the memory queue.
func crash(b *Buffer) {
	if s := b.spool; s != nil {
		if s.tail != nil {
			s.tail.Close()
		}
		if s.lock != nil {
			s.lock.Close()
		}
	}
}

// Two buffers on one spool directory would interleave their segments: the
// second is refused with an error that says what to change.
func TestBufferSpoolDirLocked(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock here: lockDir does nothing")
	}
	dir := t.TempDir()
	b, err := New(Options{SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{SpoolDir: dir}); err == nil || !strings.Contains(err.Error(), "--spool-dir") {
		t.Fatalf("second New on one spool dir = %v, want an error naming --spool-dir", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b2, err := New(Options{SpoolDir: dir})
	if err != nil {
		t.Fatalf("New after Close: %v", err)
	}
	b2.Close()
}

// The write-ahead property: a batch Push returned for survives a crash of
// the process (no Close, no flush: what kill -9 leaves), whether its copy
// was cached in memory or not, and whether the writer had acked the
// batches before it or not.
func TestBufferCrashLosesNothing(t *testing.T) {
	for _, memory := range []int{1, 25, 1000} {
		t.Run(fmt.Sprintf("memory %d", memory), func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{MemoryPoints: memory, SpoolDir: dir, SegmentBytes: 600}
			b, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				if err := b.Push(batch(i*5, 5)); err != nil {
					t.Fatal(err)
				}
			}
			// The writer wrote 0..14 and acked them, then sent 15..24
			// without an ack when the process died.
			if _, n, err := b.Peek(15); err != nil || n != 3 {
				t.Fatalf("Peek = %d, %v", n, err)
			}
			if err := b.Ack(3); err != nil {
				t.Fatal(err)
			}
			if _, _, err := b.Peek(10); err != nil {
				t.Fatal(err)
			}
			crash(b)
			b2, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer b2.Close()
			if st := b2.Stats(); st.SpoolPoints != 85 {
				t.Fatalf("after the crash the spool holds %d points, want 85", st.SpoolPoints)
			}
			wantSequence(t, drain(t, b2, 12), 15, 100)
		})
	}
}

// Push fsyncs the segment once per batch (one per collection cycle), and
// never more.
func TestBufferSyncsOncePerPush(t *testing.T) {
	b, err := New(Options{SpoolDir: t.TempDir(), SegmentBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 30 {
		if err := b.Push(batch(i*3, 3)); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, b, 7)
	if got := b.Stats().Syncs; got != 30 {
		t.Fatalf("%d segment fsyncs for 30 pushes, want 30", got)
	}
}

// What a power cut can do to the spool: the pages of the last append (the
// cycle in flight, whose Push had not returned) are missing, cut short,
// zeroed or garbage, and the cursor may be an older one. Reopening must
// give back every batch whose Push returned, once at least and in order;
// only the batch in flight may be missing.
func TestBufferPowerCut(t *testing.T) {
	src := t.TempDir()
	b, err := New(Options{MemoryPoints: 1, SpoolDir: src})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := b.Push(batch(i*4, 4)); err != nil {
			t.Fatal(err)
		}
	}
	if _, n, _ := b.Peek(4); n != 1 {
		t.Fatal("want one batch")
	}
	if err := b.Ack(1); err != nil { // the cursor now points at batch 1
		t.Fatal(err)
	}
	oldCursor := []byte{} // before the ack: no cursor file at all
	synced := b.spool.tailSize
	inFlight, err := encodeRecord(batch(16, 4))
	if err != nil {
		t.Fatal(err)
	}
	crash(b)
	seg := segmentPath(src, firstSegment)
	whole, err := os.ReadFile(seg)
	if err != nil || int64(len(whole)) != synced {
		t.Fatalf("segment %d bytes (%v), want %d", len(whole), err, synced)
	}
	cursor, err := os.ReadFile(filepath.Join(src, cursorFile))
	if err != nil {
		t.Fatal(err)
	}

	type image struct {
		name   string
		tail   []byte // what follows the synced records
		cursor []byte
		from   int // first value expected back
		to     int // one past the last value expected back
	}
	var images []image
	for cut := 0; cut <= len(inFlight); cut++ {
		to := 16
		if cut == len(inFlight) {
			to = 20 // the whole record made it: it comes back too
		}
		images = append(images, image{fmt.Sprintf("cut at %d", cut), inFlight[:cut], cursor, 4, to})
	}
	images = append(images,
		image{"zeroed tail", make([]byte, len(inFlight)), cursor, 4, 16},
		image{"garbage tail", bytes.Repeat([]byte{0xa5}, len(inFlight)), cursor, 4, 16},
		image{"whole header, garbled payload", append(append([]byte{}, inFlight[:headerBytes]...),
			bytes.Repeat([]byte{'x'}, len(inFlight)-headerBytes)...), cursor, 4, 16},
		image{"older cursor", nil, oldCursor, 0, 16},
		image{"torn cursor", nil, cursor[:len(cursor)-3], 0, 16},
	)
	for _, im := range images {
		t.Run(im.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(seg)), append(append([]byte{}, whole...), im.tail...), 0o640); err != nil {
				t.Fatal(err)
			}
			if len(im.cursor) > 0 {
				if err := os.WriteFile(filepath.Join(dir, cursorFile), im.cursor, 0o640); err != nil {
					t.Fatal(err)
				}
			}
			b, err := New(Options{SpoolDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			wantSequence(t, drain(t, b, 100), im.from, im.to)
			if st := b.Stats(); st.CorruptPoints != 0 {
				t.Errorf("a torn tail counted as %d corrupt points; it was never acknowledged", st.CorruptPoints)
			}
		})
	}
}

// faultyFile writes part of what it is given, then fails as a full disk
// does.
type faultyFile struct {
	f     *os.File
	after int // bytes accepted before ENOSPC; -1: never fail
	sync  error
}

func (ff *faultyFile) Write(p []byte) (int, error) {
	if ff.after < 0 {
		return ff.f.Write(p)
	}
	n := min(len(p), ff.after)
	ff.after -= n
	if _, err := ff.f.Write(p[:n]); err != nil {
		return 0, err
	}
	if n < len(p) {
		return n, syscall.ENOSPC
	}
	return n, nil
}
func (ff *faultyFile) Sync() error {
	if ff.sync != nil {
		return ff.sync
	}
	return ff.f.Sync()
}
func (ff *faultyFile) Truncate(size int64) error { return ff.f.Truncate(size) }
func (ff *faultyFile) Close() error              { return ff.f.Close() }

// A full disk fails the Push with an error that says so (ENOSPC, not
// ErrFull), keeps nothing of the batch on disk (no torn record, no empty
// segment left behind), and costs only that batch.
func TestBufferDiskFull(t *testing.T) {
	tests := []struct {
		name     string
		after    int // bytes the disk takes
		sync     error
		segments int // segment files left after the failed Push
	}{
		{"nothing written, new segment", 0, nil, 0},
		{"half a record, new segment", 30, nil, 0},
		{"fsync fails", -1, syscall.EIO, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b, err := New(Options{SpoolDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			b.spool.create = func(path string) (segmentFile, error) {
				f, err := createSegment(path)
				if err != nil {
					return nil, err
				}
				return &faultyFile{f: f.(*os.File), after: tc.after, sync: tc.sync}, nil
			}
			err = b.Push(batch(0, 5))
			if err == nil || errors.Is(err, ErrFull) {
				t.Fatalf("Push on a full disk = %v, want a disk error that is not ErrFull", err)
			}
			if tc.sync == nil && !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("Push = %v, want it to wrap ENOSPC", err)
			}
			segs, _ := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
			if len(segs) != tc.segments {
				t.Errorf("segment files after the failed Push: %v, want %d", segs, tc.segments)
			}
			if st := b.Stats(); st.DroppedPoints != 5 || st.SpoolPoints != 0 || st.SpoolBytes != 0 {
				t.Errorf("stats after the failed Push: %+v", st)
			}
			b.spool.create = createSegment // the disk has room again
			if err := b.Push(batch(5, 5)); err != nil {
				t.Fatal(err)
			}
			wantSequence(t, drain(t, b, 100), 5, 10)
		})
	}
}

// A failure in a segment that already holds records cuts the partial
// record off: the records before it and the batches after it read back.
func TestBufferDiskFullMidSegment(t *testing.T) {
	dir := t.TempDir()
	b, err := New(Options{SpoolDir: dir, MemoryPoints: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ff := &faultyFile{after: -1}
	b.spool.create = func(path string) (segmentFile, error) {
		f, err := createSegment(path)
		ff.f, _ = f.(*os.File)
		return ff, err
	}
	if err := b.Push(batch(0, 5)); err != nil {
		t.Fatal(err)
	}
	ff.after = 40
	if err := b.Push(batch(5, 5)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Push = %v, want ENOSPC", err)
	}
	b.spool.create = createSegment
	if err := b.Push(batch(10, 5)); err != nil {
		t.Fatal(err)
	}
	crash(b) // read back from disk, not from memory
	b2, err := New(Options{SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	got := drain(t, b2, 100)
	if fmt.Sprint(got) != "[0 1 2 3 4 10 11 12 13 14]" {
		t.Fatalf("read back %v", got)
	}
}

func TestBufferFullIsErrFull(t *testing.T) {
	b, err := New(Options{MemoryPoints: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Push(batch(0, 5)); !errors.Is(err, ErrFull) {
		t.Fatalf("Push beyond the memory bound = %v, want ErrFull", err)
	}
	s, err := New(Options{SpoolDir: t.TempDir(), SpoolMaxBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Push(batch(0, 5))
	if err := s.Push(batch(5, 5)); !errors.Is(err, ErrFull) {
		t.Fatalf("Push beyond spool_max_bytes = %v, want ErrFull", err)
	}
}

// A segment left empty by a crash right after it was created is removed on
// reopening.
func TestBufferEmptySegmentRemoved(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(segmentPath(dir, firstSegment), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if segs, _ := filepath.Glob(filepath.Join(dir, "*"+segmentExt)); len(segs) != 0 {
		t.Fatalf("segments after reopening: %v", segs)
	}
}

// BenchmarkPush is the cost of making one collection cycle durable: append
// and fsync one batch of 448 points (64 GPUs x 7 fields), then ack it as a
// healthy writer would. It is also how long a cycle's points are exposed
// to a power cut.
//
//	go test -run='^$' -bench=BenchmarkPush -benchtime=200x ./collector/buffer
func BenchmarkPush(b *testing.B) {
	buf, err := New(Options{SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	pts := batch(0, 448)
	for b.Loop() {
		if err := buf.Push(pts); err != nil {
			b.Fatal(err)
		}
		if _, n, err := buf.Peek(1000); err != nil || buf.Ack(n) != nil {
			b.Fatal(err)
		}
	}
}
