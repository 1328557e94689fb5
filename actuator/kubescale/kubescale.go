package kubescale

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/redact"
)

// Name is the back-end's registered name.
const Name = "kubescale"

// Where Kubernetes mounts a pod's service account credentials.
const (
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	defaultTokenFile  = serviceAccountDir + "/token"
	defaultCAFile     = serviceAccountDir + "/ca.crt"
	defaultNSFile     = serviceAccountDir + "/namespace"
)

// Config says which workload one pool is and how to reach the API server.
type Config struct {
	// APIServer is the API server's base URL, e.g. https://10.0.0.1:443.
	APIServer string
	// Namespace and Workload name the Deployment (or StatefulSet).
	Namespace, Workload string
	// Resource is "deployments" (default) or "statefulsets".
	Resource string
	// Token returns the bearer token for each request (read from a file
	// each time, as service account tokens rotate). Nil: no Authorization
	// header. The token never appears in logs or errors.
	Token func() (string, error)
	// HTTPClient, with the API server's CA. Nil: http.DefaultClient.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Redactor masks the secrets it knows (the token) in the API server's
	// messages before they are shortened for an error, so that a reply
	// quoting the request cannot leave half a token in one. Nil: the
	// token alone, as each request reads it.
	Redactor *redact.Redactor
}

// Scaler sizes one workload. It is safe for concurrent use.
type Scaler struct {
	pool     string
	cfg      Config
	scale    string // the scale subresource URL
	workload string // the workload's URL, read for its ready pods
	// noReady is set once the workload could not be read for its ready
	// pods: the refusal is logged once, and Capacity reports no readiness.
	noReady atomic.Bool
	client  *http.Client
	log     *slog.Logger
}

var _ actuator.Actuator = (*Scaler)(nil)

// New returns a Scaler for pool.
func New(pool string, cfg Config) (*Scaler, error) {
	if cfg.Resource == "" {
		cfg.Resource = "deployments"
	}
	if cfg.Resource != "deployments" && cfg.Resource != "statefulsets" {
		return nil, fmt.Errorf("kubescale: pool %q: options.resource: want deployments or statefulsets, got %q", pool, cfg.Resource)
	}
	base, err := url.Parse(cfg.APIServer)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("kubescale: pool %q: options.api_server: want an http(s) URL, got %q", pool, cfg.APIServer)
	}
	if cfg.Namespace == "" || cfg.Workload == "" {
		return nil, fmt.Errorf("kubescale: pool %q: options.namespace and options.workload are required", pool)
	}
	// Both become URL path segments: a name like "../x" must not reach
	// another API path.
	for field, v := range map[string]string{"namespace": cfg.Namespace, "workload": cfg.Workload} {
		if err := objectName(v); err != nil {
			return nil, fmt.Errorf("kubescale: pool %q: options.%s: %w", pool, field, err)
		}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Redactor == nil {
		cfg.Redactor = redact.New()
	}
	workload := base.JoinPath("apis", "apps", "v1", "namespaces", cfg.Namespace, cfg.Resource, cfg.Workload)
	return &Scaler{pool: pool, cfg: cfg, scale: workload.JoinPath("scale").String(), workload: workload.String(),
		client: cfg.HTTPClient, log: cfg.Logger.With("backend", Name, "pool", pool)}, nil
}

// PoolOptions are the pool options NewFactory's factory reads; register
// them with it, so a typo (`namspace`) is refused instead of scaling the
// pool's default workload.
var PoolOptions = actuator.OptionSet{
	{Name: "workload", Kind: actuator.KindString, Check: objectName,
		Help: "the Deployment or StatefulSet to size (default: the pool's name)"},
	{Name: "namespace", Kind: actuator.KindString, Check: objectName,
		Help: "its namespace (default: the pod's own)"},
	{Name: "resource", Kind: actuator.KindString, Default: "deployments", OneOf: []string{"deployments", "statefulsets"},
		Help: "the kind of workload"},
	{Name: "api_server", Kind: actuator.KindURL,
		Help: "the API server (default: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)"},
	{Name: "token_file", Kind: actuator.KindFile, Default: defaultTokenFile,
		Help: `the bearer token, re-read for every request; "" sends none`},
	{Name: "ca_file", Kind: actuator.KindFile, Default: defaultCAFile,
		Help: `the API server's CA; "" trusts the system's (or speaks http://)`},
	{Name: OptWarmPlaceholder, Kind: actuator.KindString, Check: objectName,
		Help: "a Deployment of placeholder pods at a negative priority in the namespace, scaled to the pool's warm tier " +
			"(warm_start) so that the cluster's autoscaler keeps nodes for it; real pods preempt them (default: none)"},
}

