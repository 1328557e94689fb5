package collector_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/collector/memstore"
	"github.com/prewarm/prewarm/store"
)

// fakeSource returns whatever gather returns.
type fakeSource struct {
	name   string
	gather func() ([]store.Point, error)
}

func (f *fakeSource) Name() string { return f.name }
func (f *fakeSource) Gather(ctx context.Context) ([]store.Point, error) {
	return f.gather()
}

// fakeClock has separate wall and monotonic readings so tests can jump one.
type fakeClock struct {
	mu   sync.Mutex
	wall time.Time
	mono time.Duration
}

func (c *fakeClock) Now() time.Time         { c.mu.Lock(); defer c.mu.Unlock(); return c.wall }
func (c *fakeClock) Elapsed() time.Duration { c.mu.Lock(); defer c.mu.Unlock(); return c.mono }
func (c *fakeClock) step(wall, mono time.Duration) {
	c.mu.Lock()
	c.wall = c.wall.Add(wall)
	c.mono += mono
	c.mu.Unlock()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type harness struct {
	c     *collector.Collector
	store *memstore.Store
	buf   *buffer.Buffer
	reg   *prometheus.Registry
	clock *fakeClock
	logs  *syncBuffer
}

func newHarness(t *testing.T, cfg collector.Config, bopts buffer.Options) *harness {
	t.Helper()
	h := &harness{store: &memstore.Store{}, reg: prometheus.NewRegistry(), logs: &syncBuffer{},
		clock: &fakeClock{wall: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}}
	var err error
	if h.buf, err = buffer.New(bopts); err != nil {
		t.Fatal(err)
	}
	m, err := collector.NewMetrics(h.reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Buffer, cfg.Metrics, cfg.Clock = h.store, h.buf, m, h.clock
	cfg.Logger = slog.New(slog.NewTextHandler(h.logs, nil))
	if h.c, err = collector.New(cfg); err != nil {
		t.Fatal(err)
	}
	return h
}

func gpuPoint(gpu string, v float64) store.Point {
	return store.Point{Measurement: store.GPUUtil, Tags: map[string]string{"gpu": gpu, "host": "h1"}, Value: v}
}

func TestCycleRejectsBadSamples(t *testing.T) {
	var clock *fakeClock
	src := &fakeSource{name: "dcgm:a", gather: func() ([]store.Point, error) {
		now := clock.Now()
		return []store.Point{
			gpuPoint("0", 50),
			gpuPoint("1", math.NaN()),
			gpuPoint("2", math.Inf(1)),
			gpuPoint("3", -4),
			{Measurement: store.GPUUtil, Tags: map[string]string{"gpu": "4"}, Value: 1, Time: now.Add(time.Hour)},
			{Tags: map[string]string{"gpu": "5"}, Value: 1},
			// A label the store cannot keep as a tag would fail the batch.
			{Measurement: store.GPUUtil, Tags: map[string]string{"gpu": "6", "_field": "x"}, Value: 1},
		}, fmt.Errorf("%w: 1 sample without labels", collector.ErrMalformed)
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}}, buffer.Options{})
	clock = h.clock
	var res collector.CycleResult
	for range 3 {
		res = h.c.Cycle(context.Background())
		h.clock.step(10*time.Second, 10*time.Second)
	}
	want := map[string]int{"nan": 2, "negative": 1, "future": 1, "malformed": 2, "invalid": 1}
	for reason, n := range want {
		if res.Rejected[reason] != n {
			t.Errorf("last cycle rejected %d %s, want %d (all: %v)", res.Rejected[reason], reason, n, res.Rejected)
		}
		if got := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_rejected_samples_total", "dcgm:a", reason)); got != float64(3*n) {
			t.Errorf("rejected_samples_total{%s} = %v, want %d", reason, got, 3*n)
		}
	}
	if res.Accepted != 1 {
		t.Errorf("accepted %d points in the last cycle, want 1", res.Accepted)
	}
	if testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_source_up", "dcgm:a")) != 1 {
		t.Error("a source with malformed samples is still up")
	}
	for reason := range want {
		if n := strings.Count(h.logs.String(), "reason="+reason); n != 1 {
			t.Errorf("reason %s logged %d times over 3 cycles, want once:\n%s", reason, n, h.logs.String())
		}
	}
	if err := h.c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range h.store.Points() {
		if p.Tags["gpu"] != "0" {
			t.Errorf("bad sample written: %+v", p)
		}
	}
	if n := len(h.store.Points()); n != 3 {
		t.Errorf("%d points written, want 3 (one good per cycle)", n)
	}
}

