package promscrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/collector"
)

// page is n lines of one gauge family, each line exactly lineBytes long
// with its newline.
func page(n int) string {
	var b strings.Builder
	b.WriteString("# TYPE queue_length gauge\n")
	for i := range n {
		fmt.Fprintf(&b, "queue_length{shard=\"%06d\"} 1\n", i)
	}
	return b.String()
}

// A page over the limit fails loudly (ErrTooLarge, naming the limit and
// the setting), whether or not the server announced its length and
// wherever the limit falls, on a line boundary included: a page cut short
// there would parse and silently lose series.
func TestFetchLimit(t *testing.T) {
	full := page(1000)
	header := len("# TYPE queue_length gauge\n")
	line := len("queue_length{shard=\"000000\"} 1\n")
	tests := []struct {
		name    string
		limit   int64
		chunked bool
		tooBig  bool
	}{
		{"fits", int64(len(full)), false, false},
		{"fits, chunked", int64(len(full)), true, false},
		{"one byte over", int64(len(full) - 1), false, true},
		{"one byte over, chunked", int64(len(full) - 1), true, true},
		{"limit on a line boundary, chunked", int64(header + 500*line), true, true},
		{"limit mid-line, chunked", int64(header + 500*line + 7), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !tc.chunked {
					w.Header().Set("Content-Length", strconv.Itoa(len(full)))
				}
				io.WriteString(w, full[:len(full)/2])
				w.(http.Flusher).Flush() // without Content-Length: chunked
				io.WriteString(w, full[len(full)/2:])
			}))
			defer srv.Close()
			fams, err := FetchLimit(context.Background(), srv.Client(), srv.URL, tc.limit)
			if !tc.tooBig {
				if err != nil || len(fams["queue_length"].GetMetric()) != 1000 {
					t.Fatalf("FetchLimit = %d series, %v; want all 1000", len(fams["queue_length"].GetMetric()), err)
				}
				return
			}
			if !errors.Is(err, collector.ErrTooLarge) || errors.Is(err, collector.ErrMalformed) {
				t.Fatalf("FetchLimit = %d series, %v; want ErrTooLarge", len(fams["queue_length"].GetMetric()), err)
			}
			if !strings.Contains(err.Error(), strconv.FormatInt(tc.limit, 10)) || !strings.Contains(err.Error(), "--scrape-max-bytes") {
				t.Errorf("error %q should name the limit and the flag", err)
			}
		})
	}
}

// A connection cut mid-page is the target going down, not a malformed
// page.
func TestFetchCutConnection(t *testing.T) {
	full := page(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(full)))
		io.WriteString(w, full[:len(full)/2])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	_, err := FetchLimit(context.Background(), srv.Client(), srv.URL, 0)
	if err == nil || errors.Is(err, collector.ErrMalformed) || errors.Is(err, collector.ErrTooLarge) {
		t.Fatalf("Fetch of a page cut short = %v, want a read error (target down)", err)
	}
}

// endlessPage serves a valid text page of size bytes, generated as it is
// written so that the test itself holds none of it.
func endlessPage(size int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "# TYPE queue_length gauge\n")
		var line []byte
		for i, sent := 0, 0; sent < size; i++ {
			line = fmt.Appendf(line[:0], "queue_length{shard=\"%09d\"} 1\n", i)
			n, err := w.Write(line)
			if err != nil {
				return // the client hung up: what the limit is for
			}
			sent += n
		}
	}
}

// BenchmarkFetchHuge scrapes a 100 MB target (a runaway exporter) with the
// default 16 MiB limit: the scrape is refused, and the allocation per
// scrape (B/op) stays within a small multiple of the limit, not of the
// target.
//
//	go test -run='^$' -bench=BenchmarkFetchHuge -benchmem -benchtime=3x ./collector/promscrape
func BenchmarkFetchHuge(b *testing.B) {
	srv := httptest.NewServer(endlessPage(100_000_000))
	defer srv.Close()
	for b.Loop() {
		if _, err := FetchLimit(context.Background(), srv.Client(), srv.URL, 0); !errors.Is(err, collector.ErrTooLarge) {
			b.Fatalf("Fetch = %v, want ErrTooLarge", err)
		}
	}
}
