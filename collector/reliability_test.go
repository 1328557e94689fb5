package collector_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/store"
)

// /readyz's logic: ready while points reach the store, or while nothing
// waits; not ready once points have waited more than UnreadyAfter
// intervals without any write accepted, with the last error in the reason;
// ready again as soon as a write lands.
func TestReadyFollowsTheStore(t *testing.T) {
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) { return []store.Point{gpuPoint("0", 1)}, nil }}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}, Interval: 10 * time.Second, UnreadyAfter: 3},
		buffer.Options{SpoolDir: t.TempDir()})
	ctx := context.Background()
	ready := func() (bool, string) { return h.c.Ready(h.clock.Now()) }
	if ok, why := ready(); !ok {
		t.Fatalf("a new collector is not ready: %s", why)
	}
	h.c.Cycle(ctx)
	if err := h.c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wrote := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_last_store_write_timestamp_seconds"))
	if want := float64(h.clock.Now().Unix()); wrote != want {
		t.Errorf("last_store_write_timestamp_seconds = %v, want %v", wrote, want)
	}
	h.store.SetDown(true)
	for i := 1; i <= 5; i++ {
		h.clock.step(10*time.Second, 10*time.Second)
		h.c.Cycle(ctx)
		h.c.Flush(ctx)
		ok, why := ready()
		if want := i <= 3; ok != want {
			t.Fatalf("%ds into the outage: ready = %v (%s), want %v", i*10, ok, why, want)
		}
		if g := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_ready")); (g == 1) != ok {
			t.Errorf("prewarm_collector_ready = %v while Ready says %v", g, ok)
		}
		if !ok && (!strings.Contains(why, fmt.Sprintf("no write reached the store for %ds", i*10)) || !strings.Contains(why, "store unavailable")) {
			t.Errorf("reason %q should say for how long and the last error", why)
		}
	}
	h.store.SetDown(false)
	if err := h.c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, why := ready(); !ok {
		t.Errorf("after the store came back: not ready: %s", why)
	}
}

// A write that landed although the store's answer was lost (a timeout
// after InfluxDB committed it) is retried; the retry must carry the very
// same points, measurement, tags and timestamps, so that the store, which
// keeps one point per series and time, holds each point once. The same
// holds for a batch replayed from the spool after a crash.
func TestRetriedWriteIsIdempotent(t *testing.T) {
	seq := 0
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) {
		seq++
		return []store.Point{gpuPoint("0", float64(seq)), gpuPoint("1", float64(seq))}, nil
	}}
	dir := t.TempDir()
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}, Tags: map[string]string{"dc": "a", "empty": ""}},
		buffer.Options{SpoolDir: dir})
	// Every attempt lands, as far as the store is concerned; the odd ones
	// lose their answer. landed is what a store without deduplication
	// would hold.
	attempts := 0
	var landed []store.Point
	h.store.OnWrite = func(pts []store.Point) error {
		attempts++
		landed = append(landed, pts...)
		if attempts%2 == 1 {
			return fmt.Errorf("answer lost after the write: %w", store.ErrUnavailable)
		}
		return nil
	}
	ctx := context.Background()
	for range 4 {
		h.c.Cycle(ctx)
		h.clock.step(time.Second, time.Second)
		h.c.Flush(ctx)
		h.c.Flush(ctx)
	}
	// A crash with one batch written but not acked, then a restart.
	h.c.Cycle(ctx)
	pts, n, err := h.buf.Peek(100)
	if err != nil || n != 1 {
		t.Fatalf("Peek = %d, %v", n, err)
	}
	if err := h.store.Write(ctx, pts); err == nil { // odd attempt: fails; do it twice
		t.Fatal("want the odd attempt to fail")
	}
	if err := h.store.Write(ctx, pts); err != nil {
		t.Fatal(err)
	}
	h.buf.Close()
	buf2, err := buffer.New(buffer.Options{SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer buf2.Close()
	replayed, n, err := buf2.Peek(100)
	if err != nil || n != 1 {
		t.Fatalf("after the restart Peek = %d, %v", n, err)
	}
	if err := h.store.Write(ctx, replayed); err != nil {
		if err := h.store.Write(ctx, replayed); err != nil {
			t.Fatal(err)
		}
	}

	byIdentity := map[string][]float64{}
	for _, p := range landed { // folded by identity, as InfluxDB and the embedded store do
		key := p.Measurement + store.CanonicalTags(p.Tags) + p.Time.Format(time.RFC3339Nano)
		byIdentity[key] = append(byIdentity[key], p.Value)
	}
	if len(byIdentity) != 2*5 {
		t.Fatalf("%d distinct points (series and time) in the store, want 10 (5 cycles x 2 GPUs)", len(byIdentity))
	}
	for key, values := range byIdentity {
		for _, v := range values[1:] {
			if v != values[0] {
				t.Errorf("%s written with values %v: a retry changed the point", key, values)
			}
		}
		if len(values) < 2 {
			t.Errorf("%s written %d times; every write here was repeated", key, len(values))
		}
	}
}

// Two points that differ only by an empty tag are one series to every
// store (an empty value is no tag): the second in a cycle is refused as a
// repeat instead of silently replacing the first.
func TestEmptyTagIsTheSameSeries(t *testing.T) {
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) {
		a := gpuPoint("0", 1)
		b := gpuPoint("0", 2)
		b.Tags["model"] = ""
		return []store.Point{a, b}, nil
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}}, buffer.Options{})
	res := h.c.Cycle(context.Background())
	if res.Accepted != 1 || res.Rejected["out_of_order"] != 1 {
		t.Fatalf("cycle = %+v, want 1 accepted and 1 out_of_order", res)
	}
}

