package store_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/remote"
)

// TestExprRefused checks that the stores without a query language refuse
// a Query.Expr clearly, before reading anything, instead of ignoring it and
// answering for the measurement.
func TestExprRefused(t *testing.T) {
	ctx := context.Background()
	emb, err := embedded.Open(filepath.Join(t.TempDir(), "e.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	var reached atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.Error(w, "should not be asked", http.StatusTeapot)
	}))
	defer srv.Close()
	inf, err := influx.New(ctx, influx.Config{URL: srv.URL, Bucket: "prewarm/autogen", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Close()
	rem, err := remote.New(srv.URL, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pinged := reached.Load() // influx.New pings
	q := store.Query{Expr: `sum(rate(http_requests_total{pool="sd"}[1m]))`, Measurement: "service_request_rate",
		Start: time.Unix(0, 0), End: time.Unix(60, 0)}
	for name, s := range map[string]store.Querier{"embedded": emb, "InfluxDB": inf, "remote": rem} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Query(ctx, q)
			if !errors.Is(err, store.ErrExprUnsupported) || !errors.Is(err, store.ErrInvalidQuery) {
				t.Fatalf("Query with Expr = %v, want store.ErrExprUnsupported (and store.ErrInvalidQuery)", err)
			}
			if msg := err.Error(); !strings.Contains(msg, name) || !strings.Contains(msg, q.Expr) || !strings.Contains(msg, "measurement and match") {
				t.Errorf("error %q should name the store, the expression and what to use instead", msg)
			}
		})
	}
	if n := reached.Load() - pinged; n != 0 {
		t.Errorf("%d requests reached a server", n)
	}
	if err := store.RefuseExpr(store.Query{Measurement: "m"}, "any"); err != nil {
		t.Errorf("RefuseExpr without Expr = %v", err)
	}
}
