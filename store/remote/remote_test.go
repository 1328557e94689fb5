package remote_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/remote"
	"github.com/prewarm/prewarm/store/storetest"
)

// splitStore writes straight into the embedded store and reads it back
// through the query API of a real HTTP server, so that the conformance
// suite checks the remote read path against every query it knows.
type splitStore struct {
	*remote.Store
	backing *embedded.Store
	srv     *httptest.Server
}

func (s *splitStore) Write(ctx context.Context, points []store.Point) error {
	return s.backing.Write(ctx, points)
}

func (s *splitStore) Close() error {
	s.srv.Close()
	return errors.Join(s.Store.Close(), s.backing.Close())
}

// openBacked opens an embedded store in a temporary directory and serves
// it through remote.NewHandler.
func openBacked(t testing.TB) (*embedded.Store, *httptest.Server, *remote.Store) {
	t.Helper()
	backing, err := embedded.Open(filepath.Join(t.TempDir(), "s.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(remote.Path, remote.NewHandler(backing, remote.HandlerOptions{}))
	srv := httptest.NewServer(mux)
	client, err := remote.New(srv.URL, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return backing, srv, client
}

func TestConformanceThroughHTTP(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		backing, srv, client := openBacked(t)
		return &splitStore{Store: client, backing: backing, srv: srv}
	})
}

// TestIdenticalToDirect compares the remote answers with the embedded
// store's own, deeply (times to the nanosecond, values bit for bit), over
// random data with awkward times, values and tags.
func TestIdenticalToDirect(t *testing.T) {
	backing, srv, client := openBacked(t)
	defer srv.Close()
	defer backing.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	pools := []string{"a", "b", "with space", `quo"te`, "日本", "x=y&z=%41"}
	var points []store.Point
	for i := range 5000 {
		v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		if i%97 == 0 {
			v = 1e308 // two of them in one window sum to +Inf
		}
		points = append(points, store.Point{Measurement: "m", Value: v,
			Tags: map[string]string{"pool": pools[rng.IntN(len(pools))], "gpu": fmt.Sprint(rng.IntN(3))},
			Time: base.Add(time.Duration(rng.Int64N(int64(48 * time.Hour))))})
	}
	points = append(points, store.Point{Measurement: "m", Value: 1, Time: base}) // a series with no tags
	if err := backing.Write(ctx, points); err != nil {
		t.Fatal(err)
	}
	var queries []store.Query
	for _, match := range []map[string]string{nil, {"pool": "with space"}, {"pool": "x=y&z=%41", "gpu": "1"}, {"pool": "none"}} {
		queries = append(queries, store.Query{Measurement: "m", Match: match, Start: base.Add(-time.Hour), End: base.Add(49 * time.Hour)})
		for _, agg := range []store.Aggregate{store.Mean, store.Sum, store.Max, store.Min, store.Last, store.Count} {
			queries = append(queries, store.Query{Measurement: "m", Match: match, Start: base.Add(1234567 * time.Microsecond),
				End: base.Add(30 * time.Hour), Step: 7 * time.Minute, Aggregate: agg})
		}
	}
	sawInf := false
	for _, q := range queries {
		want, err := backing.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := client.Query(ctx, q)
		if err != nil {
			t.Fatalf("remote Query(%+v): %v", q, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Query(%+v): remote answer differs from the direct one (%d vs %d series)", q, len(got), len(want))
		}
		for _, s := range got {
			for _, smp := range s.Samples {
				sawInf = sawInf || math.IsInf(smp.Value, 1)
			}
		}
	}
	if !sawInf {
		t.Error("test data assumption broken: no sum overflowed to +Inf, so non-finite values were not carried")
	}
}

func TestReadOnly(t *testing.T) {
	s, err := remote.New("http://127.0.0.1:1", remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Write(context.Background(), []store.Point{{Measurement: "m", Value: 1, Time: time.Now()}})
	if !errors.Is(err, remote.ErrReadOnly) {
		t.Fatalf("Write = %v, want ErrReadOnly", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		url     string
		wantErr string
	}{
		{"http://127.0.0.1:9108", ""},
		{"https://collector.example:9108/prefix/", ""},
		{"127.0.0.1:9108", "http"},
		{"ftp://h", "http"},
		{"http://", "no host"},
		{"http://h?x=1", "without query"},
		{"http://user:pw@h", "credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			_, err := remote.New(tc.url, remote.Options{})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !contains(err.Error(), tc.wantErr)) {
				t.Fatalf("New(%q) = %v, want error containing %q", tc.url, err, tc.wantErr)
			}
			if err != nil && contains(err.Error(), "pw") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

// TestClientErrors checks how answers other than 200 and failures to get
// one are classified.
func TestClientErrors(t *testing.T) {
	q := store.Query{Measurement: "m", Start: time.Unix(0, 0), End: time.Unix(60, 0)}
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	tests := []struct {
		name            string
		handler         http.HandlerFunc // nil: nothing listens
		timeout         time.Duration
		wantUnavailable bool
		wantInvalid     bool
		wantMsg         string
	}{
		{name: "connection refused", wantUnavailable: true, wantMsg: "store unavailable"},
		{name: "503 from the store", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			w.Write([]byte(`{"error":"influx query: store unavailable: down"}`))
		}, wantUnavailable: true, wantMsg: "influx query: store unavailable: down"},
		{name: "500 not JSON", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", 500)
		}, wantUnavailable: true, wantMsg: "HTTP 500: boom"},
		{name: "400 names the parameter", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"bad start","parameter":"start"}`))
		}, wantInvalid: true, wantMsg: "bad start"},
		{name: "404 not a collector", handler: func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, wantMsg: "recent enough"},
		{name: "403 permanent", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "forbidden by proxy", http.StatusForbidden)
		}, wantMsg: "forbidden by proxy"},
		{name: "not our JSON", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"series":[{"samples":[[1,2,3]]}]}`))
		}, wantMsg: "not the query API's JSON"},
		{name: "cut short", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte(`{"series":[{"samples":[[1,`))
		}, wantUnavailable: true, wantMsg: "reading the answer"},
		{name: "timeout", timeout: 50 * time.Millisecond, handler: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, wantUnavailable: true, wantMsg: "no answer within 50ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := deadURL
			if tc.handler != nil {
				srv := httptest.NewServer(tc.handler)
				defer srv.Close()
				u = srv.URL
			}
			s, err := remote.New(u, remote.Options{Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Query(context.Background(), q)
			if err == nil {
				t.Fatal("Query succeeded, want an error")
			}
			if errors.Is(err, store.ErrUnavailable) != tc.wantUnavailable {
				t.Errorf("errors.Is(%v, ErrUnavailable) = %v, want %v", err, !tc.wantUnavailable, tc.wantUnavailable)
			}
			if errors.Is(err, store.ErrInvalidQuery) != tc.wantInvalid {
				t.Errorf("errors.Is(%v, ErrInvalidQuery) = %v, want %v", err, !tc.wantInvalid, tc.wantInvalid)
			}
			if !contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q lacks %q", err, tc.wantMsg)
			}
		})
	}
	t.Run("canceled", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		defer srv.Close()
		s, _ := remote.New(srv.URL, remote.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		_, err := s.Query(ctx, q)
		if !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("Query = %v, want context.Canceled, not ErrUnavailable", err)
		}
	})
	t.Run("parameter carried", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"bad start","parameter":"start"}`))
		}))
		defer srv.Close()
		s, _ := remote.New(srv.URL, remote.Options{})
		_, err := s.Query(context.Background(), q)
		var se *remote.StatusError
		if !errors.As(err, &se) || se.Parameter != "start" || se.StatusCode != 400 {
			t.Fatalf("Query = %#v, want a *StatusError for parameter start", err)
		}
	})
}

// TestMatchKeyWithEquals: the one query the wire cannot carry is refused
// before sending, as an invalid query.
func TestMatchKeyWithEquals(t *testing.T) {
	s, _ := remote.New("http://127.0.0.1:1", remote.Options{})
	_, err := s.Query(context.Background(), store.Query{Measurement: "m", Match: map[string]string{"a=b": "c"},
		Start: time.Unix(0, 0), End: time.Unix(1, 0)})
	if !errors.Is(err, store.ErrInvalidQuery) || !contains(err.Error(), "contains '='") {
		t.Fatalf("Query = %v, want ErrInvalidQuery about '='", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
