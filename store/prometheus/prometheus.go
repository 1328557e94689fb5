package prometheus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/store"
)

var _ store.Store = (*Store)(nil)

// ErrReadOnly is what Write returns: Prometheus gets its samples by
// scraping, not from prewarm.
var ErrReadOnly = errors.New("the Prometheus store is read-only (Prometheus fills itself by scraping); " +
	"let it scrape the collector's /metrics, or write to the embedded store or InfluxDB")

// Defaults and bounds of Config.
const (
	// DefaultResolution is the grid an Expr is evaluated on.
	DefaultResolution = 15 * time.Second
	// DefaultTimeout bounds each request.
	DefaultTimeout = 30 * time.Second
	// MaxPointsLimit is Prometheus' limit of evaluation points per series
	// in one query_range ("exceeded maximum resolution of 11,000 points per
	// timeseries"), and the default of Config.MaxPoints.
	MaxPointsLimit = 11000
	// DefaultMaxRequests bounds the requests one Query may send.
	DefaultMaxRequests = 1000
	// rawChunk is the longest range one raw read asks for.
	rawChunk = 24 * time.Hour
)

// Config says where the Prometheus API is and how to query it. Only URL is
// required; zero fields take the defaults above.
type Config struct {
	// URL is the API's base, e.g. http://127.0.0.1:9090 (the API is under
	// URL/api/v1/).
	URL string
	// Resolution is how often an Expr is evaluated: the step of a raw Expr
	// read and the finest subquery step of an aggregated one. 1ms to 1h;
	// 0 means DefaultResolution.
	Resolution time.Duration
	// Timeout bounds each request, and is sent to the server as its query
	// timeout. 1s to 10m; 0 means DefaultTimeout. A request that runs out of
	// it wraps store.ErrUnavailable.
	Timeout time.Duration
	// MaxPoints is the most evaluation points per query_range request,
	// 1 to MaxPointsLimit; 0 means MaxPointsLimit.
	MaxPoints int
	// MaxRequests bounds the requests one Query may need, 1 to 100,000;
	// 0 means DefaultMaxRequests. A bigger query is refused before anything
	// is sent.
	MaxRequests int
	// OrgID, when set, is sent as X-Scope-OrgID (the tenant of Mimir,
	// Cortex and Thanos receive).
	OrgID string
	// Token returns the bearer token for each request (nil: none). It is
	// called on every request, so a token file may rotate; the token is
	// redacted from every error.
	Token func() (string, error)
	// Client sends the requests; nil means one on http.DefaultTransport.
	Client *http.Client
	// Logger receives the server's warnings (a partial answer from Thanos,
	// say); nil means slog.Default().
	Logger *slog.Logger
}

// Store is a read-only store.Store on the Prometheus HTTP API. It is safe
// for concurrent use.
type Store struct {
	cfg    Config
	base   string // URL without credentials, for errors
	api    v1.API
	redact *redact.Redactor
	log    *slog.Logger

	mu     sync.Mutex
	bounds bounds // what the server's ranges include, once probed
}

// New returns a Store for cfg. It sends nothing; see Open for a Store that
// checks the server first.
func New(cfg Config) (*Store, error) {
	cfg, base, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, base: base, redact: redact.New(), log: cfg.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{}
	}
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := *client
	c.Transport = &headers{next: rt, orgID: cfg.OrgID, token: cfg.Token, redact: s.redact}
	ac, err := api.NewClient(api.Config{Address: cfg.URL, Client: &c})
	if err != nil {
		return nil, fmt.Errorf("prometheus store %s: %w", base, err)
	}
	s.api = v1.NewAPI(statusClient{Client: ac, base: base, redact: s.redact})
	return s, nil
}

