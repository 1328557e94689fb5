package store_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

func TestCanonicalTags(t *testing.T) {
	tests := []struct {
		tags map[string]string
		want string
	}{
		{nil, `{}`},
		{map[string]string{"empty": ""}, `{}`},
		{map[string]string{"pool": "a", "gpu": "0", "host": ""}, `{"gpu":"0","pool":"a"}`},
		{map[string]string{"q": `a"b\c`}, `{"q":"a\"b\\c"}`},
		{map[string]string{"h": "<&>", "u": "日本"}, `{"h":"\u003c\u0026\u003e","u":"日本"}`},
	}
	for _, tc := range tests {
		if got := store.CanonicalTags(tc.tags); got != tc.want {
			t.Errorf("CanonicalTags(%v) = %s, want %s", tc.tags, got, tc.want)
		}
	}
}

// FuzzCanonicalTags checks that the fast encoder writes exactly what
// encoding/json writes for the same (normalized) map, and that it decodes
// back to it: go test ./store -run=^$ -fuzz=FuzzCanonicalTags -fuzztime=20s
func FuzzCanonicalTags(f *testing.F) {
	f.Add("pool", "a", "gpu", "0")
	f.Add("k\"", "v\\", "<", "\u2028")
	f.Add("a", "", "b", "\xff")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		tags := map[string]string{k1: v1, k2: v2}
		want, err := json.Marshal(store.NormalizeTags(tags))
		if err != nil {
			t.Fatal(err)
		}
		if string(want) == "null" {
			want = []byte("{}")
		}
		if got := store.CanonicalTags(tags); got != string(want) {
			t.Fatalf("CanonicalTags(%q) = %s, encoding/json says %s", tags, got, want)
		}
	})
}

func TestPointValidate(t *testing.T) {
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	good := store.Point{Measurement: "gpu_util", Tags: map[string]string{"pool": "a"}, Value: 1, Time: at}
	tests := []struct {
		name string
		edit func(p *store.Point)
		ok   bool
	}{
		{"good", func(p *store.Point) {}, true},
		// -0.0 in Go source is +0 (constant arithmetic); Copysign gives the
		// negative zero a sensor can report.
		{"negative zero is data", func(p *store.Point) { p.Value = math.Copysign(0, -1) }, true},
		{"zero is data", func(p *store.Point) { p.Value = 0 }, true},
		{"negative is data", func(p *store.Point) { p.Value = -3.5 }, true},
		{"empty tag value is no tag", func(p *store.Point) { p.Tags = map[string]string{"pool": ""} }, true},
		{"inner backslash", func(p *store.Point) { p.Tags = map[string]string{"pool": `a\b`} }, true},
		{"NaN", func(p *store.Point) { p.Value = math.NaN() }, false},
		{"+Inf", func(p *store.Point) { p.Value = math.Inf(1) }, false},
		{"-Inf", func(p *store.Point) { p.Value = math.Inf(-1) }, false},
		{"no measurement", func(p *store.Point) { p.Measurement = "" }, false},
		{"zero time", func(p *store.Point) { p.Time = time.Time{} }, false},
		{"year 2300", func(p *store.Point) { p.Time = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
		{"underscore key", func(p *store.Point) { p.Tags = map[string]string{"_measurement": "x"} }, false},
		{"table key", func(p *store.Point) { p.Tags = map[string]string{"table": "x"} }, false},
		{"tab in measurement", func(p *store.Point) { p.Measurement = "a\tb" }, false},
		{"trailing backslash key", func(p *store.Point) { p.Tags = map[string]string{`k\`: "v"} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			tc.edit(&p)
			if tc.name == "negative zero is data" && !math.Signbit(p.Value) {
				t.Fatal("the case does not build a negative zero")
			}
			err := p.Validate()
			if tc.ok != (err == nil) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, store.ErrInvalidPoint) {
				t.Fatalf("Validate() = %v, does not wrap ErrInvalidPoint", err)
			}
		})
	}
}

func TestWindowStart(t *testing.T) {
	tests := []struct {
		t    time.Time
		step time.Duration
		want time.Time
	}{
		{time.Unix(125, 0), time.Minute, time.Unix(120, 0)},
		{time.Unix(120, 0), time.Minute, time.Unix(120, 0)},
		{time.Unix(-1, 0), time.Minute, time.Unix(-60, 0)},
		{time.Unix(-60, 0), time.Minute, time.Unix(-60, 0)},
		// Daily windows start at midnight UTC whatever the time zone.
		{time.Date(2026, 1, 5, 23, 0, 0, 0, time.FixedZone("CST", 8*3600)), 24 * time.Hour, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)},
		{time.Unix(1767571200, 0), 7 * time.Second, time.Unix(1767571197, 0)},
	}
	for _, tc := range tests {
		if got := store.WindowStart(tc.t, tc.step); !got.Equal(tc.want) {
			t.Errorf("WindowStart(%s, %s) = %s, want %s", tc.t, tc.step, got, tc.want)
		}
	}
}

// The exported tag checks are Point.Validate's rules, for configuration.
func TestValidateTag(t *testing.T) {
	for _, k := range []string{"", "_x", "_measurement", "time", "table", "result", "a\x00b", `k\`, "\xff"} {
		if store.ValidateTagKey(k) == nil {
			t.Errorf("ValidateTagKey(%q) = nil", k)
		}
		if (store.Point{Measurement: "m", Tags: map[string]string{k: "v"}, Value: 1, Time: time.Unix(1, 0)}).Validate() == nil {
			t.Errorf("Point.Validate accepts tag key %q", k)
		}
	}
	for _, k := range []string{"pool", "gpu_0", "times", "日本"} {
		if err := store.ValidateTagKey(k); err != nil {
			t.Errorf("ValidateTagKey(%q) = %v", k, err)
		}
	}
	for _, v := range []string{"a\tb", `v\`, "\xff"} {
		if store.ValidateTagValue(v) == nil {
			t.Errorf("ValidateTagValue(%q) = nil", v)
		}
	}
	for _, v := range []string{"", "a b", `a\b`, "日本"} {
		if err := store.ValidateTagValue(v); err != nil {
			t.Errorf("ValidateTagValue(%q) = %v", v, err)
		}
	}
}