// metric finds one child of a labelled metric in the registry.
func metric(t *testing.T, reg *prometheus.Registry, name string, labels ...string) prometheus.Collector {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var vals []string
			for _, l := range m.GetLabel() {
				vals = append(vals, l.GetValue())
			}
			if strings.Join(vals, ",") == strings.Join(labels, ",") || containsAll(vals, labels) {
				v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
				g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x"})
				g.Set(v)
				return g
			}
		}
	}
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: "absent"})
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// One source without a driver must not stop the others; it is logged once.
func TestSourceDownOthersKeepRunning(t *testing.T) {
	noDriver := &fakeSource{name: "nvml", gather: func() ([]store.Point, error) {
		return nil, errors.New("NVIDIA driver not found")
	}}
	dcgm := &fakeSource{name: "dcgm:a", gather: func() ([]store.Point, error) {
		return []store.Point{gpuPoint("0", 40)}, nil
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: noDriver}, {Source: dcgm}}}, buffer.Options{})
	for range 4 {
		h.c.Cycle(context.Background())
		h.clock.step(10*time.Second, 10*time.Second)
	}
	if err := h.c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.store.Points()); n != 4 {
		t.Fatalf("%d points written, want 4 from dcgm", n)
	}
	if n := strings.Count(h.logs.String(), "NVIDIA driver not found"); n != 1 {
		t.Errorf("driver error logged %d times, want once:\n%s", n, h.logs.String())
	}
	if testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_source_up", "nvml")) != 0 {
		t.Error("source_up{nvml} should be 0")
	}
}

func TestClockJump(t *testing.T) {
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) {
		return []store.Point{gpuPoint("0", 40)}, nil
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}}, buffer.Options{})
	steps := []struct {
		wall, mono time.Duration
		rejected   string
	}{
		{0, 0, ""},
		{10 * time.Second, 10 * time.Second, ""},
		{time.Hour, 10 * time.Second, "clock_jump"},          // NTP stepped forward
		{10 * time.Second, 10 * time.Second, ""},             // fine again
		{-30 * time.Minute, 10 * time.Second, "clock_jump"},  // stepped back
		{10 * time.Second, 10 * time.Second, "out_of_order"}, // still behind the last sample written
	}
	for i, s := range steps {
		h.clock.step(s.wall, s.mono)
		res := h.c.Cycle(context.Background())
		if s.rejected == "" && len(res.Rejected) > 0 || s.rejected != "" && res.Rejected[s.rejected] != 1 {
			t.Errorf("step %d: rejected %v, want %q", i, res.Rejected, s.rejected)
		}
	}
	h.c.Flush(context.Background())
	if n := len(h.store.Points()); n != 3 {
		t.Errorf("%d points written, want 3", n)
	}
}

