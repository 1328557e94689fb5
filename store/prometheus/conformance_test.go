package prometheus_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/prometheus"
	"github.com/prewarm/prewarm/store/prometheus/promtest"
	"github.com/prewarm/prewarm/store/storetest"
)

// notApplicable are the conformance subtests a read-only store on
// Prometheus 2.x cannot take, and why. The suite's other subtests run
// unchanged.
var notApplicable = map[string]string{
	"WriteAndReadRaw":  "it reads back a point at 5.123456789 s; Prometheus keeps milliseconds (TestRawReadMilliseconds checks raw reads)",
	"RejectsNonFinite": "it checks the write path; the Prometheus store does not write",
	"RejectsInvalid":   "it checks the write path; the Prometheus store does not write",
	"Overwrite":        "it checks the write path (last write wins); Prometheus is written by its scrapes",
	"ConcurrentUse":    "it writes while reading; TestConcurrentQueries checks concurrent reads",
	"EscapedTags":      `its tag key "k e,y=" is no Prometheus 2.x label name; TestEscapedValues checks the values`,
}

// TestConformance runs store/storetest against a real Prometheus. Writes
// go through promtool: the adapter below keeps what the suite writes and,
// before the next query, backfills it into a data dir with `promtool tsdb
// create-blocks-from openmetrics` and (re)starts Prometheus on it, so that
// every value the suite checks has gone through Prometheus' TSDB and PromQL.
func TestConformance(t *testing.T) {
	promtest.Prometheus(t)
	promtest.Promtool(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		name := t.Name()[strings.LastIndex(t.Name(), "/")+1:]
		if why, ok := notApplicable[name]; ok {
			t.Skip("not applicable: " + why)
		}
		return &backfilled{t: t, data: promtest.DataDir(t)}
	})
}

// backfilled is a store.Store whose Write queues points that Query first
// backfills into Prometheus. Write validates the batch as every store
// must; the reading is the Prometheus store's alone.
type backfilled struct {
	t    *testing.T
	data string

	mu      sync.Mutex
	pending []store.Point
	srv     *promtest.Server
	st      *prometheus.Store
}

func (b *backfilled) Write(ctx context.Context, points []store.Point) error {
	if err := store.ValidatePoints(points); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = append(b.pending, points...)
	return nil
}

func (b *backfilled) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	b.mu.Lock()
	if b.st == nil || len(b.pending) > 0 {
		if b.srv != nil {
			b.srv.Stop()
		}
		if len(b.pending) > 0 {
			promtest.Backfill(b.t, b.data, b.pending)
			b.pending = nil
		}
		b.srv = promtest.Start(b.t, b.data, time.Minute)
		st, err := prometheus.New(prometheus.Config{URL: b.srv.URL})
		if err != nil {
			b.mu.Unlock()
			return nil, err
		}
		b.st = st
	}
	st := b.st
	b.mu.Unlock()
	return st.Query(ctx, q)
}

func (b *backfilled) Close() error { return nil } // the server stops with the test
