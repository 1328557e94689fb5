package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/promscrape"
	"github.com/prewarm/prewarm/store"
)

// Config names a service's endpoint and the metrics to read from it. At
// least one of RequestsCounter, QueueGauge and LatencyHistogram is required.
type Config struct {
	// Name tags the points (service=Name) and names the source.
	Name string
	// URL of the /metrics page.
	URL string
	// RequestsCounter is a counter of requests, e.g. http_requests_total.
	RequestsCounter string
	// QueueGauge is a gauge of queued requests, e.g. queue_length.
	QueueGauge string
	// LatencyHistogram is a histogram's base name, e.g.
	// http_request_duration_seconds.
	LatencyHistogram string
	// Quantile of the latency to report; zero means 0.99.
	Quantile float64
	// Match keeps only series having all these labels (e.g. job="api").
	Match map[string]string
	// OptionalSignals makes QueueGauge and LatencyHistogram optional: a
	// page without them loses those signals without an error. It is for
	// names nobody chose, the defaults a bare --scrape NAME=URL reads; a
	// metric named in the configuration must be on the page.
	OptionalSignals bool
	// Client is the HTTP client; nil means http.DefaultClient.
	Client *http.Client
	// MaxBodyBytes bounds a page; a longer one fails the scrape. Zero
	// means promscrape.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Now is the clock used to time rates; nil means time.Now.
	Now func() time.Time
}

// Source scrapes one service endpoint, keeping the previous scrape's counters
// to compute rates.
type Source struct {
	cfg      Config
	quantile string
	prevAt   time.Time
	counters map[model.Fingerprint]float64
	hists    map[model.Fingerprint][]promscrape.Bucket
}

var _ collector.Source = (*Source)(nil)

