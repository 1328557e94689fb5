package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prewarm/prewarm/store"
)

var _ store.Store = (*Store)(nil)

// ErrReadOnly is what Write returns: the remote store only reads.
var ErrReadOnly = errors.New("the collector's store is read-only over HTTP; write through the collector")

// ErrLimit wraps the error of a query the server refused under one of its
// Limits (too many points or windows, too large an answer, too many
// queries at once); StatusError.Limit names which.
var ErrLimit = errors.New("query API limit")

// DefaultTimeout bounds one query when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// DefaultMaxAnswerBytes bounds an answer the client reads when
// Options.MaxAnswerBytes is zero: twice the server's default
// DefaultMaxResponseBytes.
const DefaultMaxAnswerBytes = 2 * DefaultMaxResponseBytes

// Options tune a Store. The zero value is ready to use.
type Options struct {
	// Client sends the requests; nil means a new client on
	// http.DefaultTransport. Set it for TLS settings or a proxy.
	Client *http.Client
	// Timeout bounds each query, connection included; zero means
	// DefaultTimeout. A query that runs out of it wraps
	// store.ErrUnavailable.
	Timeout time.Duration
	// MaxAnswerBytes bounds the answer read, so that a server (or
	// something posing as one) cannot exhaust this process's memory; zero
	// means DefaultMaxAnswerBytes. A longer answer is an error.
	MaxAnswerBytes int64
}

// Store is a read-only store.Store that queries a collector's store over
// HTTP. It is safe for concurrent use.
type Store struct {
	endpoint string // base URL + Path
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
}

// New returns a Store reading from the query API under baseURL, e.g.
// http://127.0.0.1:9108 (the collector's --listen address). It sends
// nothing: a collector that is down shows up as store.ErrUnavailable on the
// first Query.
func New(baseURL string, opts Options) (*Store, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("remote store %q: want an http:// or https:// URL", baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("remote store %q: no host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("remote store %q: want a base URL without query or fragment", baseURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("remote store: credentials in the URL are not supported (they would show in logs); use Options.Client")
	}
	if opts.Timeout < 0 || opts.MaxAnswerBytes < 0 {
		return nil, fmt.Errorf("remote store %q: negative timeout %s or answer bound %d", baseURL, opts.Timeout, opts.MaxAnswerBytes)
	}
	s := &Store{endpoint: strings.TrimSuffix(u.String(), "/") + Path, client: opts.Client, timeout: opts.Timeout,
		maxBytes: opts.MaxAnswerBytes}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultMaxAnswerBytes
	}
	if s.client == nil {
		s.client = &http.Client{}
	}
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	return s, nil
}

// Query asks the remote store for q. The result is what the store behind
// the API returns for q directly.
func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	if err := store.RefuseExpr(q, "remote"); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if err := checkEncodable(q); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint+"?"+encodeQuery(q).Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("remote store %s: %w", s.endpoint, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, s.transportError(ctx, err)
	}
	defer func() {
		// Drain what is left (the final newline) so the connection is reused.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return nil, s.statusError(resp)
	}
	if resp.ContentLength > s.maxBytes {
		return nil, fmt.Errorf("remote store %s: the answer is %d bytes, more than this client reads (%d)", s.endpoint, resp.ContentLength, s.maxBytes)
	}
	body := &io.LimitedReader{R: resp.Body, N: s.maxBytes + 1}
	var r response
	err = json.NewDecoder(body).Decode(&r)
	if body.N <= 0 {
		return nil, fmt.Errorf("remote store %s: the answer is longer than this client reads (%d bytes)", s.endpoint, s.maxBytes)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, s.transportError(ctx, err)
		}
		// A reply cut short is transient; one that is not our format is not.
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("remote store %s: %w: reading the answer: %w", s.endpoint, store.ErrUnavailable, err)
		}
		return nil, fmt.Errorf("remote store %s: the answer is not the query API's JSON (is this a prewarm collector?): %w", s.endpoint, err)
	}
	return r.toSeries(), nil
}

// transportError wraps a failure to get an answer at all.
func (s *Store) transportError(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("remote store %s: %w", s.endpoint, context.Canceled)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("remote store %s: no answer within %s: %w", s.endpoint, s.timeout, store.ErrUnavailable)
	}
	return fmt.Errorf("remote store %s: %w: %w", s.endpoint, store.ErrUnavailable, err)
}

// StatusError is an answer other than 200 OK.
type StatusError struct {
	// Endpoint is the URL queried, without its query string.
	Endpoint string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the server's "error" text, or the start of its body.
	Message string
	// Parameter names the query parameter the server refused, if any.
	Parameter string
	// Limit names the server's limit the query ran into (LimitMaxPoints,
	// ...), if any; the error then also matches ErrLimit.
	Limit string
}

// Error says what the server answered, with a hint for a 404.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("remote store %s: HTTP %d: %s", e.Endpoint, e.StatusCode, e.Message)
	if e.StatusCode == http.StatusNotFound {
		msg += " (is the URL a prewarm collector's --listen address, and the collector recent enough to serve " + Path + "?)"
	}
	return msg
}

// Unwrap makes a 400 or 422 match store.ErrInvalidQuery (the query must
// change), a 408, 429 or 5xx match store.ErrUnavailable (retry later), and
// a refusal under a limit match ErrLimit too.
func (e *StatusError) Unwrap() []error {
	var errs []error
	switch {
	case e.StatusCode == http.StatusBadRequest, e.StatusCode == http.StatusUnprocessableEntity:
		errs = append(errs, store.ErrInvalidQuery)
	case e.StatusCode == http.StatusRequestTimeout, e.StatusCode == http.StatusTooManyRequests, e.StatusCode >= 500:
		errs = append(errs, store.ErrUnavailable)
	}
	if e.Limit != "" {
		errs = append(errs, ErrLimit)
	}
	return errs
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

func (s *Store) statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &StatusError{Endpoint: s.endpoint, StatusCode: resp.StatusCode}
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
		e.Message, e.Parameter, e.Limit = eb.Error, eb.Parameter, eb.Limit
	} else {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "..."
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	return e
}

// Write refuses: it returns an error wrapping ErrReadOnly.
func (s *Store) Write(ctx context.Context, points []store.Point) error {
	return fmt.Errorf("remote store %s: writing %d points: %w", s.endpoint, len(points), ErrReadOnly)
}

// Close does nothing; the Store holds no resources beyond its HTTP client.
func (s *Store) Close() error { return nil }
