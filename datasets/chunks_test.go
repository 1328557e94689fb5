package datasets_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/store/embedded"
)

// ImportInChunks writes what one Import would, and reports its progress
// once a chunk, ending at the whole series.
func TestImportInChunks(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	series := func(n, nanAt int) datasets.Series {
		s := datasets.Series{Start: start, Step: time.Minute, Values: make([]float64, n)}
		for i := range s.Values {
			s.Values[i] = float64(i % 17)
		}
		if nanAt >= 0 && nanAt < n {
			s.Values[nanAt] = math.NaN()
		}
		return s
	}
	tests := []struct {
		name        string
		s           datasets.Series
		wantReports int
		wantSteps   int
		wantMissing int
	}{
		{"one chunk", series(10, -1), 1, 10, 0},
		{"several chunks, the last partial", series(2*datasets.ImportChunk+5, 3), 3, 2*datasets.ImportChunk + 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := datasets.ImportOptions{Measurement: "service_request_rate", Tags: map[string]string{"pool": "p"}}
			chunked := openEmbedded(t)
			var reports, lastDone, lastTotal int
			got, err := datasets.ImportInChunks(context.Background(), chunked, tt.s, opts, func(stage string, done, total int) {
				reports++
				lastDone, lastTotal = done, total
			})
			if err != nil {
				t.Fatal(err)
			}
			want, err := datasets.Import(context.Background(), openEmbedded(t), tt.s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != want || got.Steps != tt.wantSteps || got.Missing != tt.wantMissing {
				t.Errorf("ImportInChunks = %+v, Import = %+v; want them equal with %d steps and %d missing", got, want, tt.wantSteps, tt.wantMissing)
			}
			if reports != tt.wantReports || (reports > 0 && (lastDone != len(tt.s.Values) || lastTotal != len(tt.s.Values))) {
				t.Errorf("%d progress reports ending %d/%d, want %d ending at %d", reports, lastDone, lastTotal, tt.wantReports, len(tt.s.Values))
			}
		})
	}
}

// An empty series is refused as Import refuses it.
func TestImportInChunksEmpty(t *testing.T) {
	s := datasets.Series{Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), Step: time.Minute}
	opts := datasets.ImportOptions{Measurement: "m", Tags: map[string]string{"pool": "p"}}
	_, got := datasets.ImportInChunks(context.Background(), openEmbedded(t), s, opts, nil)
	_, want := datasets.Import(context.Background(), openEmbedded(t), s, opts)
	if got == nil || want == nil || got.Error() != want.Error() {
		t.Errorf("ImportInChunks of an empty series: %v; want Import's error %v", got, want)
	}
}

func openEmbedded(t *testing.T) *embedded.Store {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
