package remote

import (
	"errors"
	"maps"
	"math"
	"net/url"
	"testing"

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
		enc := appendSamples(nil, got)
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
