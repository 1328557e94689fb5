package releasehook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/internal/authguard"
)

// Path is where the handler is usually mounted.
const Path = "/api/v1/release"

// EnvToken is the environment variable holding the bearer token.
const EnvToken = "PREWARM_RELEASE_TOKEN"

// Releaser is the part of actuator.Actuator the hook needs.
type Releaser interface {
	Release(ctx context.Context, instanceID, reason string) error
}

// Locate names the configured pool instanceID belongs to, "" when it
// belongs to none (403). An error means the check itself failed (502).
type Locate func(ctx context.Context, instanceID string) (pool string, err error)

// Route reports whether this replica may act for pool now and, when it
// may not, which replica may ("" while none is known). With leader
// election on, only the replica owning a pool's bucket releases its
// instances; a standby answers 503 with Retry-After, naming the owner,
// and calls nothing.
type Route func(pool string) (mine bool, owner string)

// Config configures the handler.
type Config struct {
	// Releaser releases instances; usually an actuator.Safe around a
	// back-end. Required: the releaser of an instance whose pool is not
	// told, or that ReleaserFor has none for.
	Releaser Releaser
	// ReleaserFor, when set, gives the releaser of a pool's instances
	// (the pool's own back-end, in an actuator.Safe): an instance is
	// released through ReleaserFor of the pool Locate (or the request)
	// names, and through Releaser where that is nil.
	ReleaserFor func(pool string) Releaser
	// Token is the bearer token callers must present. Required: an empty
	// token would let anyone stop GPUs.
	Token string
	// Locate finds the pool of an instance and refuses instances outside
	// the configured pools. Nil trusts the request's "pool", or takes
	// Pools' only pool when it names none.
	Locate Locate
	// Pools are the configured pools' names: a request naming another pool
	// is refused (403).
	Pools []string
	// Route, when set, lets only the replica owning the instance's pool
	// release it. Nil: this process acts for every pool.
	Route Route
	// RetryAfter is what a standby's 503 asks the caller to wait
	// (default 1s).
	RetryAfter time.Duration
	// Forward, when set, gives the API URL of a replica (from its member
	// Lease), so that a standby passes a release on to the pool's owner,
	// once, with the caller's headers, and answers with the owner's
	// answer. "" or an unreachable owner leaves the standby's 503.
	Forward func(owner string) (baseURL string)
	// Notes, if set, prepares a context in which the back-end records
	// remarks about the release (volcengine.NoteRecorder: a StopCharging
	// fallback) and returns a function reading them after Release.
	Notes func(ctx context.Context) (context.Context, func() string)
	// Timeout bounds one release, membership check included. Default 30s.
	Timeout time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// PerClient and Global bound missing or wrong bearer tokens, per
	// client address and from all addresses together (token buckets;
	// defaults DefaultPerClient, DefaultGlobal). Beyond a limit a wrong
	// token is answered 429 with Retry-After instead of 401; the right
	// token is checked first and always let through, so wrong guesses
	// cannot lock out the caller that holds it (internal/authguard).
	PerClient, Global Limit
	// LogEvery is the interval of the summary line that counts the
	// refusals (default authguard.DefaultLogEvery, a minute).
	LogEvery time.Duration
	// Now is the clock of the limits; default time.Now.
	Now func() time.Time
}

// Request is the body the handler accepts: a release request or a
// collector idle event.
type Request struct {
	// Kind is "idle" for a collector event; empty or "release" otherwise.
	Kind       string `json:"kind,omitempty"`
	InstanceID string `json:"instance_id"`
	Reason     string `json:"reason,omitempty"`
	// Idle event fields, reported back and used to build a reason.
	Pool  string    `json:"pool,omitempty"`
	Host  string    `json:"host,omitempty"`
	GPU   string    `json:"gpu,omitempty"`
	UUID  string    `json:"uuid,omitempty"`
	Since time.Time `json:"since,omitempty"`
}

