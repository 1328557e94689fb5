// Package storetest is the conformance suite every store.Store passes.
//
// Each implementation's test calls Run with a function that opens a store;
// the suite writes, queries and checks the results against values computed by
// hand, so that the embedded store and InfluxDB answer every query alike.
// Tests write into measurements named after the test and a per-run nonce, so
// that they can share one InfluxDB database across runs.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

// base is a Monday at midnight UTC, so that minutes, hours and days are all
// aligned at it.
var base = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Run runs the conformance suite. open returns an empty-or-shared store for
// one subtest; the suite closes it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	nonce := fmt.Sprintf("%x", rand.Uint32())
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store, m string)
	}{
		{"WriteAndReadRaw", testWriteAndReadRaw},
		{"TagMatching", testTagMatching},
		{"Range", testRange},
		{"Aggregates", testAggregates},
		{"WindowAlignment", testWindowAlignment},
		{"Empty", testEmpty},
		{"ManySeries", testManySeries},
		{"RejectsNonFinite", testRejectsNonFinite},
		{"RejectsInvalid", testRejectsInvalid},
		{"InvalidQuery", testInvalidQuery},
		{"LargeBatch", testLargeBatch},
		{"Overwrite", testOverwrite},
		{"EscapedTags", testEscapedTags},
		{"EmptyTagValue", testEmptyTagValue},
		{"ConcurrentUse", testConcurrentUse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s, "conf_"+tc.name+"_"+nonce)
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func mustWrite(t *testing.T, s store.Store, points []store.Point) {
	t.Helper()
	if err := s.Write(ctx(t), points); err != nil {
		t.Fatalf("Write(%d points): %v", len(points), err)
	}
}

func mustQuery(t *testing.T, s store.Store, q store.Query) []store.Series {
	t.Helper()
	got, err := s.Query(ctx(t), q)
	if err != nil {
		t.Fatalf("Query(%+v): %v", q, err)
	}
	return got
}

// pt builds a point at base+offset.
func pt(m string, tags map[string]string, offset time.Duration, v float64) store.Point {
	return store.Point{Measurement: m, Tags: tags, Value: v, Time: base.Add(offset)}
}

func sample(offset time.Duration, v float64) store.Sample {
	return store.Sample{Time: base.Add(offset), Value: v}
}

// equalSeries compares results exactly on measurement, tags and times and
// to within 1e-9 relative on values (InfluxDB and Go may sum in a
// different order).
func equalSeries(t *testing.T, got, want []store.Series) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d series, want %d:\n got  %s\n want %s", len(got), len(want), describe(got), describe(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Measurement != w.Measurement || store.CanonicalTags(g.Tags) != store.CanonicalTags(w.Tags) {
			t.Fatalf("series %d is %s%s, want %s%s", i, g.Measurement, store.CanonicalTags(g.Tags),
				w.Measurement, store.CanonicalTags(w.Tags))
		}
		if len(g.Samples) != len(w.Samples) {
			t.Fatalf("series %s: got %d samples, want %d:\n got  %v\n want %v",
				store.CanonicalTags(w.Tags), len(g.Samples), len(w.Samples), g.Samples, w.Samples)
		}
		for j := range w.Samples {
			gs, ws := g.Samples[j], w.Samples[j]
			if !gs.Time.Equal(ws.Time) || !approxEqual(gs.Value, ws.Value) {
				t.Fatalf("series %s sample %d = (%s, %v), want (%s, %v)", store.CanonicalTags(w.Tags), j,
					gs.Time.UTC().Format(time.RFC3339Nano), gs.Value, ws.Time.UTC().Format(time.RFC3339Nano), ws.Value)
			}
		}
	}
}

// sortSeries puts series in the order Query returns them.
func sortSeries(ss []store.Series) {
	slices.SortFunc(ss, func(a, b store.Series) int {
		return strings.Compare(store.CanonicalTags(a.Tags), store.CanonicalTags(b.Tags))
	})
}