// OptWarmPlaceholder names the warm tier's placeholder Deployment.
const OptWarmPlaceholder = "warm_placeholder"

// objectName is PoolOptions' rule for names that become URL path segments:
// a name like "../x" must not reach another API path.
func objectName(s string) error {
	if !isDNSSubdomain(s) {
		return fmt.Errorf("%q is not a Kubernetes object name (lowercase letters, digits, '-', '.')", s)
	}
	return nil
}

// NewFactory returns the actuator.Factory to register under Name, with
// PoolOptions. getenv is os.Getenv outside tests. Every token read from a
// token file (service account tokens rotate, so it is read per request) is
// added to redactor, the binary's one redactor, so that no output path can
// show it.
func NewFactory(getenv func(string) string, logger *slog.Logger, redactor *redact.Redactor) actuator.Factory {
	return func(ctx context.Context, pool actuator.PoolConfig, opts actuator.OptionValues) (actuator.Actuator, error) {
		api, err := apiServer(opts.String("api_server"), getenv)
		if err != nil {
			return nil, fmt.Errorf("kubescale: pool %q: %w", pool.Name, err)
		}
		ns := opts.String("namespace")
		if ns == "" {
			b, err := os.ReadFile(defaultNSFile)
			if err != nil {
				return nil, fmt.Errorf("kubescale: pool %q: options.namespace not set and %w", pool.Name, err)
			}
			ns = strings.TrimSpace(string(b))
		}
		client, err := httpClient(api, opts.String("ca_file"))
		if err != nil {
			return nil, fmt.Errorf("kubescale: pool %q: %w", pool.Name, err)
		}
		workload := pool.Name
		if opts.Set("workload") {
			workload = opts.String("workload")
		}
		sc, err := New(pool.Name, Config{APIServer: api, Namespace: ns, Workload: workload,
			Resource: opts.String("resource"), Token: tokenReader(opts.String("token_file")),
			HTTPClient: client, Logger: logger, Redactor: redactor})
		if err != nil || !opts.Set(OptWarmPlaceholder) {
			return sc, err
		}
		return sc.WithPlaceholder(opts.String(OptWarmPlaceholder))
	}
}

// Placeholder is a Scaler that also keeps a pool's warm tier on
// Kubernetes, as cluster-autoscaler's overprovisioning pattern does: a
// Deployment of pause pods at a negative-priority PriorityClass holds
// room on the GPU nodes, so the autoscaler (cluster-autoscaler, Karpenter)
// keeps those nodes up, and a real pod of the pool preempts one and starts
// on a node that is already there, its image cached: a warm start instead
// of a node's boot. SetWarm sizes the placeholders to the warm tier.
type Placeholder struct {
	*Scaler
	name  string
	scale string // the placeholder Deployment's scale subresource URL
}

var (
	_ actuator.WarmPooler   = (*Placeholder)(nil)
	_ actuator.ReadyCounter = (*Placeholder)(nil)
)

// WithPlaceholder returns s keeping its pool's warm tier as the
// replicas of the Deployment name, in s's namespace.
func (s *Scaler) WithPlaceholder(name string) (*Placeholder, error) {
	if err := objectName(name); err != nil {
		return nil, fmt.Errorf("kubescale: pool %q: options.%s: %w", s.pool, OptWarmPlaceholder, err)
	}
	base, _ := url.Parse(s.cfg.APIServer) // New parsed it
	scale := base.JoinPath("apis", "apps", "v1", "namespaces", s.cfg.Namespace, "deployments", name, "scale")
	return &Placeholder{Scaler: s, name: name, scale: scale.String()}, nil
}

