package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prewarm/prewarm/store"
)

// Path is where the collector mounts Handler, and what the client calls
// below its base URL.
const Path = "/api/v1/query"

// The query string's parameters.
const (
	paramMeasurement = "measurement"
	paramMatch       = "match"
	paramStart       = "start"
	paramEnd         = "end"
	paramStep        = "step"
	paramAggregate   = "aggregate"
)

// paramError is a query string the handler refuses, with the parameter at
// fault.
type paramError struct {
	param string
	err   error
}

func (e *paramError) Error() string { return fmt.Sprintf("parameter %q: %v", e.param, e.err) }
func (e *paramError) Unwrap() error { return e.err }

func badParam(param, format string, args ...any) *paramError {
	return &paramError{param: param, err: fmt.Errorf("%w: "+format, append([]any{store.ErrInvalidQuery}, args...)...)}
}

// parseQuery turns a query string into a store.Query that passes
// store.Query.Validate, or says which parameter is wrong.
func parseQuery(v url.Values) (store.Query, *paramError) {
	var q store.Query
	for _, name := range slices.Sorted(maps.Keys(v)) { // sorted: the same error every time
		values := v[name]
		switch name {
		case paramMeasurement, paramStart, paramEnd, paramStep, paramAggregate:
			if len(values) > 1 {
				return q, badParam(name, "given %d times, want once", len(values))
			}
		case paramMatch:
		default:
			if name == "" {
				return q, badParam("(empty)", "a parameter without a name")
			}
			return q, badParam(name, "unknown parameter (want measurement, match, start, end, step, aggregate)")
		}
	}
	q.Measurement = v.Get(paramMeasurement)
	var perr *paramError
	if q.Start, perr = parseTime(v, paramStart); perr != nil {
		return q, perr
	}
	if q.End, perr = parseTime(v, paramEnd); perr != nil {
		return q, perr
	}
	if s := v.Get(paramStep); s != "" {
		step, err := time.ParseDuration(s)
		if err != nil {
			return q, badParam(paramStep, "%q is not a duration like 5m or 1h", s)
		}
		q.Step = step
	}
	if a, ok := v[paramAggregate]; ok {
		q.Aggregate = store.Aggregate(a[0])
		if !q.Aggregate.Valid() {
			return q, badParam(paramAggregate, "unknown aggregate %q (want mean, sum, max, min, last or count)", a[0])
		}
	}
	for _, m := range v[paramMatch] {
		k, val, ok := strings.Cut(m, "=")
		if !ok {
			return q, badParam(paramMatch, "%q is not KEY=VALUE", m)
		}
		if _, dup := q.Match[k]; dup {
			return q, badParam(paramMatch, "tag %q given twice", k)
		}
		if q.Match == nil {
			q.Match = map[string]string{}
		}
		q.Match[k] = val
	}
	if err := q.Validate(); err != nil {
		return q, &paramError{param: faultyParam(q), err: err}
	}
	return q, nil
}

func parseTime(v url.Values, name string) (time.Time, *paramError) {
	s := v.Get(name)
	if s == "" {
		return time.Time{}, badParam(name, "missing; want an RFC 3339 time such as 2026-01-05T00:00:00Z")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, badParam(name, "%q is not an RFC 3339 time such as 2026-01-05T00:00:00Z", s)
	}
	if !encodable(t) {
		return time.Time{}, badParam(name, "%q is outside the years 0000-9999 in UTC", s)
	}
	return t, nil
}