func approxEqual(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func describe(ss []store.Series) string {
	s := ""
	for _, x := range ss {
		s += fmt.Sprintf("%s%s(%d) ", x.Measurement, store.CanonicalTags(x.Tags), len(x.Samples))
	}
	return s
}

func testWriteAndReadRaw(t *testing.T, s store.Store, m string) {
	a := map[string]string{"pool": "a", "host": "h1"}
	b := map[string]string{"pool": "b", "host": "h1"}
	// Written out of time order and interleaved: reads come back sorted.
	mustWrite(t, s, []store.Point{
		pt(m, b, 20*time.Second, 2.5),
		pt(m, a, 10*time.Second, 1),
		pt(m, a, 0, 0.5),
		pt(m, b, 0, -3),
		pt(m, a, 5*time.Second+123456789, 1e300),
	})
	got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Minute)})
	equalSeries(t, got, []store.Series{
		{Measurement: m, Tags: a, Samples: []store.Sample{
			sample(0, 0.5), sample(5*time.Second+123456789, 1e300), sample(10*time.Second, 1)}},
		{Measurement: m, Tags: b, Samples: []store.Sample{sample(0, -3), sample(20*time.Second, 2.5)}},
	})
	// Tags come back as written, not merely with the same canonical string.
	if !reflect.DeepEqual(got[0].Tags, a) {
		t.Errorf("tags = %v, want %v", got[0].Tags, a)
	}
}

func testTagMatching(t *testing.T, s store.Store, m string) {
	series := []map[string]string{
		{"pool": "a", "host": "h1", "gpu": "0"},
		{"pool": "a", "host": "h1", "gpu": "1"},
		{"pool": "a", "host": "h2", "gpu": "0"},
		{"pool": "b", "host": "h3", "gpu": "0"},
		{"pool": "ab"}, // a prefix of no other value: must not match pool=a
	}
	var points []store.Point
	for i, tags := range series {
		points = append(points, pt(m, tags, time.Duration(i)*time.Second, float64(i)))
	}
	points = append(points, pt(m+"_other", series[0], 0, 99)) // another measurement
	mustWrite(t, s, points)

	tests := []struct {
		match map[string]string
		want  []int // indexes into series
	}{
		{nil, []int{0, 1, 2, 3, 4}},
		{map[string]string{"pool": "a"}, []int{0, 1, 2}},
		{map[string]string{"pool": "a", "host": "h1"}, []int{0, 1}},
		{map[string]string{"pool": "a", "host": "h1", "gpu": "1"}, []int{1}},
		{map[string]string{"gpu": "0"}, []int{0, 2, 3}},
		{map[string]string{"pool": "c"}, nil},
		{map[string]string{"rack": "r1"}, nil}, // a key no series has
	}
	for _, tc := range tests {
		t.Run(store.CanonicalTags(tc.match), func(t *testing.T) {
			got := mustQuery(t, s, store.Query{Measurement: m, Match: tc.match, Start: base, End: base.Add(time.Hour)})
			var want []store.Series
			for _, i := range tc.want {
				want = append(want, store.Series{Measurement: m, Tags: series[i],
					Samples: []store.Sample{sample(time.Duration(i)*time.Second, float64(i))}})
			}
			sortSeries(want)
			equalSeries(t, got, want)
		})
	}
}

func testRange(t *testing.T, s store.Store, m string) {
	tags := map[string]string{"pool": "a"}
	var points []store.Point
	for i := range 10 {
		points = append(points, pt(m, tags, time.Duration(i)*time.Second, float64(i)))
	}
	mustWrite(t, s, points)
	tests := []struct {
		name     string
		from, to time.Duration
		want     []float64 // values, which equal their second
	}{
		{"start inclusive end exclusive", 2 * time.Second, 5 * time.Second, []float64{2, 3, 4}},
		{"one nanosecond", 3 * time.Second, 3*time.Second + 1, []float64{3}},
		{"between points", 3*time.Second + 1, 4 * time.Second, nil},
		{"covers all", -time.Hour, time.Hour, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"before all", -time.Hour, 0, nil},
		{"after all", 10 * time.Second, time.Hour, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustQuery(t, s, store.Query{Measurement: m, Start: base.Add(tc.from), End: base.Add(tc.to)})
			var want []store.Series
			if len(tc.want) > 0 {
				ser := store.Series{Measurement: m, Tags: tags}
				for _, v := range tc.want {
					ser.Samples = append(ser.Samples, sample(time.Duration(v)*time.Second, v))
				}
				want = []store.Series{ser}
			}
			equalSeries(t, got, want)
		})
	}
}

