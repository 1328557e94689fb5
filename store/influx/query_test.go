package influx

import (
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

func TestFluxString(t *testing.T) {
	tests := []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`a"b`, `"a\"b"`},
		{`a\b`, `"a\\b"`},
		{`trailing\`, `"trailing\\"`},
		{`${x}`, `"\${x}"`},
		{`$x {`, `"$x {"`},
		{`\${`, `"\\\${"`},
		{"tab\tnew\nline", `"tab\tnew\nline"`},
		{`") or true or ("`, `"\") or true or (\""`},
	}
	for _, tc := range tests {
		if got := fluxString(tc.in); got != tc.want {
			t.Errorf("fluxString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// unquoteFlux decodes a Flux string literal following the Flux spec
// (flux v0.65 docs/SPEC.md "String literals"); ok is false when the literal
// ends early, interpolates (an unescaped "${") or uses an unknown escape.
func unquoteFlux(lit string) (s string, ok bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '"':
			return "", false // the literal would end here
		case c == '$' && i+1 < len(body) && body[i+1] == '{':
			return "", false // interpolation
		case c == '\\':
			if i+1 >= len(body) {
				return "", false // escapes the closing quote
			}
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '\\', '"':
				b.WriteByte(body[i])
			case '$':
				if i+1 >= len(body) || body[i+1] != '{' {
					return "", false
				}
				b.WriteString("${")
				i++
			default:
				return "", false
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// FuzzFluxString checks that any string survives quoting: the literal
// parses as one plain string (no early end, no interpolation) equal to the
// input. Run: go test ./store/influx -run=^$ -fuzz=FuzzFluxString -fuzztime=20s
func FuzzFluxString(f *testing.F) {
	for _, s := range []string{"", `"`, `\`, `${`, `\${`, `$${{`, `") or true or ("`, "\x00\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit := fluxString(s)
		got, ok := unquoteFlux(lit)
		if !ok || got != s {
			t.Fatalf("fluxString(%q) = %s, which decodes to (%q, ok=%v)", s, lit, got, ok)
		}
	})
}

func TestBuildFlux(t *testing.T) {
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	got := buildFlux("prewarm/autogen", store.Query{
		Measurement: "gpu_util", Match: map[string]string{"pool": `a"b`, "gpu": "0"},
		Start: at, End: at.Add(time.Hour + time.Nanosecond), Step: time.Minute, Aggregate: store.Mean,
	})
	want := `from(bucket: "prewarm/autogen")
  |> range(start: 2026-01-05T00:00:00Z, stop: 2026-01-05T01:00:00.000000001Z)
  |> filter(fn: (r) => r._measurement == "gpu_util" and r._field == "value" and r["gpu"] == "0" and r["pool"] == "a\"b")
  |> filter(fn: (r) => r._time < 2026-01-05T01:00:00.000000001Z)
  |> aggregateWindow(every: 60000000000ns, fn: mean, timeSrc: "_start", createEmpty: false)
`
	if got != want {
		t.Errorf("buildFlux =\n%s\nwant\n%s", got, want)
	}
}
