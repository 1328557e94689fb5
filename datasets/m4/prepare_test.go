package m4

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPrepare(t *testing.T) {
	mk := func(n int) []Series {
		out := make([]Series, n)
		for i := range out {
			out[i] = Series{ID: string(rune('A' + i)), Train: make([]float64, 200), Test: make([]float64, HourlyHorizon)}
		}
		return out
	}
	empty := t.TempDir()
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, HourlyResults), []byte("not,a\nresults,file,at,all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		dir       string
		split     Split
		limit     int
		wantN     int
		wantTrain int
		wantErr   bool
	}{
		{"all series on the official split, no results file", empty, SplitOfficial, 0, 3, 200, false},
		{"the first two", empty, SplitOfficial, 2, 2, 200, false},
		{"a limit past the count keeps all", empty, SplitOfficial, 9, 3, 200, false},
		{"holdout cuts the horizon off the training values", empty, SplitHoldout, 0, 3, 200 - HourlyHorizon, false},
		{"holdout reads no results file", broken, SplitHoldout, 1, 1, 200 - HourlyHorizon, false},
		{"a results file that does not read is an error", broken, SplitOfficial, 1, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, official, err := Prepare(mk(3), tt.dir, tt.split, tt.limit)
			if tt.wantErr {
				if err == nil {
					t.Fatal("Prepare: no error, want one")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.wantN || len(got[0].Train) != tt.wantTrain || official != nil {
				t.Errorf("Prepare: %d series, train %d, official %v; want %d, %d, none", len(got), len(got[0].Train), official, tt.wantN, tt.wantTrain)
			}
		})
	}
}
