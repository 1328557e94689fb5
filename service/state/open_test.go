package state_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/service/state"
)

// filled writes a state file of a few hundred pools, large enough that
// damage in its middle hits their pages, and returns its path.
func filled(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := state.Open(path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		pool := fmt.Sprint("pool-", i)
		if err := db.SaveActuator(pool, actuator.Memory{LastChange: actuator.Change{To: i}}); err != nil {
			t.Fatal(err)
		}
		db.SaveDecision(pool, 1, make([]byte, 500), 10)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A damaged state file is refused at Open with an error that names the
// file and says what to do, for serve and for a read-only preview alike;
// bbolt's assertions on the damaged pages never reach the caller as a
// panic.
func TestDamagedFileIsRefusedAtOpen(t *testing.T) {
	cases := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated in the middle", func(b []byte) []byte { return b[:len(b)/2] }},
		{"truncated after its meta pages", func(b []byte) []byte { return b[:3*4096] }},
		{"its last page in use cut off", func(b []byte) []byte {
			return b[:(newestMeta(b, 40)-1)*4096]
		}},
		{"freelist page overwritten", func(b []byte) []byte {
			free := newestMeta(b, 32)
			clear(b[free*4096 : (free+1)*4096])
			return b
		}},
		{"its root page overwritten", func(b []byte) []byte {
			root := newestMeta(b, 16)
			for i := root * 4096; i < (root+1)*4096; i++ {
				b[i] = 0xab
			}
			return b
		}},
		{"empty", func([]byte) []byte { return nil }},
	}
	for _, tc := range cases {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/read-only=%v", tc.name, ro), func(t *testing.T) {
				path := filled(t)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, tc.damage(data), 0o600); err != nil {
					t.Fatal(err)
				}
				db, err := state.Open(path, state.Options{ReadOnly: ro})
				if err == nil {
					db.Close()
					t.Fatal("opened a damaged file")
				}
				if !errors.Is(err, state.ErrCorrupt) {
					t.Errorf("error %v, want ErrCorrupt", err)
				}
				for _, want := range []string{path, "move it aside", "--state"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
			})
		}
	}
}

// newestMeta reads the uint64 at offset field of the meta struct (16: the
// root page, 32: the freelist page, 40: the high-water mark) from the meta
// page of the later transaction of a bbolt file of 4 KiB pages.
func newestMeta(b []byte, field int) int {
	at := func(page, off int) int { return int(binary.NativeEndian.Uint64(b[page*4096+16+off:])) }
	page := 0
	if at(1, 48) > at(0, 48) {
		page = 1
	}
	return at(page, field)
}

// withFormat writes a bbolt file whose meta/format is format (nil: no meta
// bucket) and whose pool "a" holds values, as stored (no sequence
// numbers added).
func withFormat(t *testing.T, format []byte, values map[string][]byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if format != nil {
			meta, err := tx.CreateBucket([]byte("meta"))
			if err != nil {
				return err
			}
			if err := meta.Put([]byte("format"), format); err != nil {
				return err
			}
		}
		pools, err := tx.CreateBucket([]byte("pools"))
		if err != nil {
			return err
		}
		b, err := pools.CreateBucket([]byte("a"))
		if err != nil {
			return err
		}
		for k, v := range values {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A file of a newer format, or of none, is refused with a message that
// says which; serve never reads it as if it were its own.
func TestOtherFormatsAreRefused(t *testing.T) {
	cases := []struct {
		name   string
		format []byte
		want   error
		says   string
	}{
		{"newer", []byte("prewarm-state/3"), state.ErrVersion, "newer prewarm"},
		{"not prewarm's", []byte("something-else/1"), state.ErrCorrupt, "not a prewarm state file"},
		{"no format", nil, state.ErrCorrupt, "no format version"},
	}
	for _, tc := range cases {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/read-only=%v", tc.name, ro), func(t *testing.T) {
				path := withFormat(t, tc.format, map[string][]byte{"mode": []byte("null")})
				db, err := state.Open(path, state.Options{ReadOnly: ro})
				if err == nil {
					db.Close()
					t.Fatal("opened")
				}
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), path) {
					t.Errorf("error %q, want %v saying %q and the path", err, tc.want, tc.says)
				}
			})
		}
	}
}

// A format-1 file, whose values were stored without sequence numbers, is
// migrated by serve: what it held is read back, and later saves win over
// it. A read-only open (a preview) refuses it rather than misread it.
func TestFormatOneIsMigrated(t *testing.T) {
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	mem := actuator.Memory{LastChange: actuator.Change{At: at, From: 1, To: 5, RequestID: "r1"}}
	memJSON, err := json.Marshal(mem)
	if err != nil {
		t.Fatal(err)
	}
	refit, _ := at.Add(time.Hour).MarshalText()
	path := withFormat(t, []byte("prewarm-state/1"), map[string][]byte{
		"actuator": memJSON, "controller": {0x05, 1, 2, 3, 4, 5}, "next_refit": refit,
		"mode": []byte(`{"mode":"paused","config_mode":"active"}`),
	})
	if _, err := state.Open(path, state.Options{ReadOnly: true}); !errors.Is(err, state.ErrVersion) {
		t.Errorf("read-only open of format 1: %v, want ErrVersion", err)
	}
	db, err := state.Open(path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Load("a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Actuator == nil || got.Actuator.LastChange != mem.LastChange || string(got.Controller) != "\x05\x01\x02\x03\x04\x05" ||
		!got.NextRefit.Equal(at.Add(time.Hour)) || got.Mode == nil || got.Mode.Mode != "paused" {
		t.Errorf("migrated %+v", got)
	}
	if err := db.SaveActuator("a", actuator.Memory{LastChange: actuator.Change{To: 7, Pending: true}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := state.Open(path, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open after the migration: %v", err)
	}
	defer ro.Close()
	if got, err := ro.Load("a"); err != nil || got.Actuator == nil || got.Actuator.LastChange.To != 7 {
		t.Errorf("after a save: %+v, %v", got.Actuator, err)
	}
}

// Whatever bytes the state file holds, Open returns a database or
// ErrCorrupt; it never ends the process. The seeds are a healthy file and
// that file cut or overwritten at a few places.
func FuzzOpen(f *testing.F) {
	healthy, err := os.ReadFile(filled(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(healthy)
	f.Add(healthy[:len(healthy)/2])
	f.Add(healthy[:3*4096])
	f.Add(append(append([]byte{}, healthy[:4096]...), make([]byte, 4096)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ro := range []bool{true, false} {
			path := filepath.Join(t.TempDir(), "state.db")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := state.Open(path, state.Options{ReadOnly: ro})
			if err != nil {
				if !errors.Is(err, state.ErrCorrupt) && !errors.Is(err, state.ErrVersion) {
					t.Errorf("read-only=%v: error %v is neither ErrCorrupt nor ErrVersion", ro, err)
				}
				continue
			}
			db.Close()
		}
	})
}