// withDefaults validates cfg and fills its zero fields; base is the URL
// as errors show it.
func (cfg Config) withDefaults() (Config, string, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, "", fmt.Errorf("prometheus store %q: want the API's base URL, e.g. http://127.0.0.1:9090", cfg.URL)
	}
	if u.User != nil {
		return cfg, "", fmt.Errorf("prometheus store: credentials in the URL are not supported (they would show in logs); "+
			"give a bearer token in $%s or token_file=PATH", EnvToken)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return cfg, "", fmt.Errorf("prometheus store %s: want a base URL without query or fragment", u.Redacted())
	}
	cfg.URL = strings.TrimSuffix(u.String(), "/")
	if cfg.Resolution == 0 {
		cfg.Resolution = DefaultResolution
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxPoints == 0 {
		cfg.MaxPoints = MaxPointsLimit
	}
	if cfg.MaxRequests == 0 {
		cfg.MaxRequests = DefaultMaxRequests
	}
	switch {
	case cfg.Resolution < time.Millisecond || cfg.Resolution > time.Hour || cfg.Resolution%time.Millisecond != 0:
		return cfg, "", fmt.Errorf("prometheus store %s: resolution %s: want whole milliseconds from 1ms to 1h", cfg.URL, cfg.Resolution)
	case cfg.Timeout < time.Second || cfg.Timeout > 10*time.Minute:
		return cfg, "", fmt.Errorf("prometheus store %s: timeout %s: want 1s to 10m", cfg.URL, cfg.Timeout)
	case cfg.MaxPoints < 1 || cfg.MaxPoints > MaxPointsLimit:
		return cfg, "", fmt.Errorf("prometheus store %s: max_points %d: want 1 to %d", cfg.URL, cfg.MaxPoints, MaxPointsLimit)
	case cfg.MaxRequests < 1 || cfg.MaxRequests > 100_000:
		return cfg, "", fmt.Errorf("prometheus store %s: max requests %d: want 1 to 100000", cfg.URL, cfg.MaxRequests)
	}
	return cfg, cfg.URL, nil
}

// Write refuses: it returns an error wrapping ErrReadOnly.
func (s *Store) Write(ctx context.Context, points []store.Point) error {
	if len(points) == 0 {
		return nil
	}
	return fmt.Errorf("prometheus store %s: writing %d points: %w", s.base, len(points), ErrReadOnly)
}

// Close does nothing; the Store holds no resources beyond its HTTP client.
func (s *Store) Close() error { return nil }

// Query runs q against the server (see the package doc for what it
// becomes) and returns one Series per label set, sorted by
// store.CanonicalTags, samples in time order.
func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	p, err := s.plan(q)
	if err != nil {
		return nil, err
	}
	b, err := s.rangeBounds(ctx)
	if err != nil {
		return nil, err
	}
	acc := newAccumulator(q.Measurement)
	for _, r := range p.requests(b) {
		if err := s.run(ctx, r, acc); err != nil {
			return nil, err
		}
	}
	return acc.series(), nil
}

// run sends one request and adds its answer to acc.
func (s *Store) run(ctx context.Context, r request, acc *accumulator) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	var (
		val      model.Value
		warnings v1.Warnings
		err      error
	)
	if r.step > 0 {
		val, warnings, _, err = s.api.QueryRange(ctx, r.promql, v1.Range{
			Start: msTime(r.start), End: msTime(r.end), Step: time.Duration(r.step) * time.Millisecond,
		}, v1.WithTimeout(s.cfg.Timeout))
	} else {
		val, warnings, _, err = s.api.Query(ctx, r.promql, msTime(r.at), v1.WithTimeout(s.cfg.Timeout))
	}
	if err != nil {
		return s.wrap(ctx, r, err)
	}
	for _, w := range warnings {
		s.log.Warn("Prometheus answered with a warning", "url", s.base, "query", r.promql, "warning", s.redact.String(w))
	}
	if err := acc.add(val, r); err != nil {
		return fmt.Errorf("prometheus store %s: %s: %w", s.base, r.promql, err)
	}
	return nil
}

// msTime is a Unix millisecond time as a time.Time.
func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// headers adds the tenant and bearer token to every request.
type headers struct {
	next   http.RoundTripper
	orgID  string
	token  func() (string, error)
	redact *redact.Redactor
}

func (h *headers) RoundTrip(req *http.Request) (*http.Response, error) {
	if h.orgID == "" && h.token == nil {
		return h.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	if h.orgID != "" {
		req.Header.Set("X-Scope-OrgID", h.orgID)
	}
	if h.token != nil {
		token, err := h.token()
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, fmt.Errorf("%w: bearer token: %w", store.ErrMisconfigured, err)
		}
		h.redact.Add(token)
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return h.next.RoundTrip(req)
}
