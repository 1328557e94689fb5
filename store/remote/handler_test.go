package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/remote"
)

// fakeQuerier records the query it got and answers with series or err.
// It answers the handler's count of the whole range (Aggregate count, one
// step over the range) by counting series' samples, as a store would.
type fakeQuerier struct {
	got    store.Query
	series []store.Series
	err    error
	counts int // count queries seen
	// rawPoints, if set, is what a count query reports per series (the
	// points behind an aggregated answer) instead of len(Samples).
	rawPoints int
}

func (f *fakeQuerier) Query(_ context.Context, q store.Query) ([]store.Series, error) {
	if f.err != nil {
		return nil, f.err
	}
	if q.Aggregate == store.Count && q.Step >= q.End.Sub(q.Start) {
		f.counts++
		var out []store.Series
		for _, s := range f.series {
			n := len(s.Samples)
			if f.rawPoints > 0 {
				n = f.rawPoints
			}
			out = append(out, store.Series{Measurement: s.Measurement, Tags: s.Tags,
				Samples: []store.Sample{{Time: q.Start, Value: float64(n)}}})
		}
		return out, nil
	}
	f.got = q
	return f.series, nil
}

type errorJSON struct {
	Error     string `json:"error"`
	Parameter string `json:"parameter"`
}

func get(t *testing.T, h http.Handler, method, rawQuery string) (*httptest.ResponseRecorder, errorJSON) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, remote.Path+"?"+rawQuery, nil))
	var e errorJSON
	if rec.Code != http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatalf("status %d with a body that is not JSON: %q", rec.Code, rec.Body.String())
		}
	}
	return rec, e
}

const okRange = "measurement=requests&start=2026-01-05T00:00:00Z&end=2026-01-06T00:00:00Z"

func TestHandlerBadParameters(t *testing.T) {
	tests := []struct {
		name, query, param, msg string
	}{
		{"no measurement", "start=2026-01-05T00:00:00Z&end=2026-01-06T00:00:00Z", "measurement", "empty measurement"},
		{"empty measurement", "measurement=&start=2026-01-05T00:00:00Z&end=2026-01-06T00:00:00Z", "measurement", "empty measurement"},
		{"no start", "measurement=m&end=2026-01-06T00:00:00Z", "start", "missing"},
		{"no end", "measurement=m&start=2026-01-06T00:00:00Z", "end", "missing"},
		{"start not RFC 3339", "measurement=m&start=1767571200&end=2026-01-06T00:00:00Z", "start", "not an RFC 3339 time"},
		{"end without zone", "measurement=m&start=2026-01-05T00:00:00Z&end=2026-01-06T00:00:00", "end", "not an RFC 3339 time"},
		// Found by FuzzParseQuery: in year -1 once in UTC, which the client cannot send back.
		{"start before year 0 in UTC", "measurement=m&start=0000-01-01T00:00:00%2B01:00&end=2026-01-06T00:00:00Z", "start", "outside the years 0000-9999"},
		{"end before start", "measurement=m&start=2026-01-06T00:00:00Z&end=2026-01-05T00:00:00Z", "end", "is not before end"},
		{"empty range", "measurement=m&start=2026-01-05T00:00:00Z&end=2026-01-05T00:00:00Z", "end", "is not before end"},
		{"step not a duration", okRange + "&step=5&aggregate=mean", "step", "not a duration"},
		{"negative step", okRange + "&step=-5m&aggregate=mean", "step", "negative step"},
		{"step without aggregate", okRange + "&step=5m", "aggregate", "unknown aggregate \"\""},
		{"unknown aggregate", okRange + "&step=5m&aggregate=median", "aggregate", "unknown aggregate \"median\""},
		{"match without =", okRange + "&match=pool", "match", "not KEY=VALUE"},
		{"match empty value", okRange + "&match=pool=", "match", "empty value"},
		{"match empty key", okRange + "&match==a", "match", "empty tag key"},
		{"match reserved key", okRange + "&match=_field=a", "match", "reserves"},
		{"match key twice", okRange + "&match=pool=a&match=pool=b", "match", "given twice"},
		{"measurement twice", okRange + "&measurement=other", "measurement", "given 2 times"},
		{"unknown parameter", okRange + "&mach=pool=a", "mach", "unknown parameter"},
		{"bad escape", okRange + "&match=pool=%zz", "", "invalid URL escape"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeQuerier{}
			rec, e := get(t, remote.NewHandler(f, remote.HandlerOptions{}), http.MethodGet, tc.query)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", rec.Code, rec.Body.String())
			}
			if e.Parameter != tc.param || !strings.Contains(e.Error, tc.msg) {
				t.Errorf("error = %+v, want parameter %q and a message containing %q", e, tc.param, tc.msg)
			}
			if tc.param != "" && !strings.Contains(e.Error, `"`+tc.param+`"`) {
				t.Errorf("message %q does not name parameter %q", e.Error, tc.param)
			}
			if f.got.Measurement != "" {
				t.Errorf("the store was queried (%+v) despite the bad parameter", f.got)
			}
		})
	}
}

