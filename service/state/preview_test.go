package state

import (
	"log/slog"
	"path/filepath"
	"testing"
)

func TestOpenFor(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	db, err := Open(existing, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	tests := []struct {
		name    string
		path    string
		preview bool
		wantDB  bool
	}{
		{"serving opens (creating) the file", filepath.Join(dir, "new.db"), false, true},
		{"a preview without a file goes without", filepath.Join(dir, "absent.db"), true, false},
		{"a preview reads an existing file", existing, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := OpenFor(tt.path, tt.preview, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if (st != nil) != tt.wantDB {
				t.Fatalf("OpenFor: got a DB %v, want %v", st != nil, tt.wantDB)
			}
			if st != nil {
				st.Close()
			}
		})
	}
	t.Run("a preview goes without a file a serve holds", func(t *testing.T) {
		held, err := Open(existing, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		st, err := OpenFor(existing, true, slog.New(slog.DiscardHandler))
		if err != nil || st != nil {
			t.Errorf("OpenFor = %v, %v; want nil, nil while another holds the file", st, err)
		}
	})
}
