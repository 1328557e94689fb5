package authguard

import (
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limit is a token bucket of failed authentications: Burst failures at
// once, then one more each Every. A client (or, for the global limit,
// everyone) with no failure left gets 429 for a wrong token instead of
// 401; a right token is never refused.
type Limit struct {
	Burst int
	Every time.Duration
}

// maxClients bounds the per-address buckets kept; beyond it, new
// addresses are held to the global limit only.
const maxClients = 10000

// bucket is l's token bucket, full.
func (l Limit) bucket() *rate.Limiter {
	return rate.NewLimiter(rate.Every(l.Every), l.Burst)
}

// wait is how long until b holds one token at now (0: it holds one now).
func (l Limit) wait(b *rate.Limiter, now time.Time) time.Duration {
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	// At least 1ns: a bucket a rounding error short of a token is not
	// ready, or fail could not charge it.
	return max(time.Duration((1-tokens)*float64(l.Every)), time.Nanosecond)
}

// authLimiter holds the per-client and global buckets of failed
// authentications. It is safe for concurrent use.
type authLimiter struct {
	perClient, global Limit
	now               func() time.Time

	mu      sync.Mutex
	clients map[string]*rate.Limiter
	all     *rate.Limiter
}

func newAuthLimiter(perClient, global Limit, now func() time.Time) *authLimiter {
	return &authLimiter{perClient: perClient, global: global, now: now, clients: map[string]*rate.Limiter{},
		all: global.bucket()}
}

// blocked returns how long client must wait before a wrong token of its
// is answered 401 again (0: now) and whether the global limit is the
// cause.
func (l *authLimiter) blocked(client string) (wait time.Duration, global bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if b, ok := l.clients[client]; ok {
		if w := l.perClient.wait(b, now); w > 0 {
			return w, false
		}
	}
	if w := l.global.wait(l.all, now); w > 0 {
		return w, true
	}
	return 0, false
}

// fail spends one failure of client's and of the global budget. A bucket
// already empty (requests that passed blocked together) stays as it is.
func (l *authLimiter) fail(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.all.AllowN(now, 1)
	b, ok := l.clients[client]
	if !ok {
		if len(l.clients) >= maxClients {
			l.forgetRecovered(now)
		}
		if len(l.clients) >= maxClients {
			return // the global bucket still counts this client
		}
		b = l.perClient.bucket()
		l.clients[client] = b
	}
	b.AllowN(now, 1)
}

// forgetRecovered drops the buckets that have refilled: they hold nothing
// a new bucket would not.
func (l *authLimiter) forgetRecovered(now time.Time) {
	for c, b := range l.clients {
		if b.TokensAt(now) >= float64(l.perClient.Burst) {
			delete(l.clients, c)
		}
	}
}

// clientAddr is the address a request came from: the connection's peer.
// Forwarding headers (X-Forwarded-For) are not trusted, since any caller
// can set them to dodge the per-client limit.
func clientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// retryAfter is a Retry-After value: whole seconds, at least 1.
func retryAfter(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