func TestHandlerParses(t *testing.T) {
	f := &fakeQuerier{}
	q := url.Values{"measurement": {"requests rps"}, "match": {"pool=a=b", "host=h 1"},
		"start": {"2026-01-05T08:00:00.123456789+08:00"}, "end": {"2026-01-06T00:00:00Z"},
		"step": {"1h30m"}, "aggregate": {"max"}}
	rec, _ := get(t, remote.NewHandler(f, remote.HandlerOptions{}), http.MethodGet, q.Encode())
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	want := store.Query{Measurement: "requests rps", Match: map[string]string{"pool": "a=b", "host": "h 1"},
		Start: time.Date(2026, 1, 5, 0, 0, 0, 123456789, time.UTC), End: time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC),
		Step: 90 * time.Minute, Aggregate: store.Max}
	if f.got.Measurement != want.Measurement || fmt.Sprint(f.got.Match) != fmt.Sprint(want.Match) ||
		!f.got.Start.Equal(want.Start) || !f.got.End.Equal(want.End) || f.got.Step != want.Step || f.got.Aggregate != want.Aggregate {
		t.Errorf("store got %+v, want %+v", f.got, want)
	}
	if got := rec.Body.String(); got != `{"series":[]}`+"\n" {
		t.Errorf("empty answer = %q", got)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
}

func TestHandlerWireFormat(t *testing.T) {
	inf := math.Inf(1)
	f := &fakeQuerier{series: []store.Series{
		{Measurement: "gpu_util", Tags: map[string]string{"pool": "a", "gpu": "0"}, Samples: []store.Sample{
			{Time: time.Unix(1767571200, 5).UTC(), Value: 41.5},
			{Time: time.Unix(1767571500, 0).UTC(), Value: inf},
			{Time: time.Unix(-1, 0).UTC(), Value: 1e-300},
		}},
		{Measurement: "gpu_util", Samples: []store.Sample{{Time: time.Unix(0, 0), Value: -inf}}},
	}}
	rec, _ := get(t, remote.NewHandler(f, remote.HandlerOptions{}), http.MethodGet, okRange)
	want := `{"series":[{"measurement":"gpu_util","tags":{"gpu":"0","pool":"a"},"samples":[[1767571200000000005,41.5],[1767571500000000000,"+Inf"],[-1000000000,1e-300]]},` +
		`{"measurement":"gpu_util","tags":{},"samples":[[0,"-Inf"]]}]}` + "\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("body\n got  %s\n want %s", got, want)
	}
}

func TestHandlerStoreErrors(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
	}{
		{"unavailable", fmt.Errorf("influx query: %w: connection refused", store.ErrUnavailable), http.StatusServiceUnavailable},
		{"invalid", fmt.Errorf("%w: something the store refuses", store.ErrInvalidQuery), http.StatusBadRequest},
		{"other", errors.New("corrupt series key"), http.StatusInternalServerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, e := get(t, remote.NewHandler(&fakeQuerier{err: tc.err}, remote.HandlerOptions{}), http.MethodGet, okRange)
			if rec.Code != tc.status || e.Error != tc.err.Error() {
				t.Errorf("got %d %+v, want %d with the store's message %q", rec.Code, e, tc.status, tc.err)
			}
		})
	}
}

func TestHandlerMethods(t *testing.T) {
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec, e := get(t, remote.NewHandler(&fakeQuerier{}, remote.HandlerOptions{}), m, okRange)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" || !strings.Contains(e.Error, "read-only") {
			t.Errorf("%s: got %d %+v (Allow %q), want 405", m, rec.Code, e, rec.Header().Get("Allow"))
		}
	}
	if rec, _ := get(t, remote.NewHandler(&fakeQuerier{}, remote.HandlerOptions{}), http.MethodHead, okRange); rec.Code != http.StatusOK {
		t.Errorf("HEAD: %d, want 200", rec.Code)
	}
}