// aggData is two minutes of points plus a gap and a third minute: 0:00
// [1, 4, 2], 0:01 [10, -5], 0:03 [7]. The value at 0:00:50 is written
// before the one at 0:00:10 to check that "last" means latest in time.
func aggData(m string, tags map[string]string) []store.Point {
	return []store.Point{
		pt(m, tags, 50*time.Second, 2),
		pt(m, tags, 0, 1),
		pt(m, tags, 10*time.Second, 4),
		pt(m, tags, 60*time.Second, 10),
		pt(m, tags, 119*time.Second, -5),
		pt(m, tags, 3*time.Minute+30*time.Second, 7),
	}
}

func testAggregates(t *testing.T, s store.Store, m string) {
	tags := map[string]string{"pool": "a"}
	mustWrite(t, s, aggData(m, tags))
	tests := []struct {
		agg  store.Aggregate
		want []float64 // windows 0:00, 0:01, 0:03 (0:02 is empty: left out)
	}{
		{store.Mean, []float64{7.0 / 3, 2.5, 7}},
		{store.Sum, []float64{7, 5, 7}},
		{store.Max, []float64{4, 10, 7}},
		{store.Min, []float64{1, -5, 7}},
		{store.Last, []float64{2, -5, 7}},
		{store.Count, []float64{3, 2, 1}},
	}
	for _, tc := range tests {
		t.Run(string(tc.agg), func(t *testing.T) {
			got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour),
				Step: time.Minute, Aggregate: tc.agg})
			equalSeries(t, got, []store.Series{{Measurement: m, Tags: tags, Samples: []store.Sample{
				sample(0, tc.want[0]), sample(time.Minute, tc.want[1]), sample(3*time.Minute, tc.want[2])}}})
		})
	}
}

func testWindowAlignment(t *testing.T, s store.Store, m string) {
	tags := map[string]string{"pool": "a"}
	mustWrite(t, s, aggData(m, tags))
	tests := []struct {
		name     string
		from, to time.Duration
		step     time.Duration
		want     []store.Sample
	}{
		{
			// The first window is clipped to the range but still reported
			// at its epoch-aligned start, 0:00, not at the query start.
			name: "unaligned start", from: 5 * time.Second, to: time.Hour, step: time.Minute,
			want: []store.Sample{sample(0, 2), sample(time.Minute, 2), sample(3*time.Minute, 1)},
		},
		{
			// The last window is clipped to the end: 0:01:00-0:01:30 holds
			// only the point at 0:01:00.
			name: "unaligned end", from: 0, to: 90 * time.Second, step: time.Minute,
			want: []store.Sample{sample(0, 3), sample(time.Minute, 1)},
		},
		{
			// 90 s windows from the epoch: base is 1767571200 s = 19639680·90 s,
			// so windows start at base, base+1:30, base+3:00.
			name: "step not dividing a minute", from: 0, to: time.Hour, step: 90 * time.Second,
			want: []store.Sample{sample(0, 4), sample(90*time.Second, 1), sample(3*time.Minute, 1)},
		},
		{
			// 7 s windows: base is 252510171·7 s + 3 s, so the windows holding
			// the points start 3 s before base (the points at 0, 10, 50 s land
			// in windows starting at -3, 4 and 46 s).
			name: "windows not aligned to the range", from: -10 * time.Second, to: 55 * time.Second, step: 7 * time.Second,
			want: []store.Sample{sample(-3*time.Second, 1), sample(4*time.Second, 1), sample(46*time.Second, 1)},
		},
		{
			name: "one window over everything", from: 0, to: 24 * time.Hour, step: 24 * time.Hour,
			want: []store.Sample{sample(0, 6)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustQuery(t, s, store.Query{Measurement: m, Start: base.Add(tc.from), End: base.Add(tc.to),
				Step: tc.step, Aggregate: store.Count})
			equalSeries(t, got, []store.Series{{Measurement: m, Tags: tags, Samples: tc.want}})
		})
	}
	if got := base.Unix() % 90; got != 0 {
		t.Fatalf("test data assumption broken: base mod 90 s = %d", got)
	}
	if got := base.Unix() % 7; got != 3 {
		t.Fatalf("test data assumption broken: base mod 7 s = %d", got)
	}
}