// New checks cfg and returns a Source.
func New(cfg Config) (*Source, error) {
	if cfg.Name == "" {
		return nil, errors.New("service: name is required")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("service %s: url %q is not an http(s) URL", cfg.Name, cfg.URL)
	}
	if cfg.RequestsCounter == "" && cfg.QueueGauge == "" && cfg.LatencyHistogram == "" {
		return nil, fmt.Errorf("service %s: set at least one of requests_counter, queue_gauge, latency_histogram", cfg.Name)
	}
	if cfg.Quantile == 0 {
		cfg.Quantile = 0.99
	}
	if !(cfg.Quantile > 0 && cfg.Quantile < 1) {
		return nil, fmt.Errorf("service %s: quantile %v is not in (0, 1)", cfg.Name, cfg.Quantile)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Source{cfg: cfg, quantile: strconv.FormatFloat(cfg.Quantile, 'f', -1, 64)}, nil
}

// Name is the configured service name.
func (s *Source) Name() string { return s.cfg.Name }

// Gather scrapes the endpoint and derives the configured signals.
func (s *Source) Gather(ctx context.Context) ([]store.Point, error) {
	fams, err := promscrape.FetchLimit(ctx, s.cfg.Client, s.cfg.URL, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	return s.Observe(s.cfg.Now(), fams)
}

// Observe derives points from one parsed page taken at time at; Gather calls
// it after fetching, tests call it with pages and times of their own.
func (s *Source) Observe(at time.Time, fams promscrape.Families) ([]store.Point, error) {
	tags := func(extra ...string) map[string]string {
		t := map[string]string{store.TagService: s.cfg.Name, store.TagSource: "service"}
		for i := 0; i+1 < len(extra); i += 2 {
			t[extra[i]] = extra[i+1]
		}
		return t
	}
	var points []store.Point
	var errs []error
	dt := at.Sub(s.prevAt).Seconds()
	first := s.prevAt.IsZero()
	if !first && dt <= 0 {
		// The clock went backwards: rates over this step would be garbage.
		errs = append(errs, fmt.Errorf("%w: scrape time %s is not after the previous one %s; rates restart",
			collector.ErrMalformed, at.Format(time.RFC3339Nano), s.prevAt.Format(time.RFC3339Nano)))
		first = true
	}

	if name := s.cfg.RequestsCounter; name != "" {
		cur, err := s.series(fams, name, dto.MetricType_COUNTER)
		switch {
		case err != nil:
			errs = append(errs, err)
			// The next good scrape is more than one step after the kept
			// counters: restart from it rather than divide its increase by
			// one step.
			s.counters = nil
		default:
			inc, ok := increase(s.counters, cur)
			if ok && !first {
				points = append(points, store.Point{Measurement: store.ServiceRequestRate, Tags: tags(), Value: inc / dt, Time: at})
			}
			s.counters = cur
		}
	}
	if name := s.cfg.QueueGauge; name != "" {
		cur, err := s.series(fams, name, dto.MetricType_GAUGE)
		if s.absentOptional(err) {
			cur, err = nil, nil
		}
		if err != nil {
			errs = append(errs, err)
		} else if len(cur) > 0 {
			sum := 0.0
			for _, v := range cur {
				sum += v
			}
			points = append(points, store.Point{Measurement: store.ServiceQueueLength, Tags: tags(), Value: sum, Time: at})
		}
	}
	if name := s.cfg.LatencyHistogram; name != "" {
		cur, err := s.histograms(fams, name)
		switch {
		case s.absentOptional(err):
			s.hists = nil
		case err != nil:
			errs = append(errs, err)
			s.hists = nil // as for the counter: restart from the next good scrape
		default:
			delta, ok := bucketIncrease(s.hists, cur)
			if ok && !first {
				if q := promscrape.Quantile(s.cfg.Quantile, delta); !math.IsNaN(q) {
					points = append(points, store.Point{Measurement: store.ServiceLatencySeconds,
						Tags: tags(store.TagQuantile, s.quantile), Value: q, Time: at})
				}
			}
			s.hists = cur
		}
	}
	s.prevAt = at
	return points, errors.Join(errs...)
}

// errAbsent marks a metric the page does not have at all.
var errAbsent = errors.New("not on the page")

// absentOptional reports whether err is only an optional signal's
// absence (Config.OptionalSignals), which is no error.
func (s *Source) absentOptional(err error) bool {
	return s.cfg.OptionalSignals && errors.Is(err, errAbsent)
}

// series returns the matching samples of a counter or gauge family by label
// signature. Untyped families are accepted (pages without TYPE lines).
func (s *Source) series(fams promscrape.Families, name string, want dto.MetricType) (map[model.Fingerprint]float64, error) {
	fam, ok := fams[name]
	if !ok {
		return nil, fmt.Errorf("%w: service %s: metric %s %w", collector.ErrMalformed, s.cfg.Name, name, errAbsent)
	}
	if t := fam.GetType(); t != want && t != dto.MetricType_UNTYPED {
		return nil, fmt.Errorf("%w: service %s: metric %s is a %s, want a %s", collector.ErrMalformed, s.cfg.Name, name,
			t, want)
	}
	out := map[model.Fingerprint]float64{}
	var bad []error
	for _, m := range fam.GetMetric() {
		if !promscrape.Matches(m, s.cfg.Match) {
			continue
		}
		v, ok := promscrape.Value(m)
		switch {
		case !ok:
		case !(v >= 0) || math.IsInf(v, 0):
			// A negative, NaN or infinite count or queue length would
			// make a negative or NaN signal. The signal is refused for
			// this scrape: without that series it would under-report.
			bad = append(bad, fmt.Errorf("%w: service %s: %s%v = %v is not a finite value of 0 or more",
				collector.ErrMalformed, s.cfg.Name, name, promscrape.Labels(m), v))
		default:
			out[promscrape.Signature(m)] = v
		}
	}
	if len(bad) > 0 {
		return nil, bad[0]
	}
	if len(out) == 0 {
		// Without this a match that selects nothing would read as a
		// request rate of zero, which a forecaster takes for real demand.
		return nil, fmt.Errorf("%w: service %s: no %s series match %v", collector.ErrMalformed, s.cfg.Name, name, s.cfg.Match)
	}
	return out, nil
}

func (s *Source) histograms(fams promscrape.Families, name string) (map[model.Fingerprint][]promscrape.Bucket, error) {
	fam, ok := fams[name]
	if !ok {
		return nil, fmt.Errorf("%w: service %s: histogram %s %w", collector.ErrMalformed, s.cfg.Name, name, errAbsent)
	}
	if fam.GetType() != dto.MetricType_HISTOGRAM {
		return nil, fmt.Errorf("%w: service %s: metric %s is a %s, want a histogram", collector.ErrMalformed, s.cfg.Name, name, fam.GetType())
	}
	out := map[model.Fingerprint][]promscrape.Bucket{}
	for _, m := range fam.GetMetric() {
		if !promscrape.Matches(m, s.cfg.Match) || m.Histogram == nil {
			continue
		}
		buckets := promscrape.Buckets(m.Histogram)
		for _, b := range buckets {
			if !(b.Count >= 0) || math.IsInf(b.Count, 0) || !(b.UpperBound >= 0) {
				return nil, fmt.Errorf("%w: service %s: histogram %s%v has a bucket le=%v with count %v: latency bounds and counts must be 0 or more",
					collector.ErrMalformed, s.cfg.Name, name, promscrape.Labels(m), b.UpperBound, b.Count)
			}
		}
		out[promscrape.Signature(m)] = buckets
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: service %s: no %s series match %v", collector.ErrMalformed, s.cfg.Name, name, s.cfg.Match)
	}
	return out, nil
}

// increase sums the counters' increase since prev. A counter lower than
// before was reset, so its whole value is the increase; a series new since
// prev contributes nothing (its start is unknown). ok is false on the first
// call.
func increase(prev, cur map[model.Fingerprint]float64) (float64, bool) {
	if prev == nil {
		return 0, false
	}
	sum := 0.0
	for k, v := range cur {
		p, seen := prev[k]
		switch {
		case !seen:
		case v < p:
			sum += v
		default:
			sum += v - p
		}
	}
	return sum, true
}

// bucketIncrease returns the cumulative buckets' increase since prev, summed
// over series that share the same bucket bounds as the first one; a series
// any of whose buckets fell was reset and counts whole, and a series whose
// bounds changed since prev is skipped (its deltas would mix buckets).
func bucketIncrease(prev, cur map[model.Fingerprint][]promscrape.Bucket) ([]promscrape.Bucket, bool) {
	if prev == nil {
		return nil, false
	}
	var sum []promscrape.Bucket
	for k, bs := range cur {
		p, seen := prev[k]
		if !seen || len(p) != len(bs) || !sameBounds(p, bs) {
			continue
		}
		reset := false
		for i := range bs {
			reset = reset || bs[i].Count < p[i].Count
		}
		if sum == nil {
			sum = make([]promscrape.Bucket, len(bs))
			for i := range bs {
				sum[i].UpperBound = bs[i].UpperBound
			}
		} else if len(sum) != len(bs) || !sameBounds(sum, bs) {
			continue
		}
		for i := range bs {
			d := bs[i].Count
			if !reset {
				d -= p[i].Count
			}
			sum[i].Count += d
		}
	}
	return sum, true
}

func sameBounds(a, b []promscrape.Bucket) bool {
	for i := range a {
		if a[i].UpperBound != b[i].UpperBound {
			return false
		}
	}
	return true
}
