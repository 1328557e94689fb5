package releasehook_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/planner"
)

// A client that retries its POST with the same Idempotency-Key reaches the
// back-end with the same idempotency token both times (the provider's
// ClientToken), so the instance is stopped once; without a key each request
// is a call of its own; a malformed key is refused before anything is done.
func TestIdempotencyKey(t *testing.T) {
	fake := actuatortest.New("fake").AddPool("p", 2, 0, 4)
	safe := actuator.NewSafe(fake, actuator.SafetyOptions{Pools: []actuator.PoolConfig{{Name: "p", Backend: "fake", Limits: planner.Limits{MaxInstances: 4}}}})
	h, err := releasehook.New(releasehook.Config{Releaser: safe, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	send := func(key string) int {
		req := httptest.NewRequest(http.MethodPost, releasehook.Path, strings.NewReader(`{"instance_id":"i-abc"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		if key != "" {
			req.Header.Set(releasehook.IdempotencyHeader, key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	tests := []struct {
		name     string
		keys     []string
		wantCode int
		sameTok  bool // both calls carried one token
		wantKey  string
	}{
		{"retried with one key", []string{"job-42:end", "job-42:end"}, http.StatusOK, true, "job-42:end"},
		{"no key: a token per call", []string{"", ""}, http.StatusOK, false, ""},
		{"malformed key refused", []string{"bad key/with spaces"}, http.StatusBadRequest, false, ""},
		{"too long a key refused", []string{strings.Repeat("k", 65)}, http.StatusBadRequest, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(fake.CallsOf("release"))
			for _, k := range tt.keys {
				if code := send(k); code != tt.wantCode {
					t.Fatalf("HTTP %d, want %d", code, tt.wantCode)
				}
			}
			calls := fake.CallsOf("release")[before:]
			if tt.wantCode != http.StatusOK {
				if len(calls) != 0 {
					t.Fatalf("a refused request reached the back-end: %+v", calls)
				}
				return
			}
			if len(calls) != 2 || calls[0].Token == "" {
				t.Fatalf("calls = %+v, want two with tokens", calls)
			}
			if got := calls[0].Token == calls[1].Token; got != tt.sameTok {
				t.Errorf("tokens %q and %q: same = %v, want %v", calls[0].Token, calls[1].Token, got, tt.sameTok)
			}
			if tt.wantKey != "" && calls[0].Token != tt.wantKey {
				t.Errorf("token %q, want the client's key %q", calls[0].Token, tt.wantKey)
			}
		})
	}
}
