package releasehook_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator/releasehook"
)

// fakeClock is a settable clock for the limits.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// postFrom sends a release request from addr and returns the status and
// the Retry-After header.
func postFrom(h http.Handler, addr, auth string) (int, string) {
	req := httptest.NewRequest("POST", releasehook.Path, strings.NewReader(`{"instance_id":"i-abc"}`))
	req.RemoteAddr = addr
	req.Header.Set("Authorization", auth)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header().Get("Retry-After")
}

// A token flood: a bounded burst of 2,000 wrong tokens from one
// address gets 10 answers 401 and the rest 429 with Retry-After, while
// the right token, from that address or another, is let through; a burst
// from many addresses hits the global limit; the limits refill with time;
// and the log holds summary lines counting the refusals, not 2,000 lines.
func TestWrongTokensAreRateLimited(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}
	logs := &logBuffer{}
	var released int
	h, err := releasehook.New(releasehook.Config{
		Releaser: releaserFunc(func(context.Context, string, string) error { released++; return nil }),
		Token:    token, Logger: slog.New(slog.NewTextHandler(logs, nil)), Now: clock.Now,
		LogEvery: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	const attacker, burst = "198.51.100.7:40000", 2000
	statuses := map[int]int{}
	for i := range burst {
		code, retry := postFrom(h, attacker, fmt.Sprintf("Bearer guess-%d", i))
		statuses[code]++
		if code == http.StatusTooManyRequests {
			if s, err := strconv.Atoi(retry); err != nil || s < 1 || s > 6 {
				t.Fatalf("request %d: 429 with Retry-After %q, want 1-6 seconds", i, retry)
			}
		}
	}
	if statuses[401] != releasehook.DefaultPerClient.Burst || statuses[429] != burst-releasehook.DefaultPerClient.Burst {
		t.Errorf("statuses of %d wrong tokens from one address: %v, want %d × 401 then 429", burst, statuses, releasehook.DefaultPerClient.Burst)
	}
	if code, _ := postFrom(h, attacker, "Bearer "+token); code != http.StatusOK || released != 1 {
		t.Errorf("the right token from the address the guesses came from: %d (%d released), want 200: guesses must not lock it out", code, released)
	}
	if code, _ := postFrom(h, "192.0.2.10:5000", "Bearer "+token); code != http.StatusOK || released != 2 {
		t.Errorf("the right token from another address: %d (%d released), want 200", code, released)
	}
	clock.Add(releasehook.DefaultPerClient.Every)
	if code, _ := postFrom(h, attacker, "Bearer guess-again"); code != http.StatusUnauthorized {
		t.Errorf("after %v the address gets one more try: %d, want 401", releasehook.DefaultPerClient.Every, code)
	}
	if code, _ := postFrom(h, attacker, "Bearer guess-again"); code != http.StatusTooManyRequests {
		t.Errorf("and only one: %d, want 429", code)
	}

	// Many addresses, one wrong token each: the global limit (100, full
	// again after the 6 s but for the one guess since) holds them to 99
	// checks.
	global := map[int]int{}
	for i := range 500 {
		code, _ := postFrom(h, fmt.Sprintf("203.0.113.%d:%d", i%250, 1000+i), "Bearer wrong")
		global[code]++
	}
	if want := releasehook.DefaultGlobal.Burst - 1; global[401] != want || global[429] != 500-want {
		t.Errorf("500 wrong tokens from 250 addresses: %v, want %d × 401 then 429", global, want)
	}
	clock.Add(time.Minute)
	if code, _ := postFrom(h, "192.0.2.10:5000", "Bearer "+token); code != http.StatusOK {
		t.Errorf("a minute later the right token: %d, want 200", code)
	}

	// The intervals (200 ms here) end: summary lines count every
	// refusal, the tokens left out.
	total := burst + 2 + 500
	summary := regexp.MustCompile(`msg="bearer token failures" component=auth endpoint=release interval=200ms failures=(\d+)`)
	counted := func(log string) (n, lines int) {
		for _, m := range summary.FindAllStringSubmatch(log, -1) {
			c, _ := strconv.Atoi(m[1])
			n, lines = n+c, lines+1
		}
		return n, lines
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n, _ := counted(logs.String()); n >= total {
			break
		}
	}
	log := logs.String()
	n, lines := counted(log)
	if n != total || strings.Count(log, "level=WARN") != lines || strings.Contains(log, "guess") {
		t.Errorf("%d refusals: %d counted in %d summary lines; want all counted, in summary lines only, no token:\n%s", total, n, lines, log)
	}
	t.Logf("%d refused requests: %d log lines (%d bytes)", total, strings.Count(log, "\n"), len(log))
}

// Limits that cannot hold are refused when the handler is built.
func TestLimitsAreChecked(t *testing.T) {
	for _, l := range []releasehook.Limit{{Burst: 0, Every: time.Second}, {Burst: 3, Every: -time.Second}} {
		_, err := releasehook.New(releasehook.Config{Releaser: releaserFunc(func(context.Context, string, string) error { return nil }),
			Token: token, PerClient: l})
		if err == nil {
			t.Errorf("limit %+v accepted", l)
		}
	}
}
