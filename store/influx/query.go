package influx

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api"
	"github.com/influxdata/influxdb-client-go/v2/api/query"

	"github.com/prewarm/prewarm/store"
)

// Query runs q as a Flux script (see the package doc) and returns one
// Series per tag set, sorted by store.CanonicalTags, samples in time order.
func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	if err := store.RefuseExpr(q, "InfluxDB"); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	flux := buildFlux(s.cfg.Bucket, q)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := s.reader.Query(ctx, flux)
	if err != nil {
		return nil, s.wrap("query", err, ctx)
	}
	defer res.Close()
	out, err := collect(res, q)
	if err != nil {
		return nil, s.red.Error(fmt.Errorf("influx query %s: %w", q.Measurement, err))
	}
	if err := res.Err(); err != nil {
		return nil, s.wrap("query", err, ctx)
	}
	return out, nil
}

// collect decodes a Flux result (annotated CSV, parsed by the client) into
// one Series per tag set, sorted by store.CanonicalTags, samples in time
// order. Null values (empty windows) are skipped; a value that is not a
// number is an error. For an aggregated q each time is put back on the
// epoch-aligned window start.
func collect(res *api.QueryTableResult, q store.Query) ([]store.Series, error) {
	bySeries := make(map[string]*store.Series)
	var prev *query.FluxRecord
	for res.Next() {
		// The client reports a row with an annotation it does not know
		// ("#x,...") as a record: none before any data, the previous
		// one again after. Neither is data.
		rec := res.Record()
		if rec == nil || rec == prev {
			continue
		}
		prev = rec
		value, err := toFloat(rec.Value())
		if err != nil {
			return nil, err
		}
		if value == nil {
			continue // a null: an empty window, should createEmpty ever be on
		}
		t := rec.Time()
		if q.Step > 0 {
			// timeSrc "_start" gives the window start, clipped to the range
			// start for the first window: align it back to the epoch.
			t = store.WindowStart(t, q.Step)
		}
		tags := tagsOf(rec.Values())
		key := store.CanonicalTags(tags)
		ser, ok := bySeries[key]
		if !ok {
			ser = &store.Series{Measurement: q.Measurement, Tags: tags}
			bySeries[key] = ser
		}
		ser.Samples = append(ser.Samples, store.Sample{Time: t.UTC(), Value: *value})
	}
	out := make([]store.Series, 0, len(bySeries))
	for _, key := range slices.Sorted(maps.Keys(bySeries)) {
		ser := bySeries[key]
		slices.SortStableFunc(ser.Samples, func(a, b store.Sample) int { return a.Time.Compare(b.Time) })
		out = append(out, *ser)
	}
	return out, nil
}

// fluxAggregates maps each store.Aggregate to its Flux function.
var fluxAggregates = map[store.Aggregate]string{
	store.Mean: "mean", store.Sum: "sum", store.Max: "max",
	store.Min: "min", store.Last: "last", store.Count: "count",
}

// buildFlux renders q (already validated) as a Flux script. Every string
// from the caller goes through fluxString.
func buildFlux(bucket string, q store.Query) string {
	var b strings.Builder
	fmt.Fprintf(&b, "from(bucket: %s)\n", fluxString(bucket))
	fmt.Fprintf(&b, "  |> range(start: %s, stop: %s)\n", fluxTime(q.Start), fluxTime(q.End))
	fmt.Fprintf(&b, "  |> filter(fn: (r) => r._measurement == %s and r._field == %s",
		fluxString(q.Measurement), fluxString(field))
	for _, k := range slices.Sorted(maps.Keys(q.Match)) {
		fmt.Fprintf(&b, " and r[%s] == %s", fluxString(k), fluxString(q.Match[k]))
	}
	b.WriteString(")\n")
	// InfluxDB 1.8 treats range's stop as inclusive; 2.x as exclusive. This
	// second filter (kept apart so that 2.x still pushes the first one down
	// to storage) makes the end exclusive on both.
	fmt.Fprintf(&b, "  |> filter(fn: (r) => r._time < %s)\n", fluxTime(q.End))
	if q.Step > 0 {
		fmt.Fprintf(&b, "  |> aggregateWindow(every: %dns, fn: %s, timeSrc: \"_start\", createEmpty: false)\n",
			int64(q.Step), fluxAggregates[q.Aggregate])
	}
	return b.String()
}

// fluxString quotes s as a Flux string literal: backslash, double quote and
// the interpolation opener "${" are escaped, so the literal always ends
// where we end it and never evaluates anything.
func fluxString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '"':
			b.WriteString(`\"`)
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			b.WriteString(`\${`)
			i++
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fluxTime renders t as a Flux time literal (RFC 3339, UTC, nanoseconds).
func fluxTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// fluxColumns are the columns of a Flux result that are not tags.
var fluxColumns = map[string]bool{
	"result": true, "table": true, "_start": true, "_stop": true, "_time": true,
	"_value": true, "_field": true, "_measurement": true,
}

// tagsOf picks the tags out of a result row: every other non-empty string
// column.
func tagsOf(values map[string]any) map[string]string {
	var tags map[string]string
	for k, v := range values {
		s, ok := v.(string)
		if fluxColumns[k] || !ok || s == "" {
			continue
		}
		if tags == nil {
			tags = make(map[string]string)
		}
		tags[k] = s
	}
	return tags
}

// toFloat converts a _value (float for most aggregates, int for count) to
// float64; nil for a null.
func toFloat(v any) (*float64, error) {
	var f float64
	switch x := v.(type) {
	case nil:
		return nil, nil
	case float64:
		f = x
	case int64:
		f = float64(x)
	case uint64:
		f = float64(x)
	case string:
		p, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return nil, fmt.Errorf("value %q is not a number (was the field written by something else?)", x)
		}
		f = p
	default:
		return nil, fmt.Errorf("value %v of type %T is not a number", v, v)
	}
	return &f, nil
}
