package buffer

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSpoolRecover opens a spool whose segment holds arbitrary bytes after
// some good records (a crash, a bad disk): no panic, the good records come
// back first and in order, and the buffer drains to empty.
// Run: go test ./collector/buffer -run=^$ -fuzz=FuzzSpoolRecover -fuzztime=20s
func FuzzSpoolRecover(f *testing.F) {
	good, err := encodeRecord(batch(0, 3))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add(good[:len(good)/2])
	f.Add(append(append([]byte{}, good[:headerBytes]...), 0xff, 0xff))
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 9, 'n', 'u', 'l', 'l'})
	f.Fuzz(func(t *testing.T, junk []byte) {
		dir := t.TempDir()
		seg := append(append([]byte{}, good...), junk...)
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(segmentPath(dir, firstSegment))), seg, 0o640); err != nil {
			t.Fatal(err)
		}
		b, err := New(Options{SpoolDir: dir})
		if err != nil {
			t.Fatalf("New over a damaged spool: %v", err)
		}
		defer b.Close()
		for i := 0; ; i++ {
			pts, n, err := b.Peek(1000)
			if err != nil {
				t.Fatalf("Peek: %v", err)
			}
			if n == 0 {
				break
			}
			if i == 0 && (len(pts) < 3 || pts[0].Value != 0 || pts[1].Value != 1 || pts[2].Value != 2) {
				t.Fatalf("the good record did not come back first: %v", pts)
			}
			if err := b.Ack(n); err != nil {
				t.Fatalf("Ack: %v", err)
			}
			if i > 1000 {
				t.Fatal("spool does not drain")
			}
		}
		if st := b.Stats(); st.SpoolPoints != 0 || st.MemoryPoints != 0 {
			t.Fatalf("drained buffer reports %+v", st)
		}
	})
}

// FuzzSpoolCursor opens a spool of three good records with an arbitrary
// cursor file (damaged, stale, hand-edited): no panic, and what comes back
// is always a run of whole records ending with the last one, in order, so
// a bad cursor can repeat records but never yield half of one or reorder
// them.
// Run: go test ./collector/buffer -run=^$ -fuzz=FuzzSpoolCursor -fuzztime=20s
func FuzzSpoolCursor(f *testing.F) {
	var seg []byte
	var starts []int64
	for i := range 3 {
		rec, err := encodeRecord(batch(i*4, 4))
		if err != nil {
			f.Fatal(err)
		}
		starts = append(starts, int64(len(seg)))
		seg = append(seg, rec...)
	}
	id := fmt.Sprint(firstSegment)
	f.Add([]byte(""))
	f.Add([]byte(fmt.Sprintf("%s %d\n", id, starts[1])))
	f.Add([]byte(fmt.Sprintf("%s %d\n", id, starts[1]+3)))
	f.Add([]byte(fmt.Sprintf("%s %d\n%s 0\n", id, len(seg), id)))
	f.Add([]byte(fmt.Sprintf("%s -5\n7 7 7\n\x00", id)))
	f.Fuzz(func(t *testing.T, cursor []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(segmentPath(dir, firstSegment), seg, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, cursorFile), cursor, 0o640); err != nil {
			t.Fatal(err)
		}
		b, err := New(Options{SpoolDir: dir})
		if err != nil {
			t.Fatalf("New with cursor %q: %v", cursor, err)
		}
		defer b.Close()
		var got []float64
		for i := 0; ; i++ {
			pts, n, err := b.Peek(3)
			if err != nil {
				t.Fatalf("Peek: %v", err)
			}
			if n == 0 {
				break
			}
			for _, p := range pts {
				got = append(got, p.Value)
			}
			if err := b.Ack(n); err != nil {
				t.Fatalf("Ack: %v", err)
			}
			if i > 10 {
				t.Fatal("spool does not drain")
			}
		}
		if len(got)%4 != 0 {
			t.Fatalf("cursor %q: %d points back, not whole records of 4", cursor, len(got))
		}
		from := 12 - len(got)
		for i, v := range got {
			if v != float64(from+i) {
				t.Fatalf("cursor %q: got %v, want a run of records ending at 11", cursor, got)
			}
		}
		if st := b.Stats(); st.SpoolPoints != 0 || st.CorruptPoints != 0 {
			t.Fatalf("drained buffer reports %+v", st)
		}
	})
}

// FuzzParseCursor checks that what writeCursor writes, parseCursor reads
// back, and that no input makes it panic or yield a negative offset.
// Run: go test ./collector/buffer -run=^$ -fuzz=FuzzParseCursor -fuzztime=20s
func FuzzParseCursor(f *testing.F) {
	f.Add([]byte("1099511627776 200\n1099511627777 12\n"), uint64(5), int64(9))
	f.Add([]byte("x y\n-1 -1\n1 2 3\n"), uint64(0), int64(0))
	f.Fuzz(func(t *testing.T, raw []byte, seg uint64, off int64) {
		for k, v := range parseCursor(raw) {
			if v < 0 {
				t.Fatalf("parseCursor(%q) gave offset %d for %d", raw, v, k)
			}
		}
		if off <= 0 {
			return
		}
		line := fmt.Appendf(nil, "%d %d\n", seg, off)
		if got := parseCursor(line); len(got) != 1 || got[seg] != off {
			t.Fatalf("parseCursor(%q) = %v", line, got)
		}
	})
}
