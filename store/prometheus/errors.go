package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/store"
)

// StatusError is an HTTP answer that is neither a success nor one of the
// query API's own error replies (400, 422): a proxy's 401, a wrong path's
// 404, a server's 503.
type StatusError struct {
	// URL is the API's base URL.
	URL string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the server's "error" text, or the start of its body.
	Message string
}

// Error says what the server answered, with a hint for 401, 403 and 404.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message)
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (check the bearer token: $" + EnvToken + " or token_file=)"
	case http.StatusNotFound:
		msg += " (is " + e.URL + " the base of a Prometheus query API, with /api/v1/query under it?)"
	}
	return msg
}

// Unwrap makes 401, 403 and 404 match store.ErrMisconfigured and 408, 429
// and 5xx match store.ErrUnavailable.
func (e *StatusError) Unwrap() error {
	switch c := e.StatusCode; {
	case c == http.StatusUnauthorized, c == http.StatusForbidden, c == http.StatusNotFound:
		return store.ErrMisconfigured
	case c == http.StatusRequestTimeout, c == http.StatusTooManyRequests, c >= 500:
		return store.ErrUnavailable
	}
	return nil
}

// statusClient turns answers the v1 API client would report only as
// "client error: 404" into a *StatusError that keeps the status.
type statusClient struct {
	api.Client
	base   string
	redact *redact.Redactor // masks the token before a page is shortened
}

func (c statusClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp, body, err := c.Client.Do(ctx, req)
	if err != nil || resp == nil {
		return resp, body, err
	}
	switch code := resp.StatusCode; {
	case code/100 == 2, code == http.StatusBadRequest, code == http.StatusUnprocessableEntity,
		code == http.StatusMethodNotAllowed, code == http.StatusNotImplemented: // v1 retries these two with GET
		return resp, body, nil
	}
	return resp, body, &StatusError{URL: c.base, StatusCode: resp.StatusCode, Message: errorMessage(resp, body, c.redact)}
}

// errorMessage is the "error" field of an API error body, or the start of
// the body (redacted first: a cut could leave half a token), or the
// status text.
func errorMessage(resp *http.Response, body []byte, red *redact.Redactor) string {
	var eb struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
		return eb.Error
	}
	msg := red.Snippet(strings.TrimSpace(string(body)), 200)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return msg
}

// wrap turns a failed request into an error following store's contract,
// naming the server and the query, with secrets redacted.
func (s *Store) wrap(ctx context.Context, r request, err error) error {
	what := fmt.Sprintf("prometheus store %s: %s", s.base, r.describe())
	var (
		se *StatusError
		ae *v1.Error
		ne net.Error
	)
	switch {
	case errors.Is(err, store.ErrMisconfigured):
		err = fmt.Errorf("%s: %w", what, err)
	case errors.Is(ctx.Err(), context.Canceled):
		err = fmt.Errorf("%s: %w", what, context.Canceled)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("%s: no answer within %s: %w", what, s.cfg.Timeout, store.ErrUnavailable)
	case errors.As(err, &se):
		err = fmt.Errorf("%s: %w", what, se)
	case errors.As(err, &ae):
		err = apiError(what, ae)
	case errors.As(err, &ne):
		err = fmt.Errorf("%s: %w: %w", what, store.ErrUnavailable, err)
	default:
		err = fmt.Errorf("%s: %w", what, err)
	}
	return s.redact.Error(err)
}

// apiError classifies an error reply of the query API by its errorType.
func apiError(what string, e *v1.Error) error {
	switch e.Type {
	case v1.ErrBadData:
		return fmt.Errorf("%s: %w: Prometheus refused the query: %s", what, store.ErrInvalidQuery, e.Msg)
	case v1.ErrTimeout, v1.ErrServer, v1.ErrCanceled:
		return fmt.Errorf("%s: %w: %s: %s", what, store.ErrUnavailable, e.Type, e.Msg)
	case v1.ErrExec:
		return fmt.Errorf("%s: Prometheus could not run the query (a coarser step or a shorter range may help): %s", what, e.Msg)
	case v1.ErrBadResponse:
		return fmt.Errorf("%s: the answer is not the Prometheus query API's (is the URL right?): %s", what, e.Msg)
	}
	return fmt.Errorf("%s: %s: %s", what, e.Type, e.Msg)
}