// encodable reports whether t, in UTC, can be written as RFC 3339 (years
// 0000 to 9999), as the client sends it. An offset can move a time written
// in year 0000 or 9999 out of that range (0000-01-01T00:00:00+01:00 is in
// year -1), which the client could not send back.
func encodable(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// faultyParam names the parameter that makes q fail store.Query.Validate,
// asking Validate itself (one field at a time against a known-good query)
// so that this package never disagrees with the store's rules.
func faultyParam(q store.Query) string {
	good := store.Query{Measurement: "m", Start: time.Unix(0, 0), End: time.Unix(1, 0)}
	probes := []struct {
		param string
		edit  func(p *store.Query)
	}{
		{paramMeasurement, func(p *store.Query) { p.Measurement = q.Measurement }},
		{paramEnd, func(p *store.Query) { p.Start, p.End = q.Start, q.End }},
		{paramStep, func(p *store.Query) { p.Step, p.Aggregate = min(q.Step, 0), store.Mean }},
		{paramAggregate, func(p *store.Query) { p.Step, p.Aggregate = q.Step, q.Aggregate }},
		{paramMatch, func(p *store.Query) { p.Match = q.Match }},
	}
	for _, pr := range probes {
		p := good
		pr.edit(&p)
		if p.Validate() != nil {
			return pr.param
		}
	}
	return "" // not reached while Validate checks only these fields
}

// encodeQuery is parseQuery's inverse: the query string the client sends.
// The aggregate is sent only with a step, as the store ignores it without.
func encodeQuery(q store.Query) url.Values {
	v := url.Values{}
	v.Set(paramMeasurement, q.Measurement)
	v.Set(paramStart, q.Start.UTC().Format(time.RFC3339Nano))
	v.Set(paramEnd, q.End.UTC().Format(time.RFC3339Nano))
	if q.Step > 0 {
		v.Set(paramStep, q.Step.String())
		v.Set(paramAggregate, string(q.Aggregate))
	}
	for k, val := range q.Match {
		v.Add(paramMatch, k+"="+val)
	}
	return v
}

// checkEncodable reports the queries the query string cannot carry: a match
// key holding '=' (the parameter is split at its first '='), a start or end
// outside the years 0000-9999 in UTC.
func checkEncodable(q store.Query) error {
	for _, t := range []time.Time{q.Start, q.End} {
		if !encodable(t) {
			return fmt.Errorf("%w: time %s is outside the years 0000-9999, which the HTTP query API cannot carry", store.ErrInvalidQuery, t)
		}
	}
	for k := range q.Match {
		if strings.Contains(k, "=") {
			return fmt.Errorf("%w: match: tag key %q contains '=', which the HTTP query API cannot carry", store.ErrInvalidQuery, k)
		}
	}
	return nil
}

// errAnswerTooLarge is appendResponse's error past its size limit.
var errAnswerTooLarge = errors.New("answer over the size limit")

// appendResponse appends the JSON answer for series to b, failing with
// errAnswerTooLarge as soon as b would grow past maxBytes (<= 0: no
// limit). Samples are written by hand: they are nearly all of the bytes,
// and encoding/json would spend most of its time on reflection.
func appendResponse(b []byte, series []store.Series, maxBytes int) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = math.MaxInt
	}
	b = append(b, `{"series":[`...)
	for i, s := range series {
		if i > 0 {
			b = append(b, ',')
		}
		head, err := json.Marshal(struct {
			Measurement string            `json:"measurement"`
			Tags        map[string]string `json:"tags"`
		}{s.Measurement, nonNil(s.Tags)})
		if err != nil {
			return nil, err
		}
		b = append(b, head[:len(head)-1]...) // without its closing brace
		b = append(b, `,"samples":`...)
		if b = appendSamples(b, s.Samples, maxBytes); len(b) > maxBytes {
			return nil, errAnswerTooLarge
		}
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	if len(b) > maxBytes {
		return nil, errAnswerTooLarge
	}
	return b, nil
}

// appendSamples appends [[unix_ns, value], ...], stopping once b is longer
// than maxBytes.
func appendSamples(b []byte, samples []store.Sample, maxBytes int) []byte {
	b = append(b, '[')
	for j, smp := range samples {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, smp.Time.UnixNano(), 10)
		b = append(b, ',')
		b = appendValue(b, smp.Value)
		b = append(b, ']')
		if maxBytes > 0 && len(b) > maxBytes {
			return b
		}
	}
	return append(b, ']')
}