func TestTags(t *testing.T) {
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) {
		return []store.Point{
			{Measurement: "gpu_util", Tags: map[string]string{"host": "a100-07"}, Value: 1},
			{Measurement: "gpu_util", Tags: map[string]string{"host": "h100-01", "pool": "own"}, Value: 2},
			{Measurement: "gpu_util", Tags: map[string]string{}, Value: 3},
		}, nil
	}}
	h := newHarness(t, collector.Config{
		Inputs:    []collector.Input{{Source: src, Tags: map[string]string{"dc": "bj"}}},
		Tags:      map[string]string{"host": "collector-1", "dc": "global"},
		HostPools: map[string]string{"a100-07": "inference", "collector-1": "local"},
	}, buffer.Options{})
	h.c.Cycle(context.Background())
	h.c.Flush(context.Background())
	want := []map[string]string{
		{"host": "a100-07", "pool": "inference", "dc": "bj"},
		{"host": "h100-01", "pool": "own", "dc": "bj"},
		{"host": "collector-1", "pool": "local", "dc": "bj"},
	}
	got := h.store.Points()
	if len(got) != 3 {
		t.Fatalf("%d points", len(got))
	}
	for i, w := range want {
		for k, v := range w {
			if got[i].Tags[k] != v {
				t.Errorf("point %d tag %s = %q, want %q (%v)", i, k, got[i].Tags[k], v, got[i].Tags)
			}
		}
	}
}

// While the store is down, points wait in memory then on disk; once it is
// back, every point arrives, in order.
func TestStoreOutageLosesNothing(t *testing.T) {
	seq := 0
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) {
		var pts []store.Point
		for range 7 {
			pts = append(pts, store.Point{Measurement: "seq", Tags: map[string]string{"k": "v"}, Value: float64(seq)})
			seq++
		}
		return pts, nil
	}}
	h := newHarness(t, collector.Config{
		Inputs: []collector.Input{{Source: &sequenced{src}}}, WriteBatchPoints: 20,
	}, buffer.Options{MemoryPoints: 50, SpoolDir: t.TempDir(), SegmentBytes: 1024})
	ctx := context.Background()
	h.store.SetDown(true)
	for range 40 {
		h.c.Cycle(ctx)
		h.clock.step(time.Second, time.Second)
		if err := h.c.Flush(ctx); !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("Flush with the store down: %v", err)
		}
	}
	st := h.buf.Stats()
	if st.SpoolPoints == 0 || st.MemoryPoints+st.SpoolPoints != 280 {
		t.Fatalf("buffer %+v, want 280 points with some spooled", st)
	}
	if got := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_buffered_points", "spool")); got != float64(st.SpoolPoints) {
		t.Errorf("buffered_points{spool} = %v, want %d", got, st.SpoolPoints)
	}
	h.store.SetDown(false)
	for range 5 {
		h.c.Cycle(ctx)
		h.clock.step(time.Second, time.Second)
	}
	if err := h.c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pts := h.store.Points()
	if len(pts) != seq {
		t.Fatalf("%d points written, want %d", len(pts), seq)
	}
	for i, p := range pts {
		if p.Value != float64(i) {
			t.Fatalf("point %d has value %v: out of order or lost", i, p.Value)
		}
	}
	if !strings.Contains(h.logs.String(), "store unavailable") || !strings.Contains(h.logs.String(), "store available again") {
		t.Errorf("outage not logged:\n%s", h.logs.String())
	}
}

// sequenced gives each point a distinct time (the collector rejects
// repeated timestamps within a series).
type sequenced struct{ *fakeSource }

func (s *sequenced) Gather(ctx context.Context) ([]store.Point, error) {
	pts, err := s.fakeSource.Gather(ctx)
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for i := range pts {
		pts[i].Time = base.Add(time.Duration(pts[i].Value) * time.Millisecond)
	}
	return pts, err
}

