package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/storetest"
)

func openTemp(t testing.TB, opts embedded.Options) (*embedded.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prewarm.db")
	s, err := embedded.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, path
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := openTemp(t, embedded.Options{})
		return s
	})
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t, embedded.Options{})
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	tags := map[string]string{"pool": "a"}
	if err := s.Write(ctx, []store.Point{{Measurement: "m", Tags: tags, Value: 1, Time: at}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A new point of the same series after reopening must join that series
	// (the id comes from the file, not a fresh cache).
	if err := s.Write(ctx, []store.Point{{Measurement: "m", Tags: tags, Value: 2, Time: at.Add(time.Second)}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query(ctx, store.Query{Measurement: "m", Start: at, End: at.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Samples) != 2 {
		t.Fatalf("after reopen got %+v, want one series of 2 samples", got)
	}
}

func TestSecondOpenFailsClearly(t *testing.T) {
	s, path := openTemp(t, embedded.Options{})
	defer s.Close()
	_, err := embedded.Open(path, embedded.Options{LockTimeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("second Open = %v, want a 'locked by another process' error", err)
	}
}

func TestOpenRejectsOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not-a-db")
	if err := os.WriteFile(path, []byte("hello, this is not bbolt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.Open(path, embedded.Options{LockTimeout: 50 * time.Millisecond}); err == nil {
		t.Fatal("Open of a text file succeeded")
	}
}

func TestRetention(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	path := filepath.Join(t.TempDir(), "prewarm.db")
	s, err := embedded.Open(path, embedded.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	// 30 days of hourly points for two series; one of them stops writing
	// 10 days ago, so retention of 7 days must drop it from the index too.
	var points []store.Point
	for h := range 30 * 24 {
		at := now.Add(-time.Duration(h) * time.Hour)
		points = append(points, store.Point{Measurement: "gpu_util", Tags: map[string]string{"gpu": "0"}, Value: 1, Time: at})
		if h >= 10*24 {
			points = append(points, store.Point{Measurement: "gpu_util", Tags: map[string]string{"gpu": "1"}, Value: 1, Time: at})
		}
	}
	if err := s.Write(ctx, points); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Open with retention sweeps at once.
	s, err = embedded.Open(path, embedded.Options{Now: clock, Retention: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Query(ctx, store.Query{Measurement: "gpu_util", Start: now.Add(-60 * 24 * time.Hour), End: now.Add(time.Hour),
		Step: 24 * time.Hour * 365, Aggregate: store.Count})
	if err != nil {
		t.Fatal(err)
	}
	// Points at now-0h .. now-168h are not older than 7 days (the one at
	// now-168h is exactly 7 days old and kept); now-169h is older.
	if len(got) != 1 || got[0].Tags["gpu"] != "0" {
		t.Fatalf("after retention got %d series (%v), want only gpu 0", len(got), got)
	}
	var n float64
	for _, smp := range got[0].Samples {
		n += smp.Value
	}
	if n != 7*24+1 {
		t.Fatalf("gpu 0 kept %v points, want %d", n, 7*24+1)
	}
	// Writing the dropped series again creates it afresh.
	if err := s.Write(ctx, []store.Point{{Measurement: "gpu_util", Tags: map[string]string{"gpu": "1"}, Value: 5, Time: now}}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Query(ctx, store.Query{Measurement: "gpu_util", Match: map[string]string{"gpu": "1"}, Start: now, End: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Samples) != 1 || got[0].Samples[0].Value != 5 {
		t.Fatalf("rewritten series: got %+v", got)
	}
}

func TestRetentionRunsPeriodically(t *testing.T) {
	ctx := context.Background()
	var nowNS atomic.Int64
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	nowNS.Store(start.UnixNano())
	clock := func() time.Time { return time.Unix(0, nowNS.Load()) }
	s, _ := openTemp(t, embedded.Options{Now: clock, Retention: time.Hour, RetentionInterval: 10 * time.Millisecond})
	defer s.Close()
	if err := s.Write(ctx, []store.Point{{Measurement: "m", Value: 1, Time: start}}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		got, err := s.Query(ctx, store.Query{Measurement: "m", Start: start, End: start.Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	time.Sleep(50 * time.Millisecond) // a few sweeps: the point is not yet old
	if count() != 1 {
		t.Fatal("point deleted before it expired")
	}
	nowNS.Store(start.Add(2 * time.Hour).UnixNano())
	for deadline := time.Now().Add(10 * time.Second); count() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("expired point still there 10 s after it expired")
		}
	}
}

func TestDeleteBeforeInChunks(t *testing.T) {
	// More expired points than one retention transaction deletes, spread
	// over several series, all must go.
	ctx := context.Background()
	s, _ := openTemp(t, embedded.Options{NoSync: true})
	defer s.Close()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var points []store.Point
	for i := range 50_000 {
		points = append(points, store.Point{Measurement: "m", Tags: map[string]string{"s": fmt.Sprint(i % 3)}, Value: 1,
			Time: at.Add(time.Duration(i) * time.Second)})
	}
	if err := s.Write(ctx, points); err != nil {
		t.Fatal(err)
	}
	cutoff := at.Add(45_000 * time.Second)
	n, err := s.DeleteBefore(ctx, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if n != 45_000 {
		t.Fatalf("deleted %d, want 45000", n)
	}
	got, err := s.Query(ctx, store.Query{Measurement: "m", Start: at, End: at.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, ser := range got {
		left += len(ser.Samples)
		if ser.Samples[0].Time.Before(cutoff) {
			t.Fatalf("series %v kept a point at %s, before the cutoff", ser.Tags, ser.Samples[0].Time)
		}
	}
	if left != 5_000 {
		t.Fatalf("%d points left, want 5000", left)
	}
}

func TestWriteCancelled(t *testing.T) {
	s, _ := openTemp(t, embedded.Options{})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Write(ctx, []store.Point{{Measurement: "m", Value: 1, Time: time.Now()}})
	if err == nil {
		t.Fatal("Write with a cancelled context succeeded")
	}
}

func TestBeforeEpoch(t *testing.T) {
	// Keys order times before 1970 correctly, and windows align by floor.
	ctx := context.Background()
	s, _ := openTemp(t, embedded.Options{})
	defer s.Close()
	at := time.Unix(-90, 0).UTC() // 1969-12-31T23:58:30Z
	var points []store.Point
	for i := range 4 {
		points = append(points, store.Point{Measurement: "m", Value: float64(i), Time: at.Add(time.Duration(i) * 30 * time.Second)})
	}
	if err := s.Write(ctx, points); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query(ctx, store.Query{Measurement: "m", Start: at, End: at.Add(time.Hour), Step: time.Minute, Aggregate: store.Sum})
	if err != nil {
		t.Fatal(err)
	}
	// Points at -90 s, -60 s, -30 s, 0 s: windows [-120,-60): 0; [-60,0): 1+2; [0,60): 3.
	want := []store.Sample{{Time: time.Unix(-120, 0).UTC(), Value: 0}, {Time: time.Unix(-60, 0).UTC(), Value: 3}, {Time: time.Unix(0, 0).UTC(), Value: 3}}
	if len(got) != 1 || fmt.Sprint(got[0].Samples) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// BenchmarkWrite: go test ./store/embedded -run '^$' -bench Write -benchtime 20x
func BenchmarkWrite(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		for _, batch := range []int{1000, 10_000} {
			b.Run(fmt.Sprintf("batch=%d/nosync=%v", batch, noSync), func(b *testing.B) {
				s, _ := openTemp(b, embedded.Options{NoSync: noSync})
				defer s.Close()
				storetest.BenchWrite(b, s, 200, batch)
			})
		}
	}
}

// BenchmarkQuery reads four weeks of one GPU sampled every 10 s (241,920
// points) back as hourly means, as the forecaster does:
// go test ./store/embedded -run '^$' -bench Query -benchtime 10x
func BenchmarkQuery(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b, embedded.Options{NoSync: true})
	defer s.Close()
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	const n = 4 * 7 * 24 * 360
	tags := map[string]string{"pool": "a", "gpu": "0"}
	points := make([]store.Point, 0, 10_000)
	for i := range n {
		points = append(points, store.Point{Measurement: "gpu_util", Tags: tags, Value: float64(i % 100), Time: at.Add(time.Duration(i) * 10 * time.Second)})
		if len(points) == cap(points) || i == n-1 {
			if err := s.Write(ctx, points); err != nil {
				b.Fatal(err)
			}
			points = points[:0]
		}
	}
	q := store.Query{Measurement: "gpu_util", Match: map[string]string{"pool": "a"}, Start: at, End: at.Add(4 * 7 * 24 * time.Hour),
		Step: time.Hour, Aggregate: store.Mean}
	b.ResetTimer()
	for b.Loop() {
		got, err := s.Query(ctx, q)
		if err != nil || len(got) != 1 || len(got[0].Samples) != 4*7*24 {
			b.Fatalf("Query = %d series, %v", len(got), err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "points/s")
}

// A write the file cannot take (here: the store is closed; in the field a
// full disk) wraps store.ErrUnavailable so the collector keeps the batch;
// points bbolt refuses as such (a tag set longer than a key may be) do
// not, so one bad batch cannot stall the queue forever.
func TestWriteErrorClassification(t *testing.T) {
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	s, _ := openTemp(t, embedded.Options{NoSync: true})
	huge := map[string]string{"pod": strings.Repeat("p", 40_000)}
	err := s.Write(context.Background(), []store.Point{{Measurement: "m", Tags: huge, Value: 1, Time: at}})
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Write of a 40 kB tag set = %v, want a permanent error", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	err = s.Write(context.Background(), []store.Point{{Measurement: "m", Value: 1, Time: at}})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Write to a closed store = %v, want store.ErrUnavailable", err)
	}
}

// Past its series limit the store writes the points of the series it has
// and refuses those of new ones, saying how many; a series whose points
// expire frees its place, also after a reopen.
func TestSeriesLimit(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	s, path := openTemp(t, embedded.Options{MaxSeries: 3})
	pt := func(id int, at time.Time) store.Point {
		return store.Point{Measurement: "requests", Tags: map[string]string{"request_id": fmt.Sprint(id)}, Value: 1, Time: at}
	}
	batch := []store.Point{pt(1, t0), pt(2, t0), pt(3, t0), pt(4, t0), pt(5, t0)}
	var limit *store.SeriesLimitError
	if err := s.Write(ctx, batch); !errors.As(err, &limit) || limit.Refused != 2 || limit.Limit != 3 || !errors.Is(err, store.ErrSeriesLimit) {
		t.Fatalf("write of 5 series into a limit of 3: %v, want 2 refused", err)
	}
	// Known series still take points; a new one does not.
	if err := s.Write(ctx, []store.Point{pt(1, t0.Add(time.Minute)), pt(3, t0.Add(time.Minute))}); err != nil {
		t.Errorf("points of known series: %v", err)
	}
	if err := s.Write(ctx, []store.Point{pt(6, t0.Add(time.Minute))}); !errors.As(err, &limit) || limit.Refused != 1 {
		t.Errorf("a sixth series: %v, want it refused", err)
	}
	series, err := s.Query(ctx, store.Query{Measurement: "requests", Start: t0.Add(-time.Hour), End: t0.Add(time.Hour)})
	if err != nil || len(series) != 3 {
		t.Fatalf("query: %d series, %v; want 3", len(series), err)
	}
	// Series 2 has only its first point: expiring it frees one place.
	if _, err := s.DeleteBefore(ctx, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = embedded.Open(path, embedded.Options{MaxSeries: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(ctx, []store.Point{pt(7, t0.Add(2*time.Minute)), pt(8, t0.Add(2*time.Minute))}); !errors.As(err, &limit) || limit.Refused != 1 {
		t.Errorf("after series 2 expired and a reopen: %v, want one of two new series in", err)
	}
}
