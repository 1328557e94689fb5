package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/remote"
)

// The collector serves its own store on --listen, so that the forecaster
// can read the embedded file the collector holds locked.
func TestQueryAPIServesTheStore(t *testing.T) {
	exp := newFakeExporter(t, "gpu-node-5", 2)
	dir := t.TempDir()
	addr := freeAddr(t)
	r := startRun("--dcgm-url", exp.srv.URL+"/metrics", "--interval", "1s", "--listen", addr,
		"--store", "embedded:"+filepath.Join(dir, "c.db"), "--spool-dir", filepath.Join(dir, "spool"))
	defer r.stop(t)

	client, err := remote.New("http://"+addr, remote.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	q := store.Query{Measurement: "gpu_util", Match: map[string]string{"host": "gpu-node-5"},
		Start: time.Now().Add(-time.Hour), End: time.Now().Add(time.Hour)}
	var got []store.Series
	waitFor(t, "two cycles of gpu_util through the query API", 20*time.Second, func() bool {
		got, err = client.Query(context.Background(), q)
		return err == nil && len(got) == 2 && len(got[0].Samples) >= 2
	}, r)
	for i, s := range got {
		if s.Tags["gpu"] != []string{"0", "1"}[i] || s.Tags["source"] != "dcgm" || s.Tags["host"] != "gpu-node-5" {
			t.Errorf("series %d tags = %v", i, s.Tags)
		}
		for _, smp := range s.Samples {
			if smp.Value < 0 || smp.Value > 100 {
				t.Errorf("series %d: util %v outside [0, 100]", i, smp.Value)
			}
		}
	}

	// Aggregated, and a bad query answered as one.
	agg, err := client.Query(context.Background(), store.Query{Measurement: "gpu_util", Start: q.Start, End: q.End,
		Step: 2 * time.Hour, Aggregate: store.Count})
	if err != nil || len(agg) != 2 || len(agg[0].Samples) == 0 || agg[0].Samples[0].Value < 2 {
		t.Errorf("count query = %v, %v; want two series counting ≥ 2 points", agg, err)
	}
	resp, err := http.Get("http://" + addr + remote.Path + "?measurement=gpu_util&start=yesterday&end=now")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad start: HTTP %d, want 400", resp.StatusCode)
	}
	if err := client.Write(context.Background(), nil); !errors.Is(err, remote.ErrReadOnly) {
		t.Errorf("Write = %v, want ErrReadOnly", err)
	}
}

// A service named with --scrape NAME=URL is the pool NAME: its request rate
// is what `forecaster serve` reads by default (service_request_rate with
// pool=NAME), through the query API.
func TestScrapeFlagNamesThePool(t *testing.T) {
	var requests atomic.Int64
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := requests.Add(50) // 50 requests between scrapes
		fmt.Fprintf(w, "# TYPE http_requests_total counter\nhttp_requests_total %d\n# TYPE queue_length gauge\nqueue_length 3\n", n)
	}))
	defer svc.Close()
	dir := t.TempDir()
	addr := freeAddr(t)
	r := startRun("--scrape", "sd-pool="+svc.URL+"/metrics", "--interval", "1s", "--listen", addr,
		"--store", "embedded:"+filepath.Join(dir, "c.db"), "--spool-dir", filepath.Join(dir, "spool"))
	defer r.stop(t)

	client, err := remote.New("http://"+addr, remote.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	q := store.Query{Measurement: "service_request_rate", Match: map[string]string{"pool": "sd-pool"},
		Start: time.Now().Add(-time.Hour), End: time.Now().Add(time.Hour)}
	var got []store.Series
	waitFor(t, "the pool's request rate through the query API", 20*time.Second, func() bool {
		got, err = client.Query(context.Background(), q)
		return err == nil && len(got) == 1 && len(got[0].Samples) >= 1
	}, r)
	if got[0].Tags["service"] != "sd-pool" {
		t.Errorf("tags = %v, want service=sd-pool too", got[0].Tags)
	}
	if v := got[0].Samples[0].Value; !(v > 0) {
		t.Errorf("request rate %v, want > 0", v)
	}
}
