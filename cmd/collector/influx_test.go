package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/influx/influxtest"
)

// countPoints counts the points of every dcgm measurement for host in
// InfluxDB, and the number of distinct series.
func countPoints(t *testing.T, url, host string, since time.Time) (points, series int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := influx.New(ctx, influx.Config{URL: url, Bucket: influxtest.Bucket, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, m := range []string{store.GPUUtil, store.GPUMemUsedBytes, store.GPUMemFreeBytes, store.GPUPowerWatts,
		store.GPUTempCelsius, store.GPUEngineActive, store.GPUSMActive} {
		res, err := st.Query(ctx, store.Query{Measurement: m, Match: map[string]string{"host": host},
			Start: since, End: time.Now().Add(time.Minute)})
		if err != nil {
			t.Fatalf("query %s: %v", m, err)
		}
		series += len(res)
		for _, s := range res {
			points += len(s.Samples)
		}
	}
	return points, series
}

// The documented pipeline: collector --dcgm-url ... --influx-url ...
// --influx-bucket db/autogen --interval 1s puts the DCGM_FI_DEV_GPU_UTIL
// series (measurement gpu_util, source=dcgm) into a real InfluxDB.
func TestDCGMToInfluxDB(t *testing.T) {
	url := influxtest.URL(t)
	host := fmt.Sprintf("e2e-%d", time.Now().UnixNano())
	exp := newFakeExporter(t, host, 2)
	start := time.Now().Add(-time.Second)
	addr := freeAddr(t)
	r := startRun("--dcgm-url", exp.srv.URL+"/metrics", "--influx-url", url, "--influx-bucket", influxtest.Bucket,
		"--interval", "1s", "--listen", addr, "--spool-dir", t.TempDir())
	waitFor(t, "3 points per GPU written", 30*time.Second, func() bool {
		v, _ := metricValue(t, addr, "prewarm_collector_points_written_total", nil)
		return v >= 3*2*fieldsPerGPU
	}, r)
	r.stop(t)

	ctx := context.Background()
	st, err := influx.New(ctx, influx.Config{URL: url, Bucket: influxtest.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res, err := st.Query(ctx, store.Query{Measurement: store.GPUUtil, Match: map[string]string{"host": host, "source": "dcgm"},
		Start: start, End: time.Now().Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d gpu_util series, want 2 (one per GPU): %+v", len(res), res)
	}
	for _, s := range res {
		if len(s.Samples) < 3 || s.Tags["model"] != "NVIDIA H100 80GB HBM3" || s.Tags["uuid"] == "" {
			t.Errorf("series %v has %d samples", s.Tags, len(s.Samples))
		}
	}
	t.Logf("gpu_util in InfluxDB: %d series, %d samples for GPU 0 (first %v at %s)", len(res), len(res[0].Samples),
		res[0].Samples[0].Value, res[0].Samples[0].Time.Format(time.RFC3339Nano))
}

// A store outage loses nothing: a real InfluxDB is stopped for two
// minutes while the collector keeps reading 64 GPUs every second (448
// points/s); points pile up in the write-ahead spool; after the restart
// every point is in InfluxDB, none lost, none doubled.
func TestInfluxOutageLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("two-minute outage test; runs in make test")
	}
	srv := influxtest.StartServer(t)
	const gpus = 64
	host := fmt.Sprintf("outage-%d", time.Now().UnixNano())
	exp := newFakeExporter(t, host, gpus)
	start := time.Now().Add(-time.Second)
	addr := freeAddr(t)
	spool := t.TempDir()
	r := startRun("--dcgm-url", exp.srv.URL+"/metrics", "--influx-url", srv.URL, "--influx-bucket", influxtest.Bucket,
		"--interval", "1s", "--listen", addr, "--spool-dir", spool, "--buffer-points", "10000")

	written := func() float64 { v, _ := metricValue(t, addr, "prewarm_collector_points_written_total", nil); return v }
	waitFor(t, "writes flowing", 30*time.Second, func() bool { return written() > 0 }, r)

	srv.Stop()
	t.Logf("influxd stopped at %s", time.Now().Format(time.TimeOnly))
	time.Sleep(2 * time.Minute)
	spooled, _ := metricValue(t, addr, "prewarm_collector_buffered_points", map[string]string{"where": "spool"})
	inMemory, _ := metricValue(t, addr, "prewarm_collector_buffered_points", map[string]string{"where": "memory"})
	unavailable, _ := metricValue(t, addr, "prewarm_collector_write_errors_total", map[string]string{"reason": "unavailable"})
	t.Logf("after 2 min down: %v points in memory, %v spooled, %v failed writes", inMemory, spooled, unavailable)
	if spooled == 0 || unavailable == 0 {
		t.Errorf("the outage did not reach the spool (spooled %v, unavailable writes %v)", spooled, unavailable)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	time.Sleep(5 * time.Second)
	scrapes := exp.stop() // no more data from here on
	want := scrapes * gpus * fieldsPerGPU
	waitFor(t, "the backlog written", 3*time.Minute, func() bool { return written() >= float64(want) }, r)
	t.Logf("backlog of %d points written %s after restart", want, time.Since(restarted).Round(time.Second))
	if dropped, ok := metricValue(t, addr, "prewarm_collector_dropped_points_total", nil); dropped != 0 {
		t.Errorf("dropped_points_total = %v (present %v)", dropped, ok)
	}
	r.stop(t)

	got, series := countPoints(t, srv.URL, host, start)
	if series != gpus*fieldsPerGPU || got != want {
		t.Fatalf("InfluxDB holds %d points in %d series; want %d in %d (%d scrapes x %d GPUs x %d fields)",
			got, series, want, gpus*fieldsPerGPU, scrapes, gpus, fieldsPerGPU)
	}
	t.Logf("zero lost: %d points from %d scrapes all in InfluxDB", got, scrapes)
}

// The collector's InfluxDB flags are the forecaster's, defaults included:
// given only --influx-url, it writes to the bucket the forecaster reads by
// default (prewarm/autogen).
func TestInfluxURLAloneWritesTheForecastersBucket(t *testing.T) {
	url := influxtest.URL(t)
	host := fmt.Sprintf("default-bucket-%d", time.Now().UnixNano())
	exp := newFakeExporter(t, host, 1)
	start := time.Now().Add(-time.Second)
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"--dcgm-url", exp.srv.URL + "/metrics", "--influx-url", url, "--once", "--listen", ""},
		&bytes.Buffer{}, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "bucket prewarm/autogen") {
		t.Errorf("log does not name the default bucket:\n%s", stderr.String())
	}
	if points, _ := countPoints(t, url, host, start); points != fieldsPerGPU {
		t.Errorf("%d points in %s, want %d", points, influxtest.Bucket, fieldsPerGPU)
	}
}
