package buffer

import (
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
