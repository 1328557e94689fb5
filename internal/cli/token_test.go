package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, empty := write("good", "  tok-file  \nsecond line\n"), write("empty", "\n\n")
	tests := []struct {
		name, env, file, want, wantErr string
	}{
		{"the environment wins", " tok-env ", good, "tok-env", ""},
		{"the file's first line", "", good, "tok-file", ""},
		{"neither: no token", "", "", "", ""},
		{"an empty file is an error", "", empty, "", "--tok: token file"},
		{"a missing file is an error", "", filepath.Join(dir, "none"), "", "--tok: reading token file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadToken(func(string) string { return tt.env }, "TOK", tt.file, "--tok")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ReadToken = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
