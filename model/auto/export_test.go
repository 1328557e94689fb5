package auto

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/datasets/m4"
)

// TestExportBenchmarkSeries writes the series the speed benchmarks
// forecast (BenchmarkForecastM4's M4 series and BenchmarkForecastPerMinute's
// 40,320 synthetic per-minute points), one value a line, into the folder
// named by PREWARM_EXPORT, for testdata/r_speed.R to time R on the same
// numbers:
//
//	PREWARM_EXPORT=/tmp/speed go test -run TestExportBenchmarkSeries ./model/auto
//	Rscript model/auto/testdata/r_speed.R /tmp/speed
func TestExportBenchmarkSeries(t *testing.T) {
	dir := os.Getenv("PREWARM_EXPORT")
	if dir == "" {
		t.Skip("set PREWARM_EXPORT to a folder to write the benchmark series")
	}
	series, err := m4.LoadHourly(m4Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, x []float64) {
		var b strings.Builder
		for _, v := range x {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("m4_"+series[benchM4Series].ID+".txt", series[benchM4Series].Train)
	write("per_minute.txt", perMinuteSeries())
}