// A batch the store refuses (not ErrUnavailable) is retried, then dropped
// and counted, so one bad batch does not block the queue; the good batches
// queued with it are retried one at a time and written, in order.
func TestRejectedBatchDropped(t *testing.T) {
	value := 0.0
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) {
		value++
		return []store.Point{gpuPoint("0", value)}, nil
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}, RejectRetries: 2}, buffer.Options{})
	poison := 2.0 // the store refuses any write holding cycle 2's point
	h.store.OnWrite = func(pts []store.Point) error {
		for _, p := range pts {
			if p.Value == poison {
				return errors.New("400 bad request: field type conflict")
			}
		}
		return nil
	}
	ctx := context.Background()
	for range 3 {
		h.c.Cycle(ctx)
		h.clock.step(time.Second, time.Second)
	}
	for range 5 {
		h.c.Flush(ctx)
	}
	if got := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_dropped_points_total", "rejected")); got != 1 {
		t.Errorf("dropped{rejected} = %v, want 1 (cycle 2's batch alone)", got)
	}
	var got []float64
	for _, p := range h.store.Points() {
		got = append(got, p.Value)
	}
	if fmt.Sprint(got) != "[1 3]" {
		t.Errorf("written values %v, want [1 3]: the good batches, in order", got)
	}
	if h.buf.Stats().MemoryPoints != 0 {
		t.Error("buffer not drained")
	}
}

// A store that refuses our token or bucket (store.ErrMisconfigured) keeps
// every point buffered until the setting is fixed: nothing is dropped.
func TestMisconfiguredStoreKeepsPoints(t *testing.T) {
	value := 0.0
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) {
		value++
		return []store.Point{gpuPoint("0", value)}, nil
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}, RejectRetries: 1}, buffer.Options{})
	fixed := false
	h.store.OnWrite = func([]store.Point) error {
		if !fixed {
			return fmt.Errorf("influx write: %w: HTTP 401 (check the token)", store.ErrMisconfigured)
		}
		return nil
	}
	ctx := context.Background()
	for range 3 {
		h.c.Cycle(ctx)
		h.clock.step(time.Second, time.Second)
		if err := h.c.Flush(ctx); !errors.Is(err, store.ErrMisconfigured) {
			t.Fatalf("Flush with a bad token = %v, want ErrMisconfigured", err)
		}
	}
	if got := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_dropped_points_total", "rejected")); got != 0 {
		t.Errorf("dropped{rejected} = %v, want 0", got)
	}
	if !strings.Contains(h.logs.String(), "check the token") {
		t.Errorf("the store's hint is not logged:\n%s", h.logs.String())
	}
	fixed = true
	if err := h.c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(h.store.Points()); n != 3 {
		t.Errorf("%d points written once the token is fixed, want 3", n)
	}
}

