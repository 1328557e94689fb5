package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

// FuzzParseQuery feeds arbitrary query strings to the handler's parser. It
// must never panic; what it accepts must pass store.Query.Validate, and
// must survive the client's encoding unchanged; what it refuses must name
// a parameter and wrap store.ErrInvalidQuery.
//
//	go test -run='^$' -fuzz=FuzzParseQuery -fuzztime=20s ./store/remote
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"measurement=m&start=2026-01-05T00:00:00Z&end=2026-01-06T00:00:00Z",
		"measurement=m&start=2026-01-05T00:00:00.5%2B08:00&end=2026-01-06T00:00:00Z&step=5m&aggregate=mean&match=pool=a&match=gpu=0",
		"measurement=m&start=2026-01-06T00:00:00Z&end=2026-01-05T00:00:00Z",
		"measurement=m&start=x&end=y&step=-1h&aggregate=median&match=_x=1&match=a",
		"measurement=a%00b&start=1970-01-01T00:00:00Z&end=9999-12-31T23:59:59.999999999Z&match=k=v=w",
		"mach=pool=a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return // the handler answers 400 from r.URL.Query() without reaching the parser
		}
		q, perr := parseQuery(v)
		if perr != nil {
			if perr.param == "" || !errors.Is(perr, store.ErrInvalidQuery) {
				t.Fatalf("parseQuery(%q) = %v: want a named parameter and ErrInvalidQuery", raw, perr)
			}
			return
		}
		if err := q.Validate(); err != nil {
			t.Fatalf("parseQuery(%q) accepted a query Validate refuses: %v", raw, err)
		}
		if checkEncodable(q) != nil {
			t.Fatalf("parseQuery(%q) accepted a match key with '=': %v", raw, q.Match)
		}
		back, perr := parseQuery(encodeQuery(q))
		if perr != nil {
			t.Fatalf("parseQuery(%q) = %+v, which the client encodes as %q, refused: %v", raw, q, encodeQuery(q).Encode(), perr)
		}
		wantAgg := q.Aggregate
		if q.Step == 0 {
			wantAgg = "" // not sent without a step: the store ignores it
		}
		if back.Measurement != q.Measurement || !maps.Equal(back.Match, q.Match) || !back.Start.Equal(q.Start) ||
			!back.End.Equal(q.End) || back.Step != q.Step || back.Aggregate != wantAgg {
			t.Fatalf("round trip changed the query:\n got  %+v\n want %+v", back, q)
		}
	})
}

