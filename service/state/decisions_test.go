package state_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prewarm/prewarm/service/state"
)

func seqs(page []state.Record) []uint64 {
	out := make([]uint64, len(page))
	for i, r := range page {
		out[i] = r.Seq
	}
	return out
}

// A pool's decisions are paged newest first, survive a reopen, and only the
// newest keep are kept.
func TestDecisionsPagedAndPruned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := state.Open(path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := db.LastDecision("a"); err != nil || r.Seq != 0 {
		t.Fatalf("empty history: last %+v, %v", r, err)
	}
	const keep = 10
	for seq := uint64(1); seq <= 25; seq++ {
		db.SaveDecision("a", seq, []byte(fmt.Sprintf(`{"n":%d}`, seq)), keep)
		db.Flush()
	}
	db.SaveDecision("b", 1, []byte(`{}`), keep)
	db.Close()

	db, err = state.Open(path, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	last, err := db.LastDecision("a")
	if err != nil || last.Seq != 25 || string(last.Value) != `{"n":25}` {
		t.Fatalf("last = %d %s, %v", last.Seq, last.Value, err)
	}
	tests := []struct {
		name     string
		pool     string
		before   uint64
		limit    int
		want     []uint64
		wantMore bool
	}{
		{"newest page", "a", 0, 4, []uint64{25, 24, 23, 22}, true},
		{"next page", "a", 22, 4, []uint64{21, 20, 19, 18}, true},
		{"last page: pruned beyond keep", "a", 18, 4, []uint64{17, 16}, false},
		{"cursor past the newest", "a", 1000, 2, []uint64{25, 24}, true},
		{"cursor before the oldest", "a", 16, 4, nil, false},
		{"whole history", "a", 0, 500, []uint64{25, 24, 23, 22, 21, 20, 19, 18, 17, 16}, false},
		{"other pool", "b", 0, 10, []uint64{1}, false},
		{"unknown pool", "c", 0, 10, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, more, err := db.Decisions(tt.pool, tt.before, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got := seqs(page); !slices.Equal(got, tt.want) || more != tt.wantMore {
				t.Errorf("page %v more %v, want %v more %v", got, more, tt.want, tt.wantMore)
			}
		})
	}
	for _, limit := range []int{0, -1, state.MaxPage + 1} {
		if _, _, err := db.Decisions("a", 0, limit); !errors.Is(err, state.ErrBadPage) {
			t.Errorf("limit %d: err %v, want ErrBadPage", limit, err)
		}
	}
}
