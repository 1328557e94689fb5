package traceeval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadReference(t *testing.T) {
	builtin, err := ReadReference(strings.NewReader(Reference), "built in")
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "ref.csv")
	if err := os.WriteFile(copyPath, []byte(Reference), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		wantN      int
		wantErr    string
	}{
		{"the built-in copy", "", len(builtin), ""},
		{"none", "none", 0, ""},
		{"a file", copyPath, len(builtin), ""},
		{"a file that does not open names the flag", filepath.Join(t.TempDir(), "absent.csv"), 0, "--reference: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadReference(tt.path, "--reference")
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != tt.wantN {
				t.Errorf("LoadReference = %d scores, %v; want %d", len(got), err, tt.wantN)
			}
		})
	}
}

func TestExportWindows(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path, wantErr string
	}{
		{"writes the file", filepath.Join(dir, "w.csv"), ""},
		{"a file that cannot be created names the flag", filepath.Join(dir, "missing", "w.csv"), "--export-windows: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ExportWindows(tt.path, "--export-windows", nil)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(tt.path); err != nil {
				t.Errorf("no file written: %v", err)
			}
		})
	}
}
