package datasets

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tracesDir returns the shared traces folder or skips the test.
func tracesDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(Locate(), "traces")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("recorded traces not found at %s (set %s to the shared datasets folder): %v", dir, EnvDir, err)
	}
	return dir
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestLoadTraces loads each recorded trace by path and checks it against the
// row counts, steps and spans documented in the datasets README.
func TestLoadTraces(t *testing.T) {
	dir := tracesDir(t)
	tests := []struct {
		file       string
		opts       CSVOptions
		rows       int
		step       time.Duration
		start      string
		len        int // steps in the series
		missing    int // NaN steps (gaps in the trace)
		duplicates int
		firstValue float64
	}{
		{file: "nyc_taxi.csv", opts: CSVOptions{Counts: true}, rows: 10320, step: 30 * time.Minute,
			start: "2014-07-01T00:00:00Z", len: 10320, firstValue: 10844},
		{file: "alibaba_sd_requests_hourly.csv", opts: CSVOptions{Counts: true}, rows: 554, step: time.Hour,
			start: "2024-11-15T16:00:00Z", len: 554, firstValue: 1},
		// 1,145 samples on a 57 s grid with 47 holes (265 missing steps).
		{file: "alibaba_sd_qps.csv", opts: CSVOptions{ValueColumn: "generative_qps_sum"}, rows: 1145, step: 57 * time.Second,
			start: "2022-09-11T01:19:36Z", len: 1410, missing: 265, firstValue: 0},
		{file: "alibaba_sd_qps.csv", opts: CSVOptions{ValueColumn: "api_qps_sum"}, rows: 1145, step: 57 * time.Second,
			start: "2022-09-11T01:19:36Z", len: 1410, missing: 265, firstValue: 0.09},
		{file: "alibaba_sd_gpu_util.csv", opts: CSVOptions{ValueColumn: "mean_gpu_util_pct"}, rows: 1441, step: 57 * time.Second,
			start: "2022-09-11T01:12:00Z", len: 1441, firstValue: 0.505},
		{file: "alibaba_sd_gpu_util.csv", opts: CSVOptions{ValueColumn: "pods_reporting"}, rows: 1441, step: 57 * time.Second,
			start: "2022-09-11T01:12:00Z", len: 1441, firstValue: 110},
	}
	for _, tt := range tests {
		t.Run(tt.file+":"+tt.opts.ValueColumn, func(t *testing.T) {
			s, rep, err := LoadCSVReport(filepath.Join(dir, tt.file), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(rep.String())
			if rep.Rows != tt.rows || rep.Accepted != tt.rows {
				t.Errorf("rows read %d, accepted %d; want %d (README)", rep.Rows, rep.Accepted, tt.rows)
			}
			if s.Step != tt.step || !rep.StepInferred {
				t.Errorf("step %v (inferred %v), want inferred %v", s.Step, rep.StepInferred, tt.step)
			}
			if !s.Start.Equal(mustTime(t, tt.start)) {
				t.Errorf("start %v, want %s", s.Start, tt.start)
			}
			if s.Len() != tt.len || s.Missing() != tt.missing || rep.Missing != tt.missing {
				t.Errorf("len %d missing %d (report %d), want %d and %d", s.Len(), s.Missing(), rep.Missing, tt.len, tt.missing)
			}
			if len(rep.Duplicates) != tt.duplicates || len(rep.OutOfOrder) != 0 || len(rep.Bad) != 0 {
				t.Errorf("duplicates %d, out of order %d, bad %d; want %d, 0, 0", len(rep.Duplicates), len(rep.OutOfOrder), len(rep.Bad), tt.duplicates)
			}
			if s.Values[0] != tt.firstValue {
				t.Errorf("first value %v, want %v", s.Values[0], tt.firstValue)
			}
			if s.Index {
				t.Error("Index = true for a file with real timestamps")
			}
		})
	}
}

// TestLoadTracesNeedsValueColumn checks that a wide trace without a chosen
// column fails with an error listing the columns.
func TestLoadTracesNeedsValueColumn(t *testing.T) {
	dir := tracesDir(t)
	_, err := LoadCSV(filepath.Join(dir, "alibaba_sd_gpu_util.csv"), CSVOptions{})
	want := `alibaba_sd_gpu_util.csv:1: choose the value column with --value-column: the columns are "timestamp_anon", "pods_reporting", "mean_gpu_util_pct", "sum_gpu_util_pct", "pods_util_gt0"`
	if err == nil || !endsWith(err.Error(), want) {
		t.Fatalf("error %v, want one ending in %s", err, want)
	}
}

func endsWith(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// TestLoadArrivalTraces counts the per-request traces per minute and checks
// the totals against the files' row counts.
func TestLoadArrivalTraces(t *testing.T) {
	dir := tracesDir(t)
	tests := []struct {
		file  string
		opts  ArrivalOptions
		rows  int
		total float64 // sum of the series
		start string
		len   int
	}{
		// Spans: first and last arrival truncated to the minute, e.g. 18:17 to 19:14 = 58 minutes.
		{file: "azure_llm_2023_code.csv", rows: 8819, total: 8819, start: "2023-11-16T18:17:00Z", len: 58},
		{file: "azure_llm_2023_conv.csv", rows: 19366, total: 19366, start: "2023-11-16T18:15:00Z", len: 60},
		{file: "alibaba_sd_inference_ms.csv", rows: 6254, total: 6254, start: "2022-09-11T01:21:00Z", len: 1338}, // (1662939489-1662859260)/60 = 1337.15,
		{file: "alibaba_sd_model_load_ms.csv", rows: 7531, total: 7531},
		{file: "azure_llm_2023_code.csv", opts: ArrivalOptions{Step: time.Hour}, rows: 8819, total: 8819, start: "2023-11-16T18:00:00Z", len: 2},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, rep, err := readArrivalsFile(filepath.Join(dir, tt.file), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Rows != tt.rows || rep.Accepted != tt.rows {
				t.Errorf("rows %d accepted %d, want %d", rep.Rows, rep.Accepted, tt.rows)
			}
			if got := sum(s.Values); got != tt.total {
				t.Errorf("total %v, want %v", got, tt.total)
			}
			if s.Missing() != 0 {
				t.Errorf("%d NaN values in an arrival count", s.Missing())
			}
			if tt.start != "" && (!s.Start.Equal(mustTime(t, tt.start)) || s.Len() != tt.len) {
				t.Errorf("start %v len %d, want %s and %d", s.Start, s.Len(), tt.start, tt.len)
			}
		})
	}
}

func readArrivalsFile(path string, opts ArrivalOptions) (Series, Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return Series{}, Report{}, err
	}
	defer f.Close()
	return ReadArrivals(f, path, opts)
}

