// Package authguard checks the bearer token of prewarm's write endpoints
// (the release hook, the mode API) and limits and logs the failures, the
// same way for each.
//
// The token is checked first, in constant time (on hashes, so its length
// does not leak either). A right token is always let through: the failure
// limit cannot be used by someone guessing from the same address, or from
// many, to lock out the caller that holds the token. Only failures
// (missing or wrong tokens) spend the limit's buckets, per client address
// and from all addresses together; beyond a limit a failure is answered
// 429 with Retry-After instead of 401. What keeps a guess from succeeding
// is the token's length, not the limit; the limit tells a misconfigured
// client to back off and bounds the work a flood makes.
//
// Failures are logged in summary: one line per interval with the counts
// and the addresses they came from, never a token.
package authguard

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of the failure limits (Options.PerClient, Options.Global) and
// of the summary interval (Options.LogEvery).
const (
	// DefaultPerClientBurst wrong tokens from one address, then one per
	// DefaultPerClientEvery (10 a minute).
	DefaultPerClientBurst = 10
	DefaultPerClientEvery = 6 * time.Second
	// DefaultGlobalBurst wrong tokens from all addresses, then one per
	// DefaultGlobalEvery (10 a second).
	DefaultGlobalBurst = 100
	DefaultGlobalEvery = 100 * time.Millisecond
	// DefaultLogEvery is the interval of the summary lines.
	DefaultLogEvery = time.Minute
	// maxAddresses bounds the addresses a summary counts one by one.
	maxAddresses = 1000
)

// Options configure New.
type Options struct {
	// Token is the bearer token callers must present. Required.
	Token string
	// Endpoint names what the guard protects in its log lines ("release",
	// "mode").
	Endpoint string
	// PerClient and Global bound the failures per client address and from
	// all addresses together; zero: the defaults.
	PerClient, Global Limit
	// LogEvery is the summary interval; zero: DefaultLogEvery.
	LogEvery time.Duration
	// Logger receives the summaries; nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock of the limits; nil: time.Now.
	Now func() time.Time
}

// Guard checks requests' bearer tokens. It is safe for concurrent use.
type Guard struct {
	hash     [32]byte
	endpoint string
	every    time.Duration
	log      *slog.Logger
	limits   *authLimiter

	mu      sync.Mutex
	counts  map[string]int // failure kind → count, this interval
	byAddr  map[string]int // address → failures, this interval (bounded)
	others  int            // failures from addresses past maxAddresses
	pending bool           // a summary is due at the interval's end
}

// New checks o and returns the guard.
func New(o Options) (*Guard, error) {
	if strings.TrimSpace(o.Token) == "" {
		return nil, errors.New("no bearer token")
	}
	if o.PerClient == (Limit{}) {
		o.PerClient = Limit{Burst: DefaultPerClientBurst, Every: DefaultPerClientEvery}
	}
	if o.Global == (Limit{}) {
		o.Global = Limit{Burst: DefaultGlobalBurst, Every: DefaultGlobalEvery}
	}
	for name, l := range map[string]Limit{"per-client": o.PerClient, "global": o.Global} {
		if l.Burst < 1 || l.Every <= 0 {
			return nil, fmt.Errorf("%s failure limit %d per %v: want a burst of at least 1 and a positive interval", name, l.Burst, l.Every)
		}
	}
	if o.LogEvery <= 0 {
		o.LogEvery = DefaultLogEvery
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Guard{hash: sha256.Sum256([]byte(o.Token)), endpoint: o.Endpoint, every: o.LogEvery,
		log: o.Logger.With("component", "auth", "endpoint", o.Endpoint), limits: newAuthLimiter(o.PerClient, o.Global, o.Now),
		counts: map[string]int{}, byAddr: map[string]int{}}, nil
}

// Refusal is why a request was not let through: the status to answer
// (401 or 429), the message, and for 429 the seconds to wait.
type Refusal struct {
	Status     int
	Message    string
	RetryAfter int
}

// Write sets the refusal's headers (WWW-Authenticate, Retry-After) on w;
// the caller writes the status and its body.
func (r *Refusal) Write(w http.ResponseWriter) {
	if r.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(r.RetryAfter))
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="prewarm"`)
}

// Check returns nil when r carries the right bearer token, whatever the
// failures before it; otherwise the refusal, counted against r's address.
func (g *Guard) Check(r *http.Request) *Refusal {
	got, present := bearer(r)
	h := sha256.Sum256([]byte(got))
	if subtle.ConstantTimeCompare(h[:], g.hash[:]) == 1 && present {
		return nil
	}
	client := clientAddr(r)
	kind := "wrong_token"
	if !present {
		kind = "missing_token"
	}
	if wait, global := g.limits.blocked(client); wait > 0 {
		who := "from " + client
		if global {
			who = "from all addresses"
		}
		g.count("rate_limited", client)
		s := retryAfter(wait)
		return &Refusal{Status: http.StatusTooManyRequests, RetryAfter: s,
			Message: fmt.Sprintf("too many missing or wrong bearer tokens %s: retry after %d s", who, s)}
	}
	g.limits.fail(client)
	g.count(kind, client)
	return &Refusal{Status: http.StatusUnauthorized, Message: "missing or wrong bearer token"}
}

// bearer is the token of r's Authorization header ("Bearer TOKEN", the
// scheme in any case) and whether there is one.
func bearer(r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(auth) <= len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(auth[len(prefix):])
	return tok, tok != ""
}

// count records one failure of kind from client, starting the interval
// whose end logs the summary.
func (g *Guard) count(kind, client string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.counts[kind]++
	if _, ok := g.byAddr[client]; ok || len(g.byAddr) < maxAddresses {
		g.byAddr[client]++
	} else {
		g.others++
	}
	if !g.pending {
		g.pending = true
		time.AfterFunc(g.every, g.Flush)
	}
}

// Flush logs the summary of the failures counted since the last one (one
// line; nothing when there were none) and starts a new interval. The
// interval's end calls it; a caller may too, at shutdown.
func (g *Guard) Flush() {
	g.mu.Lock()
	counts, byAddr, others := g.counts, g.byAddr, g.others
	g.counts, g.byAddr, g.others, g.pending = map[string]int{}, map[string]int{}, 0, false
	g.mu.Unlock()
	total := 0
	for _, n := range counts {
		total += n
	}
	if total == 0 {
		return
	}
	addrs := slices.SortedFunc(maps.Keys(byAddr), func(a, b string) int {
		return cmp.Or(cmp.Compare(byAddr[b], byAddr[a]), strings.Compare(a, b))
	})
	addresses := strconv.Itoa(len(byAddr))
	if others > 0 {
		addresses = fmt.Sprintf("over %d (%d failures from those past it)", maxAddresses, others)
	}
	top := make([]string, 0, 3)
	for _, a := range addrs[:min(3, len(addrs))] {
		top = append(top, fmt.Sprintf("%s×%d", a, byAddr[a]))
	}
	g.log.Warn("bearer token failures", "interval", g.every, "failures", total,
		"wrong_token", counts["wrong_token"], "missing_token", counts["missing_token"], "rate_limited", counts["rate_limited"],
		"addresses", addresses, "top", strings.Join(top, " "))
}