func testEmpty(t *testing.T, s store.Store, m string) {
	tags := map[string]string{"pool": "a"}
	mustWrite(t, s, []store.Point{pt(m, tags, 0, 1)})
	tests := []struct {
		name string
		q    store.Query
	}{
		{"unknown measurement", store.Query{Measurement: m + "_nothing", Start: base, End: base.Add(time.Hour)}},
		{"no points in range", store.Query{Measurement: m, Start: base.Add(time.Minute), End: base.Add(time.Hour)}},
		{"aggregated, no points in range", store.Query{Measurement: m, Start: base.Add(time.Minute), End: base.Add(time.Hour),
			Step: time.Minute, Aggregate: store.Mean}},
		{"no series matches", store.Query{Measurement: m, Match: map[string]string{"pool": "b"}, Start: base, End: base.Add(time.Hour)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustQuery(t, s, tc.q); len(got) != 0 {
				t.Fatalf("got %s, want no series", describe(got))
			}
		})
	}
	if err := s.Write(ctx(t), nil); err != nil {
		t.Errorf("Write(nil) = %v, want nil", err)
	}
}

func testManySeries(t *testing.T, s store.Store, m string) {
	const hosts, gpus, steps = 50, 8, 6 // 400 series
	var points []store.Point
	for h := range hosts {
		for g := range gpus {
			tags := map[string]string{"pool": fmt.Sprintf("p%d", h%5), "host": fmt.Sprintf("h%02d", h), "gpu": fmt.Sprint(g)}
			for i := range steps {
				points = append(points, pt(m, tags, time.Duration(i)*10*time.Second, float64(h*100+g)))
			}
		}
	}
	mustWrite(t, s, points)
	got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour), Step: time.Minute, Aggregate: store.Mean})
	if len(got) != hosts*gpus {
		t.Fatalf("got %d series, want %d", len(got), hosts*gpus)
	}
	for i, ser := range got {
		if i > 0 && store.CanonicalTags(got[i-1].Tags) >= store.CanonicalTags(ser.Tags) {
			t.Fatalf("series %d %s not after %s", i, store.CanonicalTags(ser.Tags), store.CanonicalTags(got[i-1].Tags))
		}
		var h, g int
		fmt.Sscanf(ser.Tags["host"]+" "+ser.Tags["gpu"], "h%d %d", &h, &g)
		want := []store.Sample{sample(0, float64(h*100+g))}
		if len(ser.Samples) != 1 || !ser.Samples[0].Time.Equal(want[0].Time) || ser.Samples[0].Value != want[0].Value {
			t.Fatalf("series %s = %v, want %v", store.CanonicalTags(ser.Tags), ser.Samples, want)
		}
	}
	pool := mustQuery(t, s, store.Query{Measurement: m, Match: map[string]string{"pool": "p3"}, Start: base, End: base.Add(time.Hour)})
	if len(pool) != hosts/5*gpus {
		t.Fatalf("pool p3: got %d series, want %d", len(pool), hosts/5*gpus)
	}
}

func testRejectsNonFinite(t *testing.T, s store.Store, m string) {
	tags := map[string]string{"pool": "a"}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			// A good point first: the batch must be refused whole.
			err := s.Write(ctx(t), []store.Point{pt(m, tags, 0, 1), pt(m, tags, time.Second, v)})
			if !errors.Is(err, store.ErrInvalidPoint) {
				t.Fatalf("Write(%v) = %v, want an error wrapping store.ErrInvalidPoint", v, err)
			}
			if errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("Write(%v) = %v: must not claim the store is unavailable", v, err)
			}
			if msg := err.Error(); !containsAll(msg, "point 1", "not finite", m) {
				t.Errorf("error %q should name the point's index, the measurement and say the value is not finite", msg)
			}
		})
	}
	if got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour)}); len(got) != 0 {
		t.Fatalf("refused batches left %s behind", describe(got))
	}
}

