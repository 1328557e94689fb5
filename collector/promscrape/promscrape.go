package promscrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/collector"
)

// DefaultMaxBodyBytes bounds the size of a page read unless the caller
// sets another bound: 16 MiB, about 100,000 series, far more than a
// dcgm-exporter of 8 GPUs (~30 KiB) or a service's /metrics.
const DefaultMaxBodyBytes = 16 << 20

// Families is a parsed page: metric families by name.
type Families map[string]*dto.MetricFamily

// acceptHeader asks for the classic text format (what expfmt's TextParser
// reads), as Prometheus does when it cannot use protobuf.
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// FetchLimit GETs url and parses the page as it arrives, reading at most
// maxBytes (<= 0: DefaultMaxBodyBytes). Transport errors, non-2xx replies
// and a connection cut mid-page mean the target is down; a page that does
// not parse returns an error wrapping collector.ErrMalformed; a page longer
// than maxBytes returns one wrapping collector.ErrTooLarge, never a page cut
// short (which, cut on a line boundary, would parse and silently drop
// series). Memory stays bounded by maxBytes: the page is parsed while read,
// not held whole.
func FetchLimit(ctx context.Context, client *http.Client, url string, maxBytes int64) (Families, error) {
	if client == nil {
		client = http.DefaultClient
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBodyBytes
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("scrape %s: HTTP %s", url, resp.Status)
	}
	if resp.ContentLength > maxBytes {
		return nil, fmt.Errorf("scrape %s: %w: the page is %d bytes, over the limit of %d (raise scrape_max_bytes / --scrape-max-bytes)",
			url, collector.ErrTooLarge, resp.ContentLength, maxBytes)
	}
	body := &limitedReader{r: resp.Body, left: maxBytes}
	fams, err := Parse(body)
	switch {
	case body.over:
		return nil, fmt.Errorf("scrape %s: %w: the page is longer than the limit of %d bytes; nothing from it was used (raise scrape_max_bytes / --scrape-max-bytes)",
			url, collector.ErrTooLarge, maxBytes)
	case body.err != nil:
		return nil, fmt.Errorf("scrape %s: reading the page: %w", url, body.err)
	case err != nil:
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return fams, nil
}

// errTooLarge is what limitedReader returns past its limit; FetchLimit
// reports it as collector.ErrTooLarge.
var errTooLarge = errors.New("page over the size limit")

// limitedReader passes through at most left bytes, then fails with
// errTooLarge if the body has more. Unlike io.LimitReader, it never turns a
// long page into a short one that ends cleanly. It records why reading
// stopped, so a cut connection is not mistaken for a malformed page.
type limitedReader struct {
	r    io.Reader
	left int64
	over bool  // the body had more than the limit
	err  error // a read error other than EOF
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.over {
		return 0, errTooLarge
	}
	if l.left <= 0 {
		var one [1]byte
		n, err := io.ReadAtLeast(l.r, one[:], 1)
		if n > 0 {
			l.over = true
			return 0, errTooLarge
		}
		if err != nil && !errors.Is(err, io.EOF) {
			l.err = err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		l.err = err
	}
	return n, err
}

// Parse reads one text-format page. Any syntax error rejects the whole page
// (a half-read page would look like missing GPUs), wrapping
// collector.ErrMalformed.
func Parse(r io.Reader) (Families, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", collector.ErrMalformed, err)
	}
	return fams, nil
}

// Value returns a counter, gauge or untyped sample's value, and false for
// other types.
func Value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// Labels returns a metric's labels as a map.
func Labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// Matches reports whether the metric has every label in match.
func Matches(m *dto.Metric, match map[string]string) bool {
	if len(match) == 0 {
		return true
	}
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := match[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(match)
}

// Signature identifies a metric's label set within its family.
func Signature(m *dto.Metric) model.Fingerprint {
	ls := make(model.LabelSet, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		ls[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
	}
	return ls.Fingerprint()
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Buckets returns a histogram's cumulative buckets in order, ending with
// +Inf (added from the sample count when the page omits it).
func Buckets(h *dto.Histogram) []Bucket {
	out := make([]Bucket, 0, len(h.GetBucket())+1)
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		out = append(out, Bucket{UpperBound: b.GetUpperBound(), Count: c})
	}
	if len(out) == 0 || !math.IsInf(out[len(out)-1].UpperBound, 1) {
		c := float64(h.GetSampleCount())
		if h.SampleCountFloat != nil {
			c = h.GetSampleCountFloat()
		}
		out = append(out, Bucket{UpperBound: math.Inf(1), Count: c})
	}
	return out
}

// Quantile estimates the q-quantile (0 < q < 1) from cumulative buckets
// ending with +Inf, exactly as PromQL's histogram_quantile: linear
// interpolation inside the bucket holding rank q*total, the first bucket
// starting at 0, and the highest finite bound returned when the rank falls
// into +Inf. It returns NaN when the buckets hold no observations.
func Quantile(q float64, buckets []Bucket) float64 {
	if len(buckets) < 2 || math.IsNaN(q) {
		return math.NaN()
	}
	// Counts must not decrease; repair small float noise as Prometheus does.
	for i := 1; i < len(buckets); i++ {
		if buckets[i].Count < buckets[i-1].Count {
			buckets[i].Count = buckets[i-1].Count
		}
	}
	total := buckets[len(buckets)-1].Count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	b := 0
	for b < len(buckets)-1 && buckets[b].Count < rank {
		b++
	}
	if b == len(buckets)-1 {
		return buckets[len(buckets)-2].UpperBound
	}
	if b == 0 && buckets[0].UpperBound <= 0 {
		return buckets[0].UpperBound
	}
	start, end, count := 0.0, buckets[b].UpperBound, buckets[b].Count
	if b > 0 {
		start = buckets[b-1].UpperBound
		count -= buckets[b-1].Count
		rank -= buckets[b-1].Count
	}
	return start + (end-start)*(rank/count)
}
