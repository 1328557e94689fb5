package datasets

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLoadNYCTaxi loads the 10,320-row NAB trace.
//
//	go test -run='^$' -bench=. -benchtime=20x ./datasets
func BenchmarkLoadNYCTaxi(b *testing.B) {
	path := filepath.Join(Locate(), "traces", "nyc_taxi.csv")
	if _, err := LoadCSV(path, CSVOptions{}); err != nil {
		b.Skipf("nyc_taxi.csv not loadable (set %s): %v", EnvDir, err)
	}
	for b.Loop() {
		if _, err := LoadCSV(path, CSVOptions{Counts: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerate30DaysPerMinute generates the backtest's benchmark
// input: 30 days of per-minute demand.
func BenchmarkGenerate30DaysPerMinute(b *testing.B) {
	g := DefaultSynthetic()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		g.Generate(start, time.Minute, 30*24*60)
	}
}