func testRejectsInvalid(t *testing.T, s store.Store, m string) {
	good := pt(m, map[string]string{"pool": "a"}, 0, 1)
	tests := []struct {
		name string
		edit func(p *store.Point)
	}{
		{"empty measurement", func(p *store.Point) { p.Measurement = "" }},
		{"zero time", func(p *store.Point) { p.Time = time.Time{} }},
		{"reserved tag key", func(p *store.Point) { p.Tags = map[string]string{"_field": "x"} }},
		{"time tag key", func(p *store.Point) { p.Tags = map[string]string{"time": "x"} }},
		{"empty tag key", func(p *store.Point) { p.Tags = map[string]string{"": "x"} }},
		{"newline in tag value", func(p *store.Point) { p.Tags = map[string]string{"pool": "a\nb"} }},
		{"invalid UTF-8", func(p *store.Point) { p.Tags = map[string]string{"pool": "\xff"} }},
		{"trailing backslash in tag value", func(p *store.Point) { p.Tags = map[string]string{"pool": `a\`} }},
		{"trailing backslash in measurement", func(p *store.Point) { p.Measurement += `\` }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := good
			tc.edit(&bad)
			if err := s.Write(ctx(t), []store.Point{good, bad}); !errors.Is(err, store.ErrInvalidPoint) {
				t.Fatalf("Write = %v, want an error wrapping store.ErrInvalidPoint", err)
			}
		})
	}
	if got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour)}); len(got) != 0 {
		t.Fatalf("refused batches left %s behind", describe(got))
	}
}

func testInvalidQuery(t *testing.T, s store.Store, m string) {
	ok := store.Query{Measurement: m, Start: base, End: base.Add(time.Hour), Step: time.Minute, Aggregate: store.Mean}
	tests := []struct {
		name string
		edit func(q *store.Query)
	}{
		{"no measurement", func(q *store.Query) { q.Measurement = "" }},
		{"end before start", func(q *store.Query) { q.End = q.Start.Add(-time.Second) }},
		{"empty range", func(q *store.Query) { q.End = q.Start }},
		{"negative step", func(q *store.Query) { q.Step = -time.Second }},
		{"unknown aggregate", func(q *store.Query) { q.Aggregate = "median" }},
		{"no aggregate", func(q *store.Query) { q.Aggregate = "" }},
		{"empty match value", func(q *store.Query) { q.Match = map[string]string{"pool": ""} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := ok
			tc.edit(&q)
			if _, err := s.Query(ctx(t), q); !errors.Is(err, store.ErrInvalidQuery) {
				t.Fatalf("Query = %v, want an error wrapping store.ErrInvalidQuery", err)
			}
		})
	}
}

func testLargeBatch(t *testing.T, s store.Store, m string) {
	const series, perSeries = 20, 5000 // 100,000 points in one Write
	points := make([]store.Point, 0, series*perSeries)
	for i := range perSeries {
		for sr := range series {
			points = append(points, pt(m, map[string]string{"gpu": fmt.Sprint(sr)}, time.Duration(i)*time.Second, float64(i)))
		}
	}
	mustWrite(t, s, points)
	got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(24 * time.Hour),
		Step: 24 * time.Hour, Aggregate: store.Count})
	if len(got) != series {
		t.Fatalf("got %d series, want %d", len(got), series)
	}
	sums := mustQuery(t, s, store.Query{Measurement: m, Match: map[string]string{"gpu": "7"}, Start: base,
		End: base.Add(24 * time.Hour), Step: 24 * time.Hour, Aggregate: store.Sum})
	for _, ser := range got {
		if len(ser.Samples) != 1 || ser.Samples[0].Value != perSeries {
			t.Fatalf("series %s: counts %v, want one window of %d", store.CanonicalTags(ser.Tags), ser.Samples, perSeries)
		}
	}
	wantSum := float64(perSeries*(perSeries-1)) / 2
	if len(sums) != 1 || len(sums[0].Samples) != 1 || sums[0].Samples[0].Value != wantSum {
		t.Fatalf("gpu 7: sum %v, want %v", sums, wantSum)
	}
}

func testOverwrite(t *testing.T, s store.Store, m string) {
	tags := map[string]string{"pool": "a"}
	mustWrite(t, s, []store.Point{pt(m, tags, 0, 1), pt(m, tags, time.Second, 2)})
	// Same series and time again (in another batch, and twice within one):
	// the last value written wins, as in InfluxDB.
	mustWrite(t, s, []store.Point{pt(m, tags, 0, 5), pt(m, tags, 0, 6)})
	got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour)})
	equalSeries(t, got, []store.Series{{Measurement: m, Tags: tags, Samples: []store.Sample{sample(0, 6), sample(time.Second, 2)}}})
}

func testEscapedTags(t *testing.T, s store.Store, m string) {
	// Values that line protocol and Flux must escape, and one that tries to
	// widen a Flux filter: each must match exactly its own series.
	values := []string{
		`plain`,
		`with space`,
		`comma,equals=`,
		`quote"inside`,
		`back\slash`,
		`inner\\double`,
		`dollar${1+1}`,
		`") or true or r._value == ("`,
		`日本語`,
	}
	var points []store.Point
	for i, v := range values {
		points = append(points, pt(m, map[string]string{"pool": v, "k e,y=": v}, time.Duration(i)*time.Second, float64(i)))
	}
	mustWrite(t, s, points)
	for i, v := range values {
		t.Run(v, func(t *testing.T) {
			tags := map[string]string{"pool": v, "k e,y=": v}
			got := mustQuery(t, s, store.Query{Measurement: m, Match: map[string]string{"pool": v}, Start: base, End: base.Add(time.Hour)})
			equalSeries(t, got, []store.Series{{Measurement: m, Tags: tags, Samples: []store.Sample{sample(time.Duration(i)*time.Second, float64(i))}}})
		})
	}
	all := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour)})
	if len(all) != len(values) {
		t.Fatalf("got %d series, want %d: %s", len(all), len(values), describe(all))
	}

	// Measurement names need escaping too.
	odd := m + ` with space,comma="quote"\x`
	mustWrite(t, s, []store.Point{pt(odd, nil, 0, 42)})
	got := mustQuery(t, s, store.Query{Measurement: odd, Start: base, End: base.Add(time.Hour)})
	equalSeries(t, got, []store.Series{{Measurement: odd, Samples: []store.Sample{sample(0, 42)}}})
}