// A batch the buffer cannot keep is counted under what went wrong: a
// reached bound is buffer_full.
func TestBufferFullLabel(t *testing.T) {
	src := &fakeSource{name: "s", gather: func() ([]store.Point, error) {
		return []store.Point{gpuPoint("0", 1), gpuPoint("1", 1)}, nil
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}}, buffer.Options{MemoryPoints: 3})
	h.store.SetDown(true)
	ctx := context.Background()
	var res collector.CycleResult
	for range 2 {
		res = h.c.Cycle(ctx)
		h.clock.step(time.Second, time.Second)
	}
	if res.Accepted != 0 || res.Dropped != 2 {
		t.Errorf("second cycle = %+v, want its 2 points dropped", res)
	}
	if got := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_dropped_points_total", "buffer_full")); got != 2 {
		t.Errorf("dropped{buffer_full} = %v, want 2", got)
	}
	if !strings.Contains(h.logs.String(), "reason=buffer_full") {
		t.Errorf("drop not logged with its reason:\n%s", h.logs.String())
	}
}

// A page over the scrape limit is loud: the source is down, the refusal
// counted as too_large and logged, and nothing of it is written.
func TestTooLargePageIsLoud(t *testing.T) {
	src := &fakeSource{name: "svc", gather: func() ([]store.Point, error) {
		return nil, fmt.Errorf("scrape http://127.0.0.1:1/metrics: %w: over 16777216 bytes", collector.ErrTooLarge)
	}}
	h := newHarness(t, collector.Config{Inputs: []collector.Input{{Source: src}}}, buffer.Options{})
	h.c.Cycle(context.Background())
	if up := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_source_up", "svc")); up != 0 {
		t.Errorf("source_up = %v, want 0", up)
	}
	if n := testutil.ToFloat64(metric(t, h.reg, "prewarm_collector_rejected_samples_total", "svc", "too_large")); n != 1 {
		t.Errorf("rejected{too_large} = %v, want 1", n)
	}
	if !strings.Contains(h.logs.String(), "16777216 bytes") {
		t.Errorf("the limit is not in the log:\n%s", h.logs.String())
	}
}