func nonNil(tags map[string]string) map[string]string {
	if tags == nil {
		return map[string]string{}
	}
	return tags
}

// appendValue writes v as the shortest JSON number that parses back to it,
// or as the string "+Inf", "-Inf" or "NaN".
func appendValue(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// response is the JSON answer as the client decodes it.
type response struct {
	Series []wireSeries `json:"series"`
}

type wireSeries struct {
	Measurement string            `json:"measurement"`
	Tags        map[string]string `json:"tags"`
	Samples     wireSamples       `json:"samples"`
}

// wireSamples is a series' [[time, value], ...] array.
type wireSamples []store.Sample

// UnmarshalJSON reads [[unixNanoseconds, value], ...], each value a number
// or one of "+Inf", "-Inf", "NaN". encoding/json has checked that data is
// valid JSON; splitting it by hand is several times faster than letting
// encoding/json reflect over every pair.
func (ws *wireSamples) UnmarshalJSON(data []byte) error {
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(data), []byte("["))
	if !ok {
		return fmt.Errorf("samples: want an array of [unix_ns, value], got %.40s", data)
	}
	out := make([]store.Sample, 0, bytes.Count(rest, []byte("],"))+1)
	rest = bytes.TrimSpace(rest)
	for len(rest) > 0 && rest[0] != ']' {
		end := bytes.IndexByte(rest, ']')
		if rest[0] != '[' || end < 0 {
			return fmt.Errorf("samples: want [unix_ns, value] at %.40s", rest)
		}
		smp, err := parseSample(rest[1:end])
		if err != nil {
			return fmt.Errorf("samples: %w", err)
		}
		out = append(out, smp)
		rest = bytes.TrimSpace(rest[end+1:])
		if r, ok := bytes.CutPrefix(rest, []byte(",")); ok {
			rest = bytes.TrimSpace(r)
			if len(rest) > 0 && rest[0] == ']' {
				return fmt.Errorf("samples: trailing comma")
			}
		} else if len(rest) == 0 || rest[0] != ']' {
			return fmt.Errorf("samples: want ',' or ']' at %.40s", rest)
		}
	}
	if len(rest) != 1 {
		return fmt.Errorf("samples: unterminated array or data after it: %.40s", rest)
	}
	*ws = out
	return nil
}

// parseSample reads the inside of one [unix_ns, value] pair.
func parseSample(pair []byte) (store.Sample, error) {
	rawTime, rawValue, ok := bytes.Cut(pair, []byte(","))
	if !ok || bytes.IndexByte(rawValue, ',') >= 0 {
		return store.Sample{}, fmt.Errorf("[%.40s]: want [unix_ns, value]", pair)
	}
	ns, err := strconv.ParseInt(string(bytes.TrimSpace(rawTime)), 10, 64)
	if err != nil {
		return store.Sample{}, fmt.Errorf("[%.40s]: time is not integer Unix nanoseconds", pair)
	}
	v, err := parseValue(bytes.TrimSpace(rawValue))
	if err != nil {
		return store.Sample{}, fmt.Errorf("[%.40s]: %w", pair, err)
	}
	return store.Sample{Time: time.Unix(0, ns).UTC(), Value: v}, nil
}

func parseValue(raw []byte) (float64, error) {
	switch string(raw) {
	case `"NaN"`:
		return math.NaN(), nil
	case `"+Inf"`:
		return math.Inf(1), nil
	case `"-Inf"`:
		return math.Inf(-1), nil
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || len(raw) == 0 || raw[0] == '"' {
		return 0, errors.New("value is not a number, \"+Inf\", \"-Inf\" or \"NaN\"")
	}
	return v, nil
}

// toSeries converts a decoded answer into what a store.Querier returns.
func (r *response) toSeries() []store.Series {
	if len(r.Series) == 0 {
		return nil
	}
	out := make([]store.Series, len(r.Series))
	for i, s := range r.Series {
		out[i] = store.Series{Measurement: s.Measurement, Tags: s.Tags, Samples: s.Samples}
	}
	return out
}