// Reply is the JSON answer.
type Reply struct {
	// Outcome is "released", "refused", "ignored" (an alert or resolved
	// event), "standby" (another replica acts for the pool: send again)
	// or "error".
	Outcome string `json:"outcome"`
	// Pool is the pool the instance belongs to, when known.
	Pool string `json:"pool,omitempty"`
	// Owner names the replica acting for the pool, on a standby's answer.
	Owner      string `json:"owner,omitempty"`
	InstanceID string `json:"instance_id,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Note carries the back-end's remarks, e.g. a KeepCharging fallback.
	Note  string `json:"note,omitempty"`
	Error string `json:"error,omitempty"`
	// TookMS is how long the release took, membership check included.
	TookMS float64 `json:"took_ms"`
}

// maxBodyBytes bounds a request body.
const maxBodyBytes = 64 << 10

// instanceIDRE is what an instance ID may look like (Volcengine: i-…).
var instanceIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// Handler serves POST /api/v1/release.
type Handler struct {
	cfg    Config
	log    *slog.Logger
	guard  *authguard.Guard
	client *http.Client // forwards to a pool's owner
}

// New checks cfg and returns the handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Releaser == nil {
		return nil, errors.New("releasehook: no Releaser")
	}
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, fmt.Errorf("releasehook: no token: set %s or pass a token file", EnvToken)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PerClient == (Limit{}) {
		cfg.PerClient = DefaultPerClient
	}
	if cfg.Global == (Limit{}) {
		cfg.Global = DefaultGlobal
	}
	guard, err := authguard.New(authguard.Options{Token: cfg.Token, Endpoint: "release", PerClient: cfg.PerClient,
		Global: cfg.Global, LogEvery: cfg.LogEvery, Logger: cfg.Logger, Now: cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("releasehook: %w", err)
	}
	return &Handler{cfg: cfg, log: cfg.Logger.With("component", "releasehook"), guard: guard,
		client: &http.Client{Timeout: cfg.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // an owner answers; it does not send the token elsewhere
		}}}, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reply := func(status int, rep Reply) {
		rep.TookMS = float64(time.Since(start).Microseconds()) / 1000
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(rep)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(http.StatusMethodNotAllowed, Reply{Outcome: "error", Error: "use POST"})
		return
	}
	if refused := h.guard.Check(r); refused != nil {
		refused.Write(w)
		reply(refused.Status, Reply{Outcome: "error", Error: refused.Message})
		return
	}
	body, err := readBody(r.Body)
	var req Request
	if err == nil {
		req, err = decode(body)
	}
	if err != nil {
		reply(http.StatusBadRequest, Reply{Outcome: "error", Error: err.Error()})
		return
	}
	if req.Kind == "alert" || req.Kind == "resolved" {
		// The collector's webhook may send every event here; only idle
		// events release anything.
		reply(http.StatusOK, Reply{Outcome: "ignored", InstanceID: req.InstanceID, Reason: "kind " + req.Kind + " releases nothing"})
		return
	}
	key := r.Header.Get(IdempotencyHeader)
	if key != "" && !idempotencyKeyRE.MatchString(key) {
		reply(http.StatusBadRequest, Reply{Outcome: "error", InstanceID: req.InstanceID,
			Error: IdempotencyHeader + " must be 1-64 letters, digits or . _ : -"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	if key != "" {
		// The caller's key becomes the call's idempotency token, so a
		// client that retries its POST (a timeout, a lost reply) sends the
		// provider the same client token and the instance is stopped once.
		ctx = actuator.WithIdempotencyToken(ctx, key)
	}
	status, rep := h.release(ctx, req)
	if rep.Outcome == "standby" {
		if h.forward(ctx, w, r, body, rep) {
			return
		}
		h.log.Info("release left to the pool's owner", "instance", rep.InstanceID, "pool", rep.Pool, "owner", rep.Owner)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(h.cfg.RetryAfter.Seconds()))))
	}
	reply(status, rep)
}

// ForwardedHeader marks a request a standby passed to the pool's owner; a
// replica that receives one and does not own the pool answers 503 instead
// of passing it on again.
const ForwardedHeader = "X-Prewarm-Forwarded"

// forward passes a request this replica may not serve to the owner named
// in rep, when Config.Forward knows its address, and copies the owner's
// answer back. It reports whether an answer was written; a request that
// was already forwarded, an owner without an address, or one that cannot
// be reached leaves the standby's 503 to the caller.
func (h *Handler) forward(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte, rep Reply) bool {
	if h.cfg.Forward == nil || rep.Owner == "" || r.Header.Get(ForwardedHeader) != "" {
		return false
	}
	base := h.cfg.Forward(rep.Owner)
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+Path, bytes.NewReader(body))
	if err != nil {
		return false
	}
	for _, k := range []string{"Authorization", "Content-Type", IdempotencyHeader} {
		if v := r.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	req.Header.Set(ForwardedHeader, "1")
	resp, err := h.client.Do(req)
	if err != nil {
		h.log.Warn("release not forwarded to the pool's owner", "instance", rep.InstanceID, "pool", rep.Pool,
			"owner", rep.Owner, "err", err)
		return false
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return false
	}
	for _, k := range []string{"Content-Type", "Retry-After"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.Header().Set(ForwardedToHeader, rep.Owner)
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
	h.log.Info("release forwarded to the pool's owner", "instance", rep.InstanceID, "pool", rep.Pool,
		"owner", rep.Owner, "status", resp.StatusCode)
	return true
}

// ForwardedToHeader names, on an answer a standby passed on, the replica
// that served the request.
const ForwardedToHeader = "X-Prewarm-Forwarded-To"

// IdempotencyHeader names the optional request header whose value makes
// retried requests one release at the provider.
const IdempotencyHeader = "Idempotency-Key"

// idempotencyKeyRE is what an idempotency key may look like; the provider's
// client tokens take at most 64 such characters.
var idempotencyKeyRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// readBody reads a request body of at most maxBodyBytes.
func readBody(body io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the body: %v", err)
	}
	if len(data) > maxBodyBytes {
		return nil, fmt.Errorf("body larger than %d bytes", maxBodyBytes)
	}
	return data, nil
}

// decode checks a body.
func decode(data []byte) (Request, error) {
	var req Request
	if err := json.Unmarshal(data, &req); err != nil {
		return Request{}, fmt.Errorf("body is not a release request or idle event: %v", err)
	}
	switch req.Kind {
	case "", "release", "idle", "alert", "resolved":
	default:
		return Request{}, fmt.Errorf("kind %q: want \"idle\" or none", req.Kind)
	}
	req.InstanceID = strings.TrimSpace(req.InstanceID)
	if req.Kind == "alert" || req.Kind == "resolved" {
		return req, nil
	}
	if req.InstanceID == "" {
		return Request{}, errors.New("instance_id is required")
	}
	if !instanceIDRE.MatchString(req.InstanceID) {
		return Request{}, fmt.Errorf("instance_id %q is malformed", req.InstanceID)
	}
	req.Reason = truncateUTF8(req.Reason, maxReasonBytes)
	if req.Reason == "" {
		req.Reason = defaultReason(req)
	}
	return req, nil
}

// maxReasonBytes bounds the reason kept for logs and the audit.
const maxReasonBytes = 1024

// truncateUTF8 cuts s to at most n bytes without splitting a character,
// so the audit log stays valid UTF-8.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func defaultReason(req Request) string {
	if req.Kind != "idle" {
		return "release requested over HTTP"
	}
	var b strings.Builder
	b.WriteString("idle")
	if req.GPU != "" {
		b.WriteString(" GPU " + req.GPU)
	}
	if req.Host != "" {
		b.WriteString(" on " + req.Host)
	}
	if !req.Since.IsZero() {
		b.WriteString(" since " + req.Since.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// release finds the instance's pool, checks that this replica acts for
// it, releases and maps errors to statuses.
func (h *Handler) release(ctx context.Context, req Request) (int, Reply) {
	rep := Reply{InstanceID: req.InstanceID, Reason: req.Reason}
	pool, status, err := h.locate(ctx, req)
	rep.Pool = pool
	if err != nil {
		rep.Outcome, rep.Error = "error", err.Error()
		if status == http.StatusForbidden {
			rep.Outcome = "refused"
		}
		h.log.Warn("release refused", "instance", req.InstanceID, "pool", req.Pool, "err", err)
		return status, rep
	}
	if h.cfg.Route != nil {
		if mine, owner := h.cfg.Route(pool); !mine {
			return h.standby(rep, owner)
		}
	}
	notes := func() string { return "" }
	if h.cfg.Notes != nil {
		ctx, notes = h.cfg.Notes(ctx)
	}
	if err := h.releaser(pool).Release(ctx, req.InstanceID, req.Reason); err != nil {
		rep.Outcome, rep.Error = "error", err.Error()
		h.log.Warn("release failed", "instance", req.InstanceID, "kind", req.Kind, "err", err)
		return statusFor(err), rep
	}
	rep.Outcome, rep.Note = "released", notes()
	h.log.Info("instance released", "instance", req.InstanceID, "kind", req.Kind, "pool", pool,
		"host", req.Host, "gpu", req.GPU, "reason", req.Reason, "note", rep.Note)
	return http.StatusOK, rep
}

// releaser is the releaser of pool's instances: ReleaserFor's, else
// Releaser.
func (h *Handler) releaser(pool string) Releaser {
	if h.cfg.ReleaserFor != nil && pool != "" {
		if r := h.cfg.ReleaserFor(pool); r != nil {
			return r
		}
	}
	return h.cfg.Releaser
}

// locate names the instance's pool: the membership check's answer when there is
// one, else the request's "pool", else the only configured pool. The
// status goes with the error: 502 when the check failed, 403 for an
// instance or pool outside the configuration, 400 when the pool cannot
// be told.
func (h *Handler) locate(ctx context.Context, req Request) (string, int, error) {
	if h.cfg.Locate != nil {
		pool, err := h.cfg.Locate(ctx, req.InstanceID)
		switch {
		case err != nil:
			return "", statusFor(err), fmt.Errorf("checking the instance's pool: %w", err)
		case pool == "":
			return "", http.StatusForbidden, fmt.Errorf("instance %s is not in a configured pool", req.InstanceID)
		}
		return pool, 0, nil
	}
	switch {
	case req.Pool != "" && len(h.cfg.Pools) > 0 && !slices.Contains(h.cfg.Pools, req.Pool):
		return "", http.StatusForbidden, fmt.Errorf("pool %q is not a configured pool", req.Pool)
	case req.Pool != "":
		return req.Pool, 0, nil
	case len(h.cfg.Pools) == 1:
		return h.cfg.Pools[0], 0, nil
	case h.cfg.Route != nil:
		return "", http.StatusBadRequest, fmt.Errorf("pool is required: %d pools are configured and the replicas share them", len(h.cfg.Pools))
	}
	return "", 0, nil
}

// standby is the answer of a replica that does not act for the pool: 503,
// naming the owner, when the request cannot be passed on to it (forward),
// so that the caller's retry reaches it. Nothing is called.
func (h *Handler) standby(rep Reply, owner string) (int, Reply) {
	rep.Outcome, rep.Owner = "standby", owner
	who := owner
	if who == "" {
		who = "no replica yet"
	}
	rep.Error = fmt.Sprintf("pool %s is acted on by %s; this replica is its standby and released nothing: send the request again", rep.Pool, who)
	return http.StatusServiceUnavailable, rep
}

// statusFor maps a back-end error to an HTTP status.
func statusFor(err error) int {
	switch {
	case errors.Is(err, actuator.ErrNotImplemented):
		return http.StatusNotImplemented
	case errors.Is(err, actuator.ErrCircuitOpen):
		return http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	default:
		return http.StatusBadGateway
	}
}
