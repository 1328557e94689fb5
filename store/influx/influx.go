package influx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/store"
)

var _ store.Store = (*Store)(nil)

// field is the name of the one field each point carries.
const field = "value"

// Defaults for the zero fields of Config.
const (
	DefaultBatchSize = 5000
	DefaultTimeout   = 10 * time.Second
	DefaultOrg       = "-"
)

// DefaultBucket is the bucket the command lines name unless told
// otherwise (--influx-bucket): database prewarm's autogen retention
// policy, as InfluxDB 1.8 names it.
const DefaultBucket = "prewarm/autogen"

// Config says where and how to write. URL and Bucket are required.
type Config struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:8086.
	URL string
	// Token authenticates: an API token for 2.x; "" or "user:password" for
	// 1.8 (without spaces: 1.8 splits the header on them). It never appears
	// in errors or logs.
	Token string
	// Org is the 2.x organisation; 1.8 ignores it. Empty means "-".
	Org string
	// Bucket is the 2.x bucket or, for 1.8, "database/retention-policy".
	Bucket string
	// BatchSize is the most points sent in one HTTP request; zero means
	// DefaultBatchSize.
	BatchSize int
	// FlushInterval is accepted for configuration compatibility with the
	// client's asynchronous writer and is not used: every Write is sent
	// before it returns, so nothing waits in the Store to be flushed.
	FlushInterval time.Duration
	// Timeout bounds each HTTP request (a write batch or a query); zero
	// means DefaultTimeout. A request that runs out of it fails with
	// store.ErrUnavailable.
	Timeout time.Duration
	// Logger receives a warning when the server is not reachable at New;
	// nil discards it.
	Logger *slog.Logger
}

func (c *Config) validate() error {
	if c.URL == "" {
		return errors.New("influx: the URL is required (--influx-url or store.influx.url, e.g. http://127.0.0.1:8086)")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("influx: URL %q (--influx-url or store.influx.url) is not an http(s) URL", c.URL)
	}
	if c.Bucket == "" {
		return errors.New("influx: the bucket is required (--influx-bucket or store.influx.bucket: a 2.x bucket, or database/retention-policy for 1.8)")
	}
	if strings.ContainsAny(c.Token, " \t\r\n") {
		// 1.8 splits the Authorization header on spaces; 2.x tokens have none.
		return errors.New("influx: the token (--influx-token) has a space or control character, which InfluxDB cannot parse (for 1.8 choose a password without spaces)")
	}
	if c.BatchSize < 0 || c.Timeout < 0 {
		return fmt.Errorf("influx: the write batch size (%d) and the request timeout (%s) must not be negative", c.BatchSize, c.Timeout)
	}
	if c.Org == "" {
		c.Org = DefaultOrg
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return nil
}

// Store writes to and queries one InfluxDB bucket. It is safe for
// concurrent use.
type Store struct {
	cfg    Config
	client influxdb2.Client
	writer api.WriteAPIBlocking
	reader api.QueryAPI
	// red removes the token from every error: a proxy or a misconfigured
	// gateway can echo the request (its Authorization header) in a reply,
	// which the client quotes in its error.
	red *redact.Redactor
}

// secretsRedactor redacts the token and, for 1.8's "user:password", the
// password alone (base64 spellings included, as in a Basic header), and a
// password in the URL.
func secretsRedactor(cfg Config) *redact.Redactor {
	red := redact.New(cfg.Token)
	if _, password, ok := strings.Cut(cfg.Token, ":"); ok {
		red.Add(password)
	}
	if u, err := url.Parse(cfg.URL); err == nil {
		if password, ok := u.User.Password(); ok {
			red.Add(password)
		}
	}
	return red
}

// New returns a Store for cfg. It checks the configuration and pings the
// server; a server that is down is not an error here (the collector must
// start and buffer while InfluxDB is away), only a logged warning, and
// writes fail with store.ErrUnavailable until it is back.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	opts := influxdb2.DefaultOptions().
		SetApplicationName("prewarm").
		SetPrecision(time.Nanosecond).
		SetBatchSize(uint(cfg.BatchSize)).
		// Our own per-request context deadline is the real bound; this one
		// (whole seconds) only backs it up.
		SetHTTPRequestTimeout(uint(cfg.Timeout/time.Second) + 1)
	client := influxdb2.NewClientWithOptions(cfg.URL, cfg.Token, opts)
	s := &Store{
		cfg:    cfg,
		client: client,
		writer: client.WriteAPIBlocking(cfg.Org, cfg.Bucket),
		reader: client.QueryAPI(cfg.Org),
		red:    secretsRedactor(cfg),
	}
	if err := s.Ping(ctx); err != nil && cfg.Logger != nil {
		cfg.Logger.Warn("InfluxDB is not reachable yet; writes will fail until it is",
			"url", cfg.URL, "err", err)
	}
	return s, nil
}

// Ping checks that the server answers; the error wraps
// store.ErrUnavailable when it does not.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if _, err := s.client.Ping(ctx); err != nil {
		return s.wrap("ping", err, ctx)
	}
	return nil
}

// Close releases the client's idle connections.
func (s *Store) Close() error {
	s.client.Close()
	return nil
}

// Write sends points in requests of Config.BatchSize; see the package doc
// for what a failure means. Invalid points fail the whole batch before
// anything is sent, with an error wrapping store.ErrInvalidPoint.
func (s *Store) Write(ctx context.Context, points []store.Point) error {
	if err := store.ValidatePoints(points); err != nil {
		return err
	}
	for start := 0; start < len(points); start += s.cfg.BatchSize {
		end := min(start+s.cfg.BatchSize, len(points))
		if err := s.writeBatch(ctx, points[start:end]); err != nil {
			return s.red.Error(fmt.Errorf("influx %s: wrote %d of %d points, then: %w", s.cfg.Bucket, start, len(points), err))
		}
	}
	return nil
}

func (s *Store) writeBatch(ctx context.Context, points []store.Point) error {
	rows := make([]*write.Point, len(points))
	fields := map[string]any{field: 0.0}
	for i, p := range points {
		fields[field] = p.Value
		rows[i] = write.NewPoint(p.Measurement, store.NormalizeTags(p.Tags), fields, p.Time)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.writer.WritePoint(ctx, rows...); err != nil {
		return s.wrap("write", err, ctx)
	}
	return nil
}