// Run writes in the background and re-exports GPU gauges on /metrics.
func TestRunAndGPUGauges(t *testing.T) {
	src := &fakeSource{name: "dcgm:a", gather: func() ([]store.Point, error) {
		p := gpuPoint("0", 77)
		p.Tags["uuid"] = "GPU-1"
		return []store.Point{p}, nil
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}}, buffer.Options{})
	h.c = mustNew(t, h, collector.Config{Inputs: []collector.Input{{Source: src}}, Interval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.c.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for h.store.Writes() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if h.store.Writes() == 0 {
		t.Fatal("nothing written")
	}
	// Stopping says so, with what the run did.
	logs := h.logs.String()
	if !strings.Contains(logs, "collector stopped") || !strings.Contains(logs, "unwritten=0") ||
		strings.Contains(logs, "accepted=0 ") || !strings.Contains(logs, "rejected=0") {
		t.Errorf("no summary of the run when it stopped:\n%s", logs)
	}
	err := testutil.GatherAndCompare(h.reg, strings.NewReader(`
# HELP prewarm_gpu_util Last gpu util read by the collector.
# TYPE prewarm_gpu_util gauge
prewarm_gpu_util{gpu="0",host="h1",model="",pool="",source="",uuid="GPU-1"} 77
`), "prewarm_gpu_util")
	if err != nil {
		t.Error(err)
	}
}

// mustNew rebuilds the harness's collector with the real clock (Run uses
// real tickers).
func mustNew(t *testing.T, h *harness, cfg collector.Config) *collector.Collector {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := collector.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	h.reg = reg
	cfg.Store, cfg.Buffer, cfg.Metrics = h.store, h.buf, m
	cfg.Logger = slog.New(slog.NewTextHandler(h.logs, nil))
	c, err := collector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hungSource blocks in Gather, ignoring its context, until released.
type hungSource struct {
	release chan struct{}
	calls   atomic.Int32
}

func (h *hungSource) Name() string { return "hung" }
func (h *hungSource) Gather(ctx context.Context) ([]store.Point, error) {
	if h.calls.Add(1) > 1 {
		return []store.Point{gpuPoint("9", 1)}, nil
	}
	<-h.release
	return nil, nil
}

// A source whose Gather ignores its context does not stall the cycle (the
// other sources' points still arrive), is reported down, and is not called
// again until its Gather returns.
func TestHungSourceDoesNotStallCycle(t *testing.T) {
	hung := &hungSource{release: make(chan struct{})}
	ok := &fakeSource{name: "ok", gather: func() ([]store.Point, error) { return []store.Point{gpuPoint("0", 1)}, nil }}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: hung}, {Source: ok}},
		GatherTimeout: 20 * time.Millisecond}, buffer.Options{})
	for i := range 2 {
		done := make(chan collector.CycleResult, 1)
		go func() { done <- h.c.Cycle(context.Background()) }()
		select {
		case res := <-done:
			if res.Accepted != 1 {
				t.Errorf("cycle %d accepted %d points, want 1 from the healthy source", i, res.Accepted)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("cycle %d still waiting on a hung source after 5 s", i)
		}
		h.clock.step(time.Second, time.Second)
	}
	if n := hung.calls.Load(); n != 1 {
		t.Errorf("hung Gather called %d times, want 1 (never concurrently with itself)", n)
	}
	if testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_source_up", "hung")) != 0 {
		t.Error("source_up{hung} should be 0")
	}
	close(hung.release)
	deadline := time.Now().Add(5 * time.Second)
	for res := h.c.Cycle(context.Background()); res.Accepted != 2; res = h.c.Cycle(context.Background()) {
		if time.Now().After(deadline) {
			t.Fatalf("the source did not come back after its Gather returned (accepted %d)", res.Accepted)
		}
		h.clock.step(time.Second, time.Second)
	}
}

// Spooled points lost to a damaged record are logged and counted in
// dropped_points_total{reason="spool_corrupt"}, not lost silently.
func TestSpoolCorruptionCounted(t *testing.T) {
	value := 0.0
	src := &sequenced{&fakeSource{name: "s", gather: func() ([]store.Point, error) {
		value++
		return []store.Point{gpuPoint("0", value)}, nil
	}}}
	dir := t.TempDir()
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}}, buffer.Options{MemoryPoints: 1, SpoolDir: dir})
	ctx := context.Background()
	h.store.SetDown(true)
	for range 3 {
		h.c.Cycle(ctx) // all three spooled; the first is also cached in memory
		h.clock.step(time.Second, time.Second)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) != 1 {
		t.Fatalf("spool segments %v, want 1", segs)
	}
	raw, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	second := 12 + int64(binary.BigEndian.Uint32(raw[:4])) // the first record's header and payload
	f, err := os.OpenFile(segs[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("XX"), second+15); err != nil { // inside the second record's payload, read from disk
		t.Fatal(err)
	}
	f.Close()
	h.store.SetDown(false)
	if err := h.c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(h.store.Points()); n != 2 {
		t.Errorf("%d points written, want 2 (one lost to the damaged record)", n)
	}
	if got := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_dropped_points_total", "spool_corrupt")); got != 1 {
		t.Errorf("dropped{spool_corrupt} = %v, want 1", got)
	}
	if !strings.Contains(h.logs.String(), "damaged spool records") {
		t.Errorf("loss not logged:\n%s", h.logs.String())
	}
}

