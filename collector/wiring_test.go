package collector

import (
	"bytes"
	"context"
	"maps"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

func TestLinePrinter(t *testing.T) {
	at := time.Unix(0, 1234)
	tests := []struct {
		name   string
		points []store.Point
		want   string
	}{
		{"no points, nothing", nil, ""},
		{"tags sorted, spaces escaped", []store.Point{{Measurement: "gpu_util", Tags: map[string]string{"z": "1", "a": "x y"}, Value: 0.5, Time: at}},
			"gpu_util,a=x\\ y,z=1 value=0.5 1234\n"},
		{"one line a point", []store.Point{{Measurement: "m", Value: 1, Time: at}, {Measurement: "n", Value: 2, Time: at}},
			"m value=1 1234\nn value=2 1234\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			LinePrinter(&w).Observe(at, tt.points)
			if w.String() != tt.want {
				t.Errorf("printed %q, want %q", w.String(), tt.want)
			}
		})
	}
}

func TestWithHost(t *testing.T) {
	tests := []struct {
		name string
		tags map[string]string
		host string
		want map[string]string
	}{
		{"nil tags, no host: empty, not nil", nil, "", map[string]string{}},
		{"the host added", map[string]string{"pool": "p"}, "h1", map[string]string{"pool": "p", store.TagHost: "h1"}},
		{"no host leaves the tags", map[string]string{store.TagHost: "h0"}, "", map[string]string{store.TagHost: "h0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := maps.Clone(tt.tags)
			got := WithHost(tt.tags, tt.host)
			if got == nil || !maps.Equal(got, tt.want) || !maps.Equal(tt.tags, in) {
				t.Errorf("WithHost = %v (input now %v), want %v and the input unchanged", got, tt.tags, tt.want)
			}
		})
	}
}

type namedSource struct {
	name   string
	closed *int
}

func (s namedSource) Name() string { return s.name }
func (s namedSource) Gather(context.Context) ([]store.Point, error) {
	return nil, nil
}

type closingSource struct{ namedSource }

func (s closingSource) Close() error { *s.closed++; return nil }

func TestSourceNamesAndClose(t *testing.T) {
	closed := 0
	inputs := []Input{{Source: namedSource{name: "nvml"}}, {Source: closingSource{namedSource{name: "dcgm:a", closed: &closed}}}}
	if got := SourceNames(inputs); got != "nvml,dcgm:a" {
		t.Errorf("SourceNames = %q, want nvml,dcgm:a", got)
	}
	CloseSources(inputs)
	if closed != 1 {
		t.Errorf("closed %d sources, want the one Closer", closed)
	}
}
