package datasets

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestLoadCSVTellsWhatItFound(t *testing.T) {
	tests := []struct {
		name    string
		csv     string
		args    []string
		wantErr string
		wantOut []string
	}{
		{"a clean file says nothing", "t,v\n2024-01-01T00:00:00Z,1\n2024-01-01T00:01:00Z,2\n2024-01-01T00:02:00Z,3\n", nil, "", nil},
		{"a bad row refuses the file and is listed", "t,v\n2024-01-01T00:00:00Z,1\n2024-01-01T00:01:00Z,x\n2024-01-01T00:02:00Z,3\n", nil,
			"1 bad rows", []string{"demand.csv:3"}},
		{"a skipped row is told as a repair", "t,v\n2024-01-01T00:00:00Z,1\n2024-01-01T00:01:00Z,x\n2024-01-01T00:02:00Z,3\n2024-01-01T00:03:00Z,4\n",
			[]string{"--skip-bad"}, "", []string{"forecaster test: the input needed repairs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "demand.csv")
			if err := os.WriteFile(path, []byte(tt.csv), 0o600); err != nil {
				t.Fatal(err)
			}
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			var f CSVFlags
			f.Register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			_, err := LoadCSVTelling(&out, "forecaster test", path, f.Options())
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("told %q, want it to contain %q", out.String(), w)
				}
			}
			if tt.wantOut == nil && out.Len() > 0 {
				t.Errorf("told %q for a clean file", out.String())
			}
		})
	}
}