func testEmptyTagValue(t *testing.T, s store.Store, m string) {
	// InfluxDB drops tags with empty values; every store does the same, so
	// {pool: a, host: ""} is the series {pool: a}.
	mustWrite(t, s, []store.Point{
		pt(m, map[string]string{"pool": "a", "host": ""}, 0, 1),
		pt(m, map[string]string{"pool": "a"}, time.Second, 2),
	})
	got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour)})
	equalSeries(t, got, []store.Series{{Measurement: m, Tags: map[string]string{"pool": "a"},
		Samples: []store.Sample{sample(0, 1), sample(time.Second, 2)}}})
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func testConcurrentUse(t *testing.T, s store.Store, m string) {
	// Four writers (one series each, 10 batches of 100 points) and a reader
	// at the same time; afterwards every point is there.
	const writers, batches, perBatch = 4, 10, 100
	c := ctx(t)
	errs := make(chan error, writers+1)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				points := make([]store.Point, perBatch)
				for i := range points {
					points[i] = pt(m, map[string]string{"writer": fmt.Sprint(w)}, time.Duration(b*perBatch+i)*time.Second, 1)
				}
				if err := s.Write(c, points); err != nil {
					errs <- fmt.Errorf("writer %d batch %d: %w", w, b, err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10 {
			if _, err := s.Query(c, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour), Step: time.Minute, Aggregate: store.Sum}); err != nil {
				errs <- fmt.Errorf("reader: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := mustQuery(t, s, store.Query{Measurement: m, Start: base, End: base.Add(time.Hour), Step: time.Hour, Aggregate: store.Count})
	if len(got) != writers {
		t.Fatalf("got %d series, want %d", len(got), writers)
	}
	for _, ser := range got {
		if len(ser.Samples) != 1 || ser.Samples[0].Value != batches*perBatch {
			t.Fatalf("series %s: %v, want one window counting %d", store.CanonicalTags(ser.Tags), ser.Samples, batches*perBatch)
		}
	}
}
