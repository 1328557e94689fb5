package notify

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/collector/alert"
)

// A receiver's permanent refusal (4xx) is not retried; overload and
// server errors (429, 5xx) are.
func TestDeliveryRetriesOnlyWhatMaySucceed(t *testing.T) {
	tests := []struct {
		status       int
		wantAttempts int32
	}{
		{http.StatusForbidden, 1},
		{http.StatusBadRequest, 1},
		{http.StatusUnauthorized, 1},
		{http.StatusTooManyRequests, 3},
		{http.StatusRequestTimeout, 3},
		{http.StatusBadGateway, 3},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			var attempts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				attempts.Add(1)
				http.Error(w, `{"outcome":"refused"}`, tt.status)
			}))
			defer srv.Close()
			d, err := NewDispatcher(slog.New(slog.NewTextHandler(io.Discard, nil)),
				[]*Webhook{{URL: srv.URL, Format: FormatJSON}}, DispatcherOptions{Retries: 3, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			d.Send(alert.Event{Kind: alert.KindIdle, Rule: alert.RuleIdle, InstanceID: "i-1"})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := d.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if got := attempts.Load(); got != tt.wantAttempts {
				t.Errorf("HTTP %d: %d attempts, want %d", tt.status, got, tt.wantAttempts)
			}
		})
	}
}
