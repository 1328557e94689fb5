package buffer

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
// batches are not repeated, memory batches saved at Close come first.
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
	// Memory holds 0..19; spool holds 20..59. Write out 0..9 only.
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
