package election

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// newStore is a Store on a fresh stand-in.
func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := NewStore(newReplica(t, newServer(t)).client.CoreV1(), "ns", "prewarm-shard")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreRoundTripAndStaleVersions(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	data, version, err := s.Get(ctx, 7)
	if err != nil || data != nil || version != "" {
		t.Fatalf("empty shard: %q, %q, %v", data, version, err)
	}
	if err := s.Put(ctx, 7, []byte("one"), ""); err != nil {
		t.Fatal(err)
	}
	data, first, err := s.Get(ctx, 7)
	if err != nil || string(data) != "one" || first == "" {
		t.Fatalf("after the first put: %q, %q, %v", data, first, err)
	}
	cases := []struct {
		name, version string
		wantConflict  bool
	}{
		{"current version", first, false},
		{"the same version again", first, true},
		{"create over existing state", "", true},
	}
	for _, tc := range cases {
		err := s.Put(ctx, 7, []byte(tc.name), tc.version)
		if got := errors.Is(err, ErrConflict); got != tc.wantConflict {
			t.Errorf("%s: error %v, conflict %v, want %v", tc.name, err, got, tc.wantConflict)
		}
	}
	if data, _, _ := s.Get(ctx, 7); string(data) != "current version" {
		t.Fatalf("stored %q, want the one accepted write", data)
	}
	if other, _, _ := s.Get(ctx, 8); other != nil {
		t.Fatalf("shard 8 has shard 7's state: %q", other)
	}
}

func TestConcurrentPutsOfOneVersionHaveOneWinner(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if err := s.Put(ctx, 3, []byte("base"), ""); err != nil {
		t.Fatal(err)
	}
	_, version, err := s.Get(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 4
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Put(ctx, 3, []byte{byte('a' + i)}, version)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, ErrConflict):
			t.Fatalf("a losing put failed otherwise: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d puts won, want 1 (errors %v)", wins, errs)
	}
}

func TestStoreRefusesStateOverOneMiB(t *testing.T) {
	s := newStore(t)
	err := s.Put(context.Background(), 0, make([]byte, MaxStateBytes+1), "")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1048571") {
		t.Fatalf("oversized put: %v, want ErrTooLarge naming the limit", err)
	}
	if err := s.Put(context.Background(), 0, make([]byte, MaxStateBytes), ""); err != nil {
		t.Fatalf("put of exactly the limit: %v", err)
	}
}

func TestNewStoreNamesTheYAMLKey(t *testing.T) {
	cases := []struct{ namespace, prefix, want string }{
		{"", "prewarm-shard", "election.namespace"},
		{"ns", "Bad_Prefix", "election.shard_prefix"},
	}
	if _, err := NewStore(nil, "ns", "prewarm-shard"); err == nil {
		t.Error("a store without a client was accepted")
	}
	maps := newReplica(t, newServer(t)).client.CoreV1()
	for _, tc := range cases {
		if _, err := NewStore(maps, tc.namespace, tc.prefix); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewStore(%q, %q): %v, want an error naming %s", tc.namespace, tc.prefix, err, tc.want)
		}
	}
}
