package collector

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prewarm/prewarm/store"
)

// LinePrinter is the Observer of 'collector --once': it writes each
// cycle's points to w as line-protocol-like lines (measurement,tags
// value=V unix-nanoseconds), tags sorted, one cycle at a time.
func LinePrinter(w io.Writer) Observer {
	var mu sync.Mutex
	return ObserverFunc(func(at time.Time, points []store.Point) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range points {
			var b strings.Builder
			b.WriteString(p.Measurement)
			for _, k := range slices.Sorted(maps.Keys(p.Tags)) {
				fmt.Fprintf(&b, ",%s=%s", k, strings.ReplaceAll(p.Tags[k], " ", `\ `))
			}
			fmt.Fprintf(&b, " value=%g %d\n", p.Value, p.Time.UnixNano())
			io.WriteString(w, b.String())
		}
	})
}

// WithHost returns a copy of tags with the host tag set to host (left
// as it is when host is ""), never nil: the tags of points that lack them.
func WithHost(tags map[string]string, host string) map[string]string {
	out := maps.Clone(tags)
	if out == nil {
		out = map[string]string{}
	}
	if host != "" {
		out[store.TagHost] = host
	}
	return out
}

// SourceNames are the names of the inputs' sources, comma-separated, for
// the start-up log line.
func SourceNames(inputs []Input) string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = in.Source.Name()
	}
	return strings.Join(names, ",")
}

// CloseSources closes the sources that hold resources (an io.Closer).
func CloseSources(inputs []Input) {
	for _, in := range inputs {
		if c, ok := in.Source.(io.Closer); ok {
			c.Close()
		}
	}
}