// FuzzDecodeSamples feeds arbitrary bytes to the client's hand-written
// samples decoder. It must never panic, and what it accepts must encode
// back to an answer it decodes to the same samples, bit for bit.
//
//	go test -run='^$' -fuzz=FuzzDecodeSamples -fuzztime=20s ./store/remote
func FuzzDecodeSamples(f *testing.F) {
	for _, s := range []string{
		`[]`, `[[0,1]]`, ` [ [1767571200000000005 , 41.5] ,[-1,"+Inf"],[2,"NaN"],[3,"-Inf"],[4,-1e-300]] `,
		`[[1,2,3]]`, `[[1,2],]`, `[[1,2]`, `[[1,"x"]]`, `[[1.5,2]]`, `[[1,2]]x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got wireSamples
		if err := got.UnmarshalJSON(data); err != nil {
			return
		}
		enc := appendSamples(nil, got, 0)
		var back wireSamples
		if err := back.UnmarshalJSON(enc); err != nil {
			t.Fatalf("%q decoded, but its encoding %q does not: %v", data, enc, err)
		}
		if len(back) != len(got) {
			t.Fatalf("%q: %d samples, %d after a round trip", data, len(got), len(back))
		}
		for i := range got {
			if !back[i].Time.Equal(got[i].Time) || math.Float64bits(back[i].Value) != math.Float64bits(got[i].Value) {
				t.Fatalf("%q: sample %d = %v, %v after a round trip", data, i, got[i], back[i])
			}
		}
	})
}

// replyTransport answers every request with one canned reply.
type replyTransport struct {
	status int
	ctype  string
	body   []byte
}

func (rt replyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h := http.Header{}
	if rt.ctype != "" {
		h.Set("Content-Type", rt.ctype)
	}
	return &http.Response{StatusCode: rt.status, Header: h, Body: io.NopCloser(bytes.NewReader(rt.body)),
		ContentLength: -1, Request: req}, nil
}

// FuzzClientReply feeds arbitrary replies (status, content type, body) to
// the client, as a broken or hostile server could send. It must never
// panic; a non-200 reply is always an error, classified as the package doc
// says; an accepted 200 holds series whose samples decode; and no error
// message grows without bound.
//
//	go test -run='^$' -fuzz=FuzzClientReply -fuzztime=20s ./store/remote
func FuzzClientReply(f *testing.F) {
	f.Add(200, "application/json", []byte(`{"series":[{"measurement":"m","tags":{"pool":"a"},"samples":[[1,2],[3,"NaN"]]}]}`))
	f.Add(200, "application/json", []byte(`{"series":null}`))
	f.Add(200, "text/html", []byte(`<html>proxy login</html>`))
	f.Add(200, "application/json", []byte(`{"series":[{"samples":[[1,2]`))
	f.Add(422, "application/json", []byte(`{"error":"the answer would hold 9 points","limit":"max_points"}`))
	f.Add(429, "application/json", []byte(`{"error":"busy","limit":"max_concurrent"}`))
	f.Add(400, "application/json", []byte(`{"error":"bad","parameter":"start"}`))
	f.Add(503, "text/plain", bytes.Repeat([]byte("x"), 5000))
	f.Add(302, "", []byte{})
	f.Fuzz(func(t *testing.T, status int, ctype string, body []byte) {
		if status < 100 || status > 999 {
			return // net/http never delivers these
		}
		client, err := New("http://127.0.0.1:1", Options{Client: &http.Client{Transport: replyTransport{status, ctype, body}},
			MaxAnswerBytes: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		series, err := client.Query(context.Background(), store.Query{Measurement: "m",
			Start: time.Unix(0, 0), End: time.Unix(60, 0)})
		if status != http.StatusOK {
			if err == nil {
				t.Fatalf("HTTP %d answered without an error: %v", status, series)
			}
			if status >= 500 || status == 429 || status == 408 {
				if !errors.Is(err, store.ErrUnavailable) {
					t.Fatalf("HTTP %d = %v, want ErrUnavailable", status, err)
				}
			}
			if status == 400 || status == 422 {
				if !errors.Is(err, store.ErrInvalidQuery) {
					t.Fatalf("HTTP %d = %v, want ErrInvalidQuery", status, err)
				}
			}
		}
		if err != nil {
			if n := len(err.Error()); n > maxErrorBody+1000 {
				t.Fatalf("error message of %d bytes", n)
			}
			return
		}
		// What was accepted is an answer the handler could have sent: it
		// encodes and decodes back to the same series.
		enc, err := appendResponse(nil, series, 0)
		if err != nil {
			t.Fatalf("accepted series do not encode: %v", err)
		}
		var back response
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("%q accepted, but its encoding %q does not decode: %v", body, enc, err)
		}
		again := back.toSeries()
		if len(again) != len(series) {
			t.Fatalf("%d series, %d after a round trip", len(series), len(again))
		}
		for i := range series {
			if len(again[i].Samples) != len(series[i].Samples) || again[i].Measurement != series[i].Measurement ||
				!maps.Equal(again[i].Tags, series[i].Tags) && len(series[i].Tags)+len(again[i].Tags) > 0 {
				t.Fatalf("series %d: %+v, %+v after a round trip", i, series[i], again[i])
			}
		}
	})
}
