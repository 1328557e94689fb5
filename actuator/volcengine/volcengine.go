package volcengine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	"github.com/volcengine/volcengine-go-sdk/service/ecs"
	"github.com/volcengine/volcengine-go-sdk/volcengine"
	"github.com/volcengine/volcengine-go-sdk/volcengine/credentials"
	"github.com/volcengine/volcengine-go-sdk/volcengine/request"
	"github.com/volcengine/volcengine-go-sdk/volcengine/session"

	"github.com/prewarm/prewarm/actuator"
)

// Name is the back-end's registered name.
const Name = "volcengine"

// DefaultPolicyPrefix starts the name of every scheduled scaling policy
// prewarm creates; PublishSchedule deletes only policies with this prefix.
const DefaultPolicyPrefix = "prewarm-"

// Options tune an Actuator; the zero value is the documented default of
// each field.
type Options struct {
	// PolicyPrefix marks prewarm's scheduled policies. Default
	// DefaultPolicyPrefix. Policies without it are never modified.
	PolicyPrefix string
	// MaxScheduledPolicies caps how many future steps PublishSchedule
	// turns into policies (the API limits policies per group). Default 20.
	MaxScheduledPolicies int
	// MinLead skips schedule steps closer than this to now: the API
	// refuses launch times in the past. Default 2 minutes.
	MinLead time.Duration
	// NoStopChargingFallback makes Release fail instead of stopping with
	// KeepCharging when an instance refuses StopCharging.
	NoStopChargingFallback bool
	// Logger receives one line per change. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// HTTPClient replaces the HTTP client (its Timeout is kept). Default:
	// a client with Config.Timeout and proxies from the environment.
	HTTPClient *http.Client
}

// Actuator drives Volcengine: a pool is an Auto Scaling group ID, sized
// with ModifyScalingGroup and scheduled with Scheduled scaling policies;
// Release stops an ECS instance with StopCharging. It is safe for
// concurrent use. Wrap it in actuator.NewSafe for bounds, retries and the
// circuit breaker: it makes exactly one attempt per call itself.
type Actuator struct {
	as     *autoscaling.AUTOSCALING
	ecs    *ecs.ECS
	opts   Options
	log    *slog.Logger
	region string
}

var _ actuator.Actuator = (*Actuator)(nil)

// New builds an Actuator from cfg, which must Validate.
func New(cfg Config, opts Options) (*Actuator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.PolicyPrefix == "" {
		opts.PolicyPrefix = DefaultPolicyPrefix
	}
	if opts.MaxScheduledPolicies <= 0 {
		opts.MaxScheduledPolicies = 20
	}
	if opts.MinLead <= 0 {
		opts.MinLead = 2 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sess, err := newSession(cfg, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	as, ec := autoscaling.New(sess), ecs.New(sess)
	for _, h := range []*request.Handlers{&as.Handlers, &ec.Handlers} {
		h.Unmarshal.PushFrontNamed(envelopeGuard)
		h.UnmarshalError.PushFrontNamed(envelopeGuard)
	}
	return &Actuator{
		as:     as,
		ecs:    ec,
		opts:   opts,
		log:    opts.Logger.With("backend", Name, "region", cfg.Region),
		region: cfg.Region,
	}, nil
}

// newSession configures the SDK: static credentials, the region, the
// endpoint (plain HTTP when it says http://), no SDK-level retries (the
// Safe wrapper retries with jitter and counts failures for its breaker),
// and an HTTP client with a timeout.
func newSession(cfg Config, client *http.Client) (*session.Session, error) {
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if client == nil {
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.Proxy = http.ProxyFromEnvironment
		// The SDK overwrites the Proxy of an *http.Transport with its own
		// choice, ignoring NO_PROXY; wrapping the transport keeps ours.
		client = &http.Client{Transport: transport{base}, Timeout: timeout}
	}
	vc := volcengine.NewConfig().
		WithRegion(cfg.Region).
		WithCredentials(credentials.NewStaticCredentials(cfg.AccessKey, cfg.SecretKey.Reveal(), "")).
		WithMaxRetries(0).
		WithHTTPClient(client)
	if cfg.Endpoint != "" {
		u, err := endpointURL(cfg.Endpoint)
		if err != nil {
			return nil, err
		}
		// WithEndpoint keeps an explicit scheme; DisableSSL also makes the
		// SDK pick the HTTP proxy settings for a plain-HTTP endpoint.
		vc = vc.WithEndpoint(u.Scheme + "://" + u.Host).WithDisableSSL(u.Scheme == "http")
	}
	sess, err := session.NewSession(vc)
	if err != nil {
		return nil, fmt.Errorf("volcengine: creating SDK session: %w", err)
	}
	return sess, nil
}

// envelopeGuard runs before the SDK's unmarshallers. A reply that is not
// JSON (a proxy's HTML error page, a truncated body) makes the SDK print
// "Unmarshal err" on stdout and lose the HTTP status; the guard replaces
// such a body with an error envelope (code MalformedResponse, the status
// and the body's first bytes), which the SDK turns into a normal
// RequestFailure that send classifies by status.
var envelopeGuard = request.NamedHandler{Name: "prewarm.envelopeGuard", Fn: func(r *request.Request) {
	if r.HTTPResponse == nil || r.HTTPResponse.Body == nil {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.HTTPResponse.Body, 4<<20))
	r.HTTPResponse.Body.Close()
	if err == nil && json.Valid(body) {
		r.HTTPResponse.Body = io.NopCloser(bytes.NewReader(body))
		return
	}
	snippet := strings.Map(func(c rune) rune {
		if c < ' ' || c == 0x7f {
			return ' '
		}
		return c
	}, string(body[:min(len(body), 80)]))
	envelope, _ := json.Marshal(map[string]any{"ResponseMetadata": map[string]any{
		"Error": map[string]string{
			"Code":    codeMalformedResponse,
			"Message": fmt.Sprintf("the reply (HTTP %d) is not an OpenAPI envelope: %q", r.HTTPResponse.StatusCode, snippet),
		},
	}})
	r.HTTPResponse.Body = io.NopCloser(bytes.NewReader(envelope))
}}

// transport hides the *http.Transport type from the SDK (see newSession).
type transport struct{ http.RoundTripper }

// Name implements actuator.Actuator.
func (a *Actuator) Name() string { return Name }

// Region is the region the actuator calls.
func (a *Actuator) Region() string { return a.region }

// token returns the idempotency token of the logical call (set by Safe) or
// a fresh one, suffixed to tell apart the different requests one logical
// call makes. Volcengine limits ClientToken to 64 ASCII characters.
func token(ctx context.Context, suffix string) string {
	t, ok := actuator.IdempotencyToken(ctx)
	if !ok {
		t = actuator.NewIdempotencyToken()
	}
	if suffix != "" {
		t += "-" + suffix
	}
	if len(t) > 64 {
		t = t[len(t)-64:]
	}
	return t
}

// report records the provider's request ID for Safe's audit log.
func report(ctx context.Context, requestID string) {
	if requestID != "" {
		actuator.ReportRequestID(ctx, requestID)
	}
}

func checkID(kind, id string) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("volcengine: %w: empty %s", actuator.ErrRejected, kind)
	}
	if len(id) > 128 || strings.ContainsAny(id, " \t\r\n") {
		return fmt.Errorf("volcengine: %w: %s %q is malformed", actuator.ErrRejected, kind, id)
	}
	return nil
}
