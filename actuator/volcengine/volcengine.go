package volcengine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	"github.com/volcengine/volcengine-go-sdk/service/ecs"
	"github.com/volcengine/volcengine-go-sdk/volcengine"
	"github.com/volcengine/volcengine-go-sdk/volcengine/credentials"
	"github.com/volcengine/volcengine-go-sdk/volcengine/request"
	"github.com/volcengine/volcengine-go-sdk/volcengine/response"
	"github.com/volcengine/volcengine-go-sdk/volcengine/session"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/redact"
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
	// Distribution, when set, is the spot mix every resize sets on the
	// group with its size while the plan has no spot tier (nil: the
	// group's own stays); with one, SetSpot's mix wins (see mixOf).
	Distribution *Distribution
	// SpotReturnAfter is how long SettleSpot waits before it probes for
	// spot again after a probe found the zone still out of stock, and how
	// long a probe's launches may take to serve before it is given up
	// (options.spot_return_after). Default DefaultSpotReturnAfter.
	SpotReturnAfter time.Duration
}

// DefaultSpotReturnAfter is Options.SpotReturnAfter's default: a probe for
// spot costs a boot of the instances it launches, so a long stock-out
// costs one such boot every half hour rather than one a decision.
const DefaultSpotReturnAfter = 30 * time.Minute

// Distribution is a scaling group's spot mix (the API's
// InstancesDistribution); a nil field is left as the group has it.
type Distribution struct {
	// OnDemandBase instances are always on demand; OnDemandPercentage of
	// those above the base are on demand, the rest on spot.
	OnDemandBase, OnDemandPercentage *int32
	// SpotRemedy replaces a spot instance before the cloud reclaims it;
	// CompensateWithOnDemand launches on demand when spot is out of stock.
	SpotRemedy, CompensateWithOnDemand *bool
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
	// red masks the keys in every reply before the SDK reads it: a
	// gateway quoting the request quotes the access key (in the
	// Authorization header), and the reply's text reaches errors.
	red *redact.Redactor

	// mu guards groups, what the Actuator keeps of each scaling group.
	mu     sync.Mutex
	groups map[string]*groupState
}

// groupState is what the Actuator keeps of one scaling group. Its mu
// serialises the changes to the group (so one group's calls never wait
// on another's) and guards warm, spot and back.
type groupState struct {
	mu sync.Mutex
	// warm is the warm tier SetWarm keeps (nil: none).
	warm *warmTier
	// spot is the spot mix SetSpot set from the plan (nil: none); every
	// resize sends it again.
	spot *Distribution
	// back is SettleSpot's move of on-demand stand-ins back to spot.
	back spotReturn
}

// group returns what the Actuator keeps of scaling group id, made on
// first use.
func (a *Actuator) group(id string) *groupState {
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.groups[id]
	if g == nil {
		g = &groupState{}
		a.groups[id] = g
	}
	return g
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
	if opts.SpotReturnAfter <= 0 {
		opts.SpotReturnAfter = DefaultSpotReturnAfter
	}
	sess, err := newSession(cfg, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	red := redact.New(cfg.AccessKey, cfg.SecretKey.Reveal())
	as, ec := autoscaling.New(sess), ecs.New(sess)
	guard := envelopeGuard(red)
	for _, h := range []*request.Handlers{&as.Handlers, &ec.Handlers} {
		h.Unmarshal.PushFrontNamed(guard)
		h.UnmarshalError.PushFrontNamed(guard)
	}
	return &Actuator{
		as:     as,
		ecs:    ec,
		opts:   opts,
		log:    opts.Logger.With("backend", Name, "region", cfg.Region),
		region: cfg.Region,
		red:    red,
		groups: map[string]*groupState{},
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

// envelopeGuard returns the handler that runs before the SDK's
// unmarshallers. It masks the keys red knows in every reply, so no field
// the SDK reads (an error message, a per-instance error) can carry them.
// A reply the SDK cannot decode (a proxy's HTML error page, a truncated
// body, JSON of another shape) makes the SDK print "Unmarshal err" on
// stdout, which is serve --once's JSON, and lose the HTTP status; the
// guard replaces such a body with an error envelope (code
// MalformedResponse, the status and the body's first bytes, redacted
// before they are cut), which the SDK turns into a normal RequestFailure
// that send classifies by status.
func envelopeGuard(red *redact.Redactor) request.NamedHandler {
	return request.NamedHandler{Name: "prewarm.envelopeGuard", Fn: func(r *request.Request) {
		if r.HTTPResponse == nil || r.HTTPResponse.Body == nil {
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.HTTPResponse.Body, 4<<20))
		r.HTTPResponse.Body.Close()
		body = red.Bytes(body)
		if err == nil && json.Valid(body) && sdkDecodes(r, body) {
			r.HTTPResponse.Body = io.NopCloser(bytes.NewReader(body))
			return
		}
		envelope, _ := json.Marshal(map[string]any{"ResponseMetadata": map[string]any{
			"Error": map[string]string{
				"Code": codeMalformedResponse,
				"Message": fmt.Sprintf("the reply (HTTP %d) is not an OpenAPI envelope: %q", r.HTTPResponse.StatusCode,
					red.Snippet(string(body), 80)),
			},
		}})
		r.HTTPResponse.Body = io.NopCloser(bytes.NewReader(envelope))
	}}
}

// sdkDecodes reports whether the SDK's query-protocol unmarshallers
// (volcenginequery.Unmarshal and UnmarshalError) will decode body without
// an error or a panic, by the same steps: the envelope, then, on success,
// its Result into the call's output type. A failure must carry
// ResponseMetadata.Error: UnmarshalError dereferences it (SDK v1.1.35
// panics on {"ResponseMetadata":{}} with a 4xx), and without
// ResponseMetadata it loses the error.
func sdkDecodes(r *request.Request, body []byte) bool {
	var env response.VolcengineResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&env) != nil || json.Unmarshal(body, &response.VolcengineResponse{}) != nil {
		return false
	}
	failed := r.HTTPResponse.StatusCode >= 300 ||
		env.ResponseMetadata != nil && env.ResponseMetadata.Error != nil && env.ResponseMetadata.Error.Code != ""
	if failed {
		return env.ResponseMetadata != nil && env.ResponseMetadata.Error != nil
	}
	if !r.DataFilled() {
		return true
	}
	result, err := json.Marshal(env.Result)
	if err != nil {
		return false
	}
	out := reflect.New(reflect.TypeOf(r.Data).Elem()).Interface()
	if json.Unmarshal(result, out) == nil {
		return true
	}
	dec = json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	return dec.Decode(out) == nil
}

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