// SetWarm implements actuator.WarmPooler: it patches the placeholder
// Deployment's spec.replicas to warm.
func (p *Placeholder) SetWarm(ctx context.Context, pool string, warm int, reason string) error {
	if err := p.scaleTo(ctx, pool, p.scale, warm); err != nil {
		return err
	}
	p.log.InfoContext(ctx, "warm tier's placeholders scaled", "placeholder", p.cfg.Namespace+"/"+p.name, "replicas", warm, "reason", reason)
	return nil
}

// apiServer is the api_server option, or the in-cluster address.
func apiServer(api string, getenv func(string) string) (string, error) {
	if api != "" {
		return api, nil
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return "", fmt.Errorf("options.api_server not set and not running in a cluster (KUBERNETES_SERVICE_HOST unset)")
	}
	return "https://" + net.JoinHostPort(host, port), nil
}

// httpClient trusts caFile's certificates for an https:// API server.
func httpClient(api, caFile string) (*http.Client, error) {
	if !strings.HasPrefix(api, "https://") || caFile == "" {
		return http.DefaultClient, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("options.ca_file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("options.ca_file %s: no PEM certificate", caFile)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
		Timeout: 30 * time.Second}, nil
}

// tokenReader reads the token from tokenFile for each request; "" is no
// token.
func tokenReader(tokenFile string) func() (string, error) {
	if tokenFile == "" {
		return nil
	}
	return func() (string, error) {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", fmt.Errorf("reading the token file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
}

// Name returns "kubescale".
func (s *Scaler) Name() string { return Name }

// scaleObject is the autoscaling/v1 Scale the subresource speaks.
type scaleObject struct {
	Spec   struct{ Replicas int } `json:"spec"`
	Status struct{ Replicas int } `json:"status"`
}

// workloadStatus is the part of a Deployment or StatefulSet Capacity reads.
type workloadStatus struct {
	Status struct {
		ReadyReplicas int `json:"readyReplicas"`
	} `json:"status"`
}

// Capacity reads the workload's scale: Desired is spec.replicas, Current
// status.replicas. Kubernetes has no bounds of its own (Max 0). The ready
// pods are ReadyInstances', a read of the workload itself.
func (s *Scaler) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	if err := s.check(pool); err != nil {
		return actuator.Capacity{}, err
	}
	var sc scaleObject
	if err := s.do(ctx, http.MethodGet, s.scale, nil, &sc); err != nil {
		return actuator.Capacity{}, err
	}
	if sc.Spec.Replicas < 0 || sc.Status.Replicas < 0 {
		return actuator.Capacity{}, fmt.Errorf("kubescale: GET %s/%s/%s/scale: %w: negative replicas in the reply (spec %d, status %d)",
			s.cfg.Namespace, s.cfg.Resource, s.cfg.Workload, actuator.ErrRejected, sc.Spec.Replicas, sc.Status.Replicas)
	}
	return actuator.Capacity{Current: sc.Status.Replicas, Desired: sc.Spec.Replicas}, nil
}

// ReadyInstances implements actuator.ReadyCounter: the workload's
// status.readyReplicas, the pods that serve, from which the pool's start
// times are measured. A workload that cannot be read (no get on it, as
// older roles granted only its scale) leaves readiness unknown, logged
// once and not asked again; a passing failure is not logged.
func (s *Scaler) ReadyInstances(ctx context.Context, pool string) (int, bool) {
	if s.check(pool) != nil || s.noReady.Load() {
		return 0, false
	}
	var ws workloadStatus
	err := s.do(ctx, http.MethodGet, s.workload, nil, &ws)
	switch {
	case errors.Is(err, actuator.ErrRejected):
		s.noReady.Store(true)
		s.log.WarnContext(ctx, "cannot read the workload's ready pods, so start times are not measured; grant get on it",
			"workload", s.cfg.Namespace+"/"+s.cfg.Resource+"/"+s.cfg.Workload, "reason", err)
		return 0, false
	case err != nil:
		return 0, false
	case ws.Status.ReadyReplicas < 0:
		return 0, false
	}
	return ws.Status.ReadyReplicas, true
}

// SetDesired patches spec.replicas.
func (s *Scaler) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	if err := s.scaleTo(ctx, pool, s.scale, desired); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "workload scaled", "workload", s.cfg.Namespace+"/"+s.cfg.Workload, "replicas", desired, "reason", reason)
	return nil
}