// A source whose label values churn (a new request ID every sample) gets
// its first series in and the rest rejected at its bound, while the
// series of other sources and the series already known keep flowing; a
// total bound caps all sources together. Series unseen for an hour free
// their places.
func TestSeriesLimits(t *testing.T) {
	churn := 0
	churny := &fakeSource{name: "churny", gather: func() ([]store.Point, error) {
		pts := make([]store.Point, 5)
		for i := range pts {
			churn++
			pts[i] = store.Point{Measurement: "requests", Tags: map[string]string{"request_id": fmt.Sprint(churn)}, Value: 1}
		}
		return append(pts, store.Point{Measurement: "requests_total", Tags: map[string]string{"job": "churny"}, Value: 1}), nil
	}}
	steady := &fakeSource{name: "steady", gather: func() ([]store.Point, error) { return []store.Point{gpuPoint("0", 40)}, nil }}
	// Each cycle churny offers 5 new series and its steady total.
	tests := []struct {
		name                 string
		maxSeries, perSource int
		wantSeries           int
		wantReason           string
		wantRejected         int
	}{
		// 8 of churny's and steady's 1; churny's cycle 2 fits 2 of 5.
		{"per source", 1000, 8, 9, "source_series_limit", 3 + 4*5},
		// steady's, then 3 of churny's first cycle; its total never fits.
		{"in total", 4, 1000, 4, "series_limit", 3 + 5*6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			churn = 0
			h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: steady}, {Source: churny}},
				MaxSeries: tc.maxSeries, MaxSeriesPerSource: tc.perSource}, buffer.Options{})
			rejected := 0
			for range 6 {
				h.clock.step(10*time.Second, 10*time.Second)
				res := h.c.Cycle(context.Background())
				rejected += res.Rejected[tc.wantReason]
			}
			h.c.Flush(context.Background())
			series := map[string]bool{}
			steadyPoints := 0
			for _, p := range h.store.Points() {
				series[p.Measurement+store.CanonicalTags(p.Tags)] = true
				if p.Measurement == "gpu_util" {
					steadyPoints++
				}
			}
			if len(series) != tc.wantSeries || rejected != tc.wantRejected {
				t.Errorf("%d series written, %d points rejected as %s; want %d and %d", len(series), rejected, tc.wantReason, tc.wantSeries, tc.wantRejected)
			}
			if steadyPoints != 6 {
				t.Errorf("the steady source wrote %d of its 6 points, want all", steadyPoints)
			}
			// An hour later the churned series are forgotten: new ones fit again.
			h.clock.step(2*time.Hour, 2*time.Hour)
			before := h.c.Cycle(context.Background()).Rejected[tc.wantReason]
			h.clock.step(11*time.Minute, 11*time.Minute)
			after := h.c.Cycle(context.Background()).Rejected[tc.wantReason]
			if min(before, after) >= 5 {
				t.Errorf("after an hour unseen: %d then %d rejected a cycle, want the forgotten series' places free", before, after)
			}
		})
	}
}

// A write the store did past its series limit is done: the batch leaves
// the buffer without a retry, and the points the store refused are counted
// as rejected by the store.
func TestStoreSeriesLimitIsNotRetried(t *testing.T) {
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) { return []store.Point{gpuPoint("0", 40), gpuPoint("1", 40)}, nil }}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}}, buffer.Options{})
	h.store.OnWrite = func(points []store.Point) error {
		return &store.SeriesLimitError{Store: "test store", Refused: 1, Limit: 1}
	}
	for range 3 {
		h.clock.step(10*time.Second, 10*time.Second)
		h.c.Cycle(context.Background())
		h.c.Flush(context.Background())
	}
	if st := h.buf.Stats(); st.MemoryPoints+st.SpoolPoints != 0 {
		t.Errorf("buffer holds %+v after the writes, want them done", st)
	}
	if got := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_rejected_samples_total", "store", "store_series_limit")); got != 3 {
		t.Errorf("rejected by the store: %v, want 1 a write, 3", got)
	}
	if got := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_dropped_points_total", "rejected")); got != 0 {
		t.Errorf("dropped as rejected: %v, want none", got)
	}
}
