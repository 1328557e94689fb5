package authguard_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/internal/authguard"
)

const token = "guard-token-do-not-log-7171"

// syncBuffer is a log sink safe for the guard's timer goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func request(addr, auth string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.RemoteAddr = addr
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

func status(r *authguard.Refusal) int {
	if r == nil {
		return http.StatusOK
	}
	return r.Status
}

// Wrong tokens, from the right token's own address or from many, spend
// the failure limits and get 429 past them; the right token is let
// through at every point, so a guesser cannot lock its holder out.
func TestRightTokenIsNeverLockedOut(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	g, err := authguard.New(authguard.Options{Token: token, Endpoint: "test", Logger: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	const holder = "192.0.2.10:5000"
	steps := []struct {
		name       string
		addr, auth string
		n          int
		want       map[int]int
	}{
		{"wrong tokens from the holder's address", holder, "Bearer guess", 50,
			map[int]int{401: authguard.DefaultPerClientBurst, 429: 50 - authguard.DefaultPerClientBurst}},
		{"the right token from that address", holder, "Bearer " + token, 3, map[int]int{200: 3}},
		{"the scheme in lower case", holder, "bearer " + token, 1, map[int]int{200: 1}},
		{"no token", holder, "", 1, map[int]int{429: 1}},
		{"a token without the scheme", holder, token, 1, map[int]int{429: 1}},
	}
	for _, s := range steps {
		got := map[int]int{}
		for range s.n {
			got[status(g.Check(request(s.addr, s.auth)))]++
		}
		if fmt.Sprint(got) != fmt.Sprint(s.want) {
			t.Errorf("%s: %v, want %v", s.name, got, s.want)
		}
	}
	// Wrong tokens from many addresses exhaust the global limit too.
	global := map[int]int{}
	for i := range 500 {
		global[status(g.Check(request(fmt.Sprintf("203.0.113.%d:1", i%250), "Bearer wrong")))]++
	}
	if global[429] == 0 || global[200] != 0 {
		t.Errorf("500 wrong tokens from 250 addresses: %v, want some 429 and no 200", global)
	}
	if got := status(g.Check(request("198.51.100.1:1", "Bearer "+token))); got != http.StatusOK {
		t.Errorf("the right token under the global limit: %d, want 200", got)
	}
	r := g.Check(request("198.51.100.1:1", "Bearer wrong"))
	rec := httptest.NewRecorder()
	r.Write(rec)
	if r.Status != http.StatusTooManyRequests || r.RetryAfter < 1 || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a wrong token under the global limit: %+v, headers %v; want 429 with Retry-After", r, rec.Header())
	}
	now = now.Add(time.Hour)
	if got := status(g.Check(request(holder, "Bearer guess"))); got != http.StatusUnauthorized {
		t.Errorf("an hour later a wrong token: %d, want 401", got)
	}
}

// Failures are logged in one line per interval with their counts and the
// addresses they came from; a token never reaches the log, right or wrong.
func TestFailuresAreLoggedInSummary(t *testing.T) {
	logs := &syncBuffer{}
	g, err := authguard.New(authguard.Options{Token: token, Endpoint: "mode", Logger: slog.New(slog.NewTextHandler(logs, nil)),
		LogEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		g.Check(request("198.51.100.7:4000", "Bearer wrong-guess-"+fmt.Sprint(i)))
	}
	g.Check(request("203.0.113.5:1", ""))
	g.Check(request("203.0.113.5:1", "Bearer "+token))
	if s := logs.String(); s != "" {
		t.Fatalf("logged before the interval's end: %s", s)
	}
	g.Flush()
	g.Flush() // nothing new: no line
	log := logs.String()
	if n := strings.Count(log, "\n"); n != 1 {
		t.Fatalf("%d lines, want one summary:\n%s", n, log)
	}
	for _, want := range []string{"endpoint=mode", "failures=31", "wrong_token=10", "rate_limited=20", "missing_token=1",
		"addresses=2", "198.51.100.7×30"} {
		if !strings.Contains(log, want) {
			t.Errorf("summary lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "guess") || strings.Contains(log, token) {
		t.Errorf("a token reached the log:\n%s", log)
	}
}

// Limits that cannot hold, and an empty token, are refused.
func TestOptionsAreChecked(t *testing.T) {
	for _, o := range []authguard.Options{
		{Token: " "},
		{Token: token, PerClient: authguard.Limit{Burst: 0, Every: time.Second}},
		{Token: token, Global: authguard.Limit{Burst: 3, Every: -time.Second}},
	} {
		if _, err := authguard.New(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