// scaleTo patches the spec.replicas of the scale subresource at target,
// for pool.
func (s *Scaler) scaleTo(ctx context.Context, pool, target string, replicas int) error {
	if err := s.check(pool); err != nil {
		return err
	}
	return s.do(ctx, http.MethodPatch, target, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas), nil)
}

// PublishSchedule is not supported: Kubernetes has no scheduled scaling.
func (s *Scaler) PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error {
	return fmt.Errorf("kubescale: %w", actuator.ErrNotImplemented)
}

// Release is not supported: Kubernetes picks which pod to remove.
func (s *Scaler) Release(ctx context.Context, instanceID, reason string) error {
	return fmt.Errorf("kubescale: %w", actuator.ErrNotImplemented)
}

func (s *Scaler) check(pool string) error {
	if pool != s.pool {
		return fmt.Errorf("kubescale: configured for pool %q, asked for %q: %w", s.pool, pool, actuator.ErrRejected)
	}
	return nil
}

// do sends one request to target, the scale subresource or the workload,
// and decodes the reply into out (if not nil), mapping HTTP statuses onto
// the actuator's errors.
func (s *Scaler) do(ctx context.Context, method, target string, body []byte, out any) error {
	what := "kubescale: " + method + " " + objectPath(target)
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	if s.cfg.Token != nil {
		token, err := s.cfg.Token()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		// Known to the redactor before it can be echoed back.
		s.cfg.Redactor.Add(token)
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		return fmt.Errorf("%s: %w: %s", what, actuator.ErrTransient, redactURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: reading the reply: %w: %v", what, actuator.ErrTransient, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %d: %s: %w", what, resp.StatusCode, statusMessage(data, s.cfg.Redactor), classify(resp.StatusCode))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s: decoding the reply: %w: %v", what, actuator.ErrRejected, err)
		}
	}
	return nil
}

// objectPath names the object a request's URL reaches as errors do:
// namespace/resource/name, with /scale for the subresource.
func objectPath(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	_, path, found := strings.Cut(u.Path, "/namespaces/")
	if !found {
		return u.Path
	}
	return path
}

// classify maps an HTTP status to the actuator's error kinds.
func classify(code int) error {
	switch {
	case code == http.StatusTooManyRequests:
		return actuator.ErrThrottled
	case code == http.StatusConflict, code >= 500:
		return actuator.ErrTransient
	}
	return actuator.ErrRejected
}

// maxMessageBytes bounds the API server's message quoted in an error.
const maxMessageBytes = 512

// statusMessage extracts the message of a Kubernetes Status reply (or the
// reply itself when it is none), redacted, then on one line of at most
// maxMessageBytes (redact.Snippet: redacting first, so that a cut never
// leaves half a token).
func statusMessage(data []byte, red *redact.Redactor) string {
	var st struct {
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &st) == nil && st.Message != "" {
		msg = st.Message
		if st.Reason != "" {
			msg = st.Reason + ": " + st.Message
		}
	}
	return red.Snippet(msg, maxMessageBytes)
}

// redactURLError keeps a transport error's cause without the full URL's
// query (there is none today, but errors must never carry credentials).
func redactURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// isDNSSubdomain reports whether name is a valid Kubernetes object name
// (RFC 1123 subdomain: at most 253 characters of [a-z0-9-.], starting and
// ending alphanumeric).
func isDNSSubdomain(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return alnum(name[0]) && alnum(name[len(name)-1]) && !strings.Contains(name, "..")
}
