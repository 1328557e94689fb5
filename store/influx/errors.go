package influx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	http2 "github.com/influxdata/influxdb-client-go/v2/api/http"

	"github.com/prewarm/prewarm/store"
)

// wrap turns a client error into one the caller can act on: it wraps
// store.ErrUnavailable when retrying later may succeed (no connection, a
// timeout, HTTP 408/429/5xx), store.ErrMisconfigured when the server refuses
// our token, org or bucket (HTTP 401/403/404), and says what the server
// answered in every case.
// reqCtx is the request's context, whose deadline is our Timeout. The
// result never holds the token.
func (s *Store) wrap(op string, err error, reqCtx context.Context) error {
	return s.red.Error(s.classify(op, err, reqCtx))
}

func (s *Store) classify(op string, err error, reqCtx context.Context) error {
	if errors.Is(err, context.Canceled) || errors.Is(reqCtx.Err(), context.Canceled) {
		return fmt.Errorf("influx %s %s: %w", op, s.cfg.URL, context.Canceled)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(reqCtx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("influx %s %s: no answer within %s: %w", op, s.cfg.URL, s.cfg.Timeout, store.ErrUnavailable)
	}
	var herr *http2.Error
	if !errors.As(err, &herr) {
		// Errors outside HTTP (reading a reply cut short) are transient.
		return fmt.Errorf("influx %s %s: %w: %w", op, s.cfg.URL, store.ErrUnavailable, err)
	}
	if retryable(herr.StatusCode) {
		return fmt.Errorf("influx %s %s: %w: %s", op, s.cfg.URL, store.ErrUnavailable, s.describe(herr))
	}
	if misconfigured(herr.StatusCode) {
		return fmt.Errorf("influx %s %s: %w: %s", op, s.cfg.URL, store.ErrMisconfigured, s.describe(herr))
	}
	return fmt.Errorf("influx %s %s: %s", op, s.cfg.URL, s.describe(herr))
}

// retryable reports whether an HTTP status (0: no response at all) means
// the server may accept the same request later.
func retryable(status int) bool {
	switch {
	case status == 0, status == http.StatusRequestTimeout, status == http.StatusTooManyRequests:
		return true
	case status >= 500:
		return true
	}
	return false
}

// misconfigured reports whether an HTTP status means the server refuses
// every request made with our token, org or bucket (401, 403, 404), so that
// no batch can land until the configuration is fixed.
func misconfigured(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return true
	}
	return false
}

// maxMessage bounds how much of the server's reply an error quotes: the
// client reads a whole error body, and a proxy's HTML page does not belong
// in a log line.
const maxMessage = 300

// describe renders an HTTP error with a hint for the common mistakes. The
// server's text is redacted before it is cut short, so that no cut can
// leave the start of a secret behind.
func (s *Store) describe(e *http2.Error) string {
	text := s.red.String(e.Error())
	if len(text) > maxMessage {
		text = strings.ToValidUTF8(text[:maxMessage], "") + fmt.Sprintf("... (%d bytes)", len(text))
	}
	if e.StatusCode == 0 {
		return text
	}
	msg := fmt.Sprintf("HTTP %d: %s", e.StatusCode, text)
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (check the token: a 2.x API token, or user:password for 1.8)"
	case http.StatusNotFound:
		msg += " (check the bucket and org: for 1.8 the bucket is database/retention-policy and the database must exist)"
	}
	return msg
}