func sum(vs []float64) float64 {
	total := 0.0
	for _, v := range vs {
		if !math.IsNaN(v) {
			total += v
		}
	}
	return total
}

// TestResampleTraces resamples recorded traces and checks totals and bucket
// values computed independently:
//
//	awk -F, 'NR>1{s+=$2} END{printf "%.0f\n", s}' nyc_taxi.csv                   # 156219716
//	awk -F, 'NR>1{s+=$2} END{printf "%.0f\n", s}' alibaba_sd_requests_hourly.csv # 26823
//	python3: 5-minute buckets of alibaba_sd_gpu_util.csv, (t//300)*300:
//	  275 buckets from 1662858600, the first holding 55.6, 15.067, 17.733, 0.0 of sum_gpu_util_pct
func TestResampleTraces(t *testing.T) {
	dir := tracesDir(t)
	nyc := filepath.Join(dir, "nyc_taxi.csv")
	hourly, err := LoadCSV(nyc, CSVOptions{Counts: true, Step: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if hourly.Len() != 5160 || hourly.Missing() != 0 || sum(hourly.Values) != 156219716 {
		t.Errorf("nyc_taxi hourly: %d steps, %d missing, total %v; want 5160, 0, 156219716", hourly.Len(), hourly.Missing(), sum(hourly.Values))
	}
	half, err := LoadCSV(nyc, CSVOptions{Counts: true})
	if err != nil {
		t.Fatal(err)
	}
	viaResample, err := Resample(half, time.Hour, AggregateSum)
	if err != nil {
		t.Fatal(err)
	}
	if !sameValues(viaResample.Values, hourly.Values) || !viaResample.Start.Equal(hourly.Start) {
		t.Error("Resample(30 min → 1 h) differs from loading at 1 h")
	}
	if perSec := hourly.PerSecond(); perSec.Values[0] != hourly.Values[0]/3600 {
		t.Errorf("PerSecond: %v, want %v", perSec.Values[0], hourly.Values[0]/3600)
	}

	sd, err := LoadCSV(filepath.Join(dir, "alibaba_sd_requests_hourly.csv"), CSVOptions{Counts: true, Step: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if sd.Len() != 554 || sum(sd.Values) != 26823 {
		t.Errorf("alibaba hourly: %d steps, total %v; want 554, 26823", sd.Len(), sum(sd.Values))
	}

	gpu, rep, err := LoadCSVReport(filepath.Join(dir, "alibaba_sd_gpu_util.csv"),
		CSVOptions{ValueColumn: "sum_gpu_util_pct", Step: 5 * time.Minute, Aggregate: AggregateMax})
	if err != nil {
		t.Fatal(err)
	}
	if gpu.Len() != 275 || gpu.Start.Unix() != 1662858600 || gpu.Values[0] != 55.6 || rep.StepInferred {
		t.Errorf("gpu util at 5 min: %d steps from %d, first %v; want 275 from 1662858600, first 55.6", gpu.Len(), gpu.Start.Unix(), gpu.Values[0])
	}
}
