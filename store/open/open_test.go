package open

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	promstore "github.com/prewarm/prewarm/store/prometheus"
	"github.com/prewarm/prewarm/store/remote"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec     string
		want     Spec
		writable bool
	}{
		{"embedded:prewarm.db", Spec{Embedded, "prewarm.db"}, true},
		{"embedded:/var/lib/prewarm/a:b.db", Spec{Embedded, "/var/lib/prewarm/a:b.db"}, true},
		{"http://127.0.0.1:9108", Spec{Remote, "http://127.0.0.1:9108"}, false},
		{"https://127.0.0.1:9108", Spec{Remote, "https://127.0.0.1:9108"}, false},
		{"prometheus:http://127.0.0.1:9090?resolution=15s", Spec{Prometheus, "http://127.0.0.1:9090?resolution=15s"}, false},
	}
	for _, tt := range tests {
		got, err := Parse(tt.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.spec, got, tt.want)
		}
		if got.String() != tt.spec {
			t.Errorf("Parse(%q).String() = %q, want the spec back", tt.spec, got.String())
		}
		if got.Writable() != tt.writable {
			t.Errorf("Parse(%q).Writable() = %v, want %v", tt.spec, got.Writable(), tt.writable)
		}
	}
}

func TestParseRefusesUnknownSchemes(t *testing.T) {
	for _, spec := range []string{"", "prewarm.db", "embedded:", "influx:http://127.0.0.1:8086", "ftp://127.0.0.1", "Embedded:x.db"} {
		_, err := Parse(spec)
		var bad *SpecError
		if !errors.As(err, &bad) || !errors.Is(err, ErrUnknownScheme) {
			t.Errorf("Parse(%q) = %v, want a *SpecError wrapping ErrUnknownScheme", spec, err)
			continue
		}
		if bad.Spec != spec || !strings.Contains(err.Error(), Schemes) || !strings.HasPrefix(err.Error(), `"`+spec+`"`) {
			t.Errorf("Parse(%q): %q, want the spec quoted and the schemes", spec, err)
		}
	}
}

// A spec the back-end refuses is a *SpecError naming what is wrong; a
// store that cannot be opened is not.
func TestStoreErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		spec     string
		wantSpec bool
		want     string
	}{
		{"http://", true, "no host"},
		{"https://127.0.0.1:1/?q=1", true, "without query"},
		{"prometheus:ftp://127.0.0.1", true, "want prometheus:http://HOST:PORT"},
		{"prometheus:http://127.0.0.1:1?foo=1", true, `unknown parameter "foo"`},
		{"nowhere", true, "want " + Schemes},
		{"embedded:" + filepath.Join(t.TempDir(), "no", "dir", "x.db"), false, "embedded store"},
	}
	for _, tt := range tests {
		st, err := Store(ctx, tt.spec, Options{})
		if err == nil {
			st.Close()
			t.Errorf("Store(%q): no error, want %q", tt.spec, tt.want)
			continue
		}
		if st != nil {
			t.Errorf("Store(%q) returned a store with its error", tt.spec)
		}
		var bad *SpecError
		if errors.As(err, &bad) != tt.wantSpec || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Store(%q): %v (a *SpecError: %v), want %q (a *SpecError: %v)", tt.spec, err, bad != nil, tt.want, tt.wantSpec)
		}
	}
}

func TestStoreOpensEachScheme(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	tests := []struct {
		spec string
		opts Options
		is   func(store.Store) bool
	}{
		{"embedded:" + path, Options{Embedded: embedded.Options{NoSync: true}}, func(s store.Store) bool { _, ok := s.(*embedded.Store); return ok }},
		{"http://127.0.0.1:1", Options{}, func(s store.Store) bool { _, ok := s.(*remote.Store); return ok }},
		// A Prometheus that does not answer is not an error at open.
		{"prometheus:http://127.0.0.1:1?timeout=1s", Options{}, func(s store.Store) bool { _, ok := s.(*promstore.Store); return ok }},
		// InfluxDB's settings win over the spec.
		{"embedded:" + path, Options{Influx: influx.Config{URL: "http://127.0.0.1:1", Bucket: "b", Timeout: time.Second}},
			func(s store.Store) bool { _, ok := s.(*influx.Store); return ok }},
		{"", Options{Influx: influx.Config{URL: "http://127.0.0.1:1", Bucket: "b", Timeout: time.Second}},
			func(s store.Store) bool { _, ok := s.(*influx.Store); return ok }},
	}
	for _, tt := range tests {
		st, err := Store(ctx, tt.spec, tt.opts)
		if err != nil {
			t.Errorf("Store(%q): %v", tt.spec, err)
			continue
		}
		if !tt.is(st) {
			t.Errorf("Store(%q, influx %q) is a %T", tt.spec, tt.opts.Influx.URL, st)
		}
		st.Close()
	}
}

// The embedded store opened from a spec is the file: what is written
// through one opening is read back through the next.
func TestEmbeddedFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	spec := EmbeddedFile(filepath.Join(t.TempDir(), "s.db"))
	st, err := spec.Open(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	if err := st.Write(ctx, []store.Point{{Measurement: "m", Tags: map[string]string{"pool": "p"}, Value: 3, Time: at}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = Store(ctx, spec.String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Query(ctx, store.Query{Measurement: "m", Start: at, End: at.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Samples) != 1 || got[0].Samples[0].Value != 3 {
		t.Errorf("read back %+v, want the one point written", got)
	}
}

// An InfluxDB configuration the client refuses is the back-end's error,
// not a spec's.
func TestInfluxSettingsErrorIsNotASpecError(t *testing.T) {
	_, err := Store(context.Background(), "embedded:x.db", Options{Influx: influx.Config{URL: "http://127.0.0.1:1", BatchSize: -1}})
	var bad *SpecError
	if err == nil || errors.As(err, &bad) {
		t.Errorf("err = %v, want InfluxDB's own error", err)
	}
}
