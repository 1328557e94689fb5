package kubescale_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/redact"
)

const token = "eyJhbGciOiJSUzI1NiJ9.fake-service-account-token"

// apiServer is a loopback stand-in for the Kubernetes API server's scale
// subresource of deployments/inference/sd.
type apiServer struct {
	mu       sync.Mutex
	replicas int
	// ready is the workload's status.readyReplicas; workloadStatus, when
	// not 0, is the status its GET answers instead (a role without get).
	ready, workloadStatus int
	workloadReads         int
	fail                  []int // statuses to answer next, in order
	patches               []string
	// placeholders is the replicas of deployments/inference/sd-warm, the
	// warm tier's placeholder pods (-1: no such Deployment).
	placeholders int
	t            *testing.T
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.URL.Path == "/apis/apps/v1/namespaces/inference/deployments/sd-warm/scale" && a.placeholders >= 0 {
		var p struct{ Spec struct{ Replicas *int } }
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPatch || r.Header.Get("Authorization") != "Bearer "+token ||
			json.Unmarshal(body, &p) != nil || p.Spec.Replicas == nil {
			http.Error(w, `{"kind":"Status","reason":"BadRequest","message":"bad request"}`, http.StatusBadRequest)
			return
		}
		a.placeholders = *p.Spec.Replicas
		json.NewEncoder(w).Encode(map[string]any{"kind": "Scale", "spec": map[string]int{"replicas": a.placeholders}})
		return
	}
	if r.URL.Path == "/apis/apps/v1/namespaces/inference/deployments/sd" && r.Method == http.MethodGet &&
		r.Header.Get("Authorization") == "Bearer "+token {
		a.workloadReads++
		if a.workloadStatus != 0 {
			http.Error(w, `{"kind":"Status","reason":"Forbidden","message":"cannot get resource deployments"}`, a.workloadStatus)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"kind": "Deployment", "apiVersion": "apps/v1",
			"spec": map[string]int{"replicas": a.replicas}, "status": map[string]int{"replicas": a.replicas, "readyReplicas": a.ready}})
		return
	}
	if r.URL.Path != "/apis/apps/v1/namespaces/inference/deployments/sd/scale" {
		http.Error(w, `{"kind":"Status","reason":"NotFound","message":"deployments.apps \"x\" not found"}`, http.StatusNotFound)
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+token {
		http.Error(w, `{"kind":"Status","reason":"Unauthorized","message":"Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	if len(a.fail) > 0 {
		code := a.fail[0]
		a.fail = a.fail[1:]
		w.WriteHeader(code)
		io.WriteString(w, `{"kind":"Status","reason":"TooManyRequests","message":"please slow down"}`)
		return
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPatch:
		if ct := r.Header.Get("Content-Type"); ct != "application/merge-patch+json" {
			a.t.Errorf("PATCH Content-Type = %q", ct)
		}
		body, _ := io.ReadAll(r.Body)
		a.patches = append(a.patches, string(body))
		var p struct{ Spec struct{ Replicas *int } }
		if err := json.Unmarshal(body, &p); err != nil || p.Spec.Replicas == nil {
			http.Error(w, `{"kind":"Status","reason":"BadRequest","message":"bad patch"}`, http.StatusBadRequest)
			return
		}
		a.replicas = *p.Spec.Replicas
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"kind": "Scale", "apiVersion": "autoscaling/v1",
		"spec": map[string]int{"replicas": a.replicas}, "status": map[string]int{"replicas": a.replicas}})
}

// newScaler starts a TLS API server and builds the back-end through its
// factory, with the CA and token in files as in a pod.
func newScaler(t *testing.T, api *apiServer, options map[string]string) actuator.Actuator {
	t.Helper()
	api.t = t
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{"api_server": srv.URL, "namespace": "inference", "workload": "sd",
		"ca_file": filepath.Join(dir, "ca.crt"), "token_file": filepath.Join(dir, "token")}
	for k, v := range options {
		opts[k] = v
	}
	a, err := build(t, redactor, actuator.PoolConfig{Name: "sd-pool", Backend: kubescale.Name, Limits: planner.Limits{MaxInstances: 10}, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// redactor is the binary's one redactor as the tests' factory fills it.
var redactor = redact.New()

// The token read from the token file joins the binary's redactor, so an
// upstream echoing it (a proxy's error page) cannot put it in a log line.
func TestTokenJoinsTheRedactor(t *testing.T) {
	api := &apiServer{replicas: 2}
	a := newScaler(t, api, nil)
	if _, err := a.Capacity(context.Background(), "sd-pool"); err != nil {
		t.Fatal(err)
	}
	if got := redactor.String("Bearer " + token); got != "Bearer "+redact.Mask {
		t.Errorf("redacted = %q, want the token masked", got)
	}
}

func TestScaleSubresource(t *testing.T) {
	api := &apiServer{replicas: 2}
	a := newScaler(t, api, nil)
	ctx := context.Background()
	c, err := a.Capacity(ctx, "sd-pool")
	if err != nil || c.Desired != 2 || c.Current != 2 {
		t.Fatalf("Capacity = %+v, %v", c, err)
	}
	if err := a.SetDesired(ctx, "sd-pool", 5, "forecast"); err != nil {
		t.Fatal(err)
	}
	if api.replicas != 5 || api.patches[0] != `{"spec":{"replicas":5}}` {
		t.Errorf("replicas = %d, patches %v", api.replicas, api.patches)
	}
	if err := a.SetDesired(ctx, "other", 5, "x"); !errors.Is(err, actuator.ErrRejected) {
		t.Errorf("other pool: %v, want ErrRejected", err)
	}
	if err := a.Release(ctx, "pod", "x"); !errors.Is(err, actuator.ErrNotImplemented) {
		t.Errorf("Release: %v", err)
	}
}

func TestScaleErrors(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]string
		fail    []int
		want    error
		wantMsg string
	}{
		{"throttled", nil, []int{429}, actuator.ErrThrottled, "please slow down"},
		{"server error", nil, []int{503}, actuator.ErrTransient, "HTTP 503"},
		{"conflict retried", nil, []int{409}, actuator.ErrTransient, "HTTP 409"},
		{"not found", map[string]string{"workload": "nope"}, nil, actuator.ErrRejected, `deployments.apps "x" not found`},
		{"forbidden token", map[string]string{"token_file": ""}, nil, actuator.ErrRejected, "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &apiServer{replicas: 2, fail: tt.fail}
			a := newScaler(t, api, tt.options)
			err := a.SetDesired(context.Background(), "sd-pool", 4, "x")
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error = %v, want %v containing %q", err, tt.want, tt.wantMsg)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("error leaks the token: %v", err)
			}
		})
	}
}

func TestScaleBehindSafe(t *testing.T) {
	api := &apiServer{replicas: 2, fail: []int{429, 503}}
	a := newScaler(t, api, nil)
	clock := actuatortest.NewClock(t0())
	s := actuator.NewSafe(a, actuator.SafetyOptions{
		Pools: []actuator.PoolConfig{{Name: "sd-pool", Backend: kubescale.Name, Limits: planner.Limits{MaxInstances: 10, MaxStep: 2}}},
		Now:   clock.Now, Sleep: clock.Sleep, Logger: slog.New(slog.DiscardHandler)})
	if err := s.SetDesired(context.Background(), "sd-pool", 9, "forecast"); err != nil {
		t.Fatal(err)
	}
	if api.replicas != 4 || len(clock.Sleeps()) != 2 {
		t.Errorf("replicas = %d after %d retries, want 4 after 2", api.replicas, len(clock.Sleeps()))
	}
}

// build builds a Scaler as the service does: through a registry, which
// decodes the options by PoolOptions.
func build(t *testing.T, redactor *redact.Redactor, cfg actuator.PoolConfig) (actuator.Actuator, error) {
	t.Helper()
	reg := actuator.NewRegistry()
	f := kubescale.NewFactory(func(string) string { return "" }, slog.New(slog.DiscardHandler), redactor)
	if err := reg.Register(kubescale.Name, f, kubescale.PoolOptions); err != nil {
		t.Fatal(err)
	}
	return reg.New(context.Background(), kubescale.Name, cfg)
}

func TestFactoryOptions(t *testing.T) {
	tests := []struct {
		options map[string]string
		want    string
	}{
		{map[string]string{"namespace": "x"}, "not running in a cluster"},
		{map[string]string{"api_server": "ftp://x", "namespace": "x"}, "options.api_server"},
		{map[string]string{"api_server": "http://127.0.0.1:1", "namespace": "x", "resource": "pods"}, "options.resource"},
		{map[string]string{"api_server": "https://127.0.0.1:1", "namespace": "x", "ca_file": "/nonexistent"}, "options.ca_file"},
		{map[string]string{"api_server": "http://127.0.0.1:1", "namespace": "x", "workload": "../../../api/v1/secrets"}, "options.workload"},
		{map[string]string{"api_server": "http://127.0.0.1:1", "namespace": "Kube System"}, "options.namespace"},
	}
	for _, tt := range tests {
		_, err := build(t, nil, actuator.PoolConfig{Name: "p", Backend: kubescale.Name, Limits: planner.Limits{MaxInstances: 1}, Options: tt.options})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("options %v: error %v, want %q", tt.options, err, tt.want)
		}
	}
}

func t0() (t time.Time) { return time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) }

// ReadyInstances reads the workload's ready pods, so the pool's start
// times can be measured; a workload the role may not read leaves readiness
// unknown without failing, and is not asked again. Capacity reads only the
// scale.
func TestCapacityReadsReadyPods(t *testing.T) {
	cases := []struct {
		name           string
		workloadStatus int
		wantReady      int
		wantKnown      bool
		wantReads      int // workload GETs over two ReadyInstances calls
	}{
		{"ready pods read from the workload", 0, 2, true, 2},
		{"a role without get on the workload", http.StatusForbidden, 0, false, 1},
		{"a workload not found", http.StatusNotFound, 0, false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &apiServer{replicas: 5, ready: 2, workloadStatus: tc.workloadStatus, t: t}
			sc := newScaler(t, api, nil)
			c, err := sc.Capacity(context.Background(), "sd-pool")
			if err != nil || c.Current != 5 || c.ReadyKnown {
				t.Fatalf("Capacity = %+v, %v; want current 5 and no readiness of its own", c, err)
			}
			rc, ok := sc.(actuator.ReadyCounter)
			if !ok {
				t.Fatal("kubescale does not count ready pods")
			}
			for range 2 {
				if ready, known := rc.ReadyInstances(context.Background(), "sd-pool"); ready != tc.wantReady || known != tc.wantKnown {
					t.Errorf("ReadyInstances = %d, %v; want %d, %v", ready, known, tc.wantReady, tc.wantKnown)
				}
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			if api.workloadReads != tc.wantReads {
				t.Errorf("workload read %d times over a Capacity and two ReadyInstances calls, want %d", api.workloadReads, tc.wantReads)
			}
		})
	}
}

// With warm_placeholder the back-end keeps the warm tier as the replicas
// of a placeholder Deployment, beside the pool's own workload; without
// it, it keeps none. A missing placeholder Deployment is an error that
// names it.
func TestWarmPlaceholder(t *testing.T) {
	ctx := context.Background()
	api := &apiServer{replicas: 2}
	a := newScaler(t, api, map[string]string{"warm_placeholder": "sd-warm"})
	wp, ok := a.(actuator.WarmPooler)
	if !ok {
		t.Fatalf("%T with warm_placeholder keeps no warm tier", a)
	}
	for _, warm := range []int{3, 0, 5} {
		if err := wp.SetWarm(ctx, "sd-pool", warm, "plan"); err != nil {
			t.Fatal(err)
		}
		if api.placeholders != warm || api.replicas != 2 {
			t.Errorf("SetWarm(%d): %d placeholders, workload %d; want %d and the workload left at 2", warm, api.placeholders, api.replicas, warm)
		}
	}
	if _, ok := a.(actuator.ReadyCounter); !ok {
		t.Errorf("%T no longer reads the ready pods", a)
	}
	if plain := newScaler(t, &apiServer{replicas: 2}, nil); func() bool { _, ok := plain.(actuator.WarmPooler); return ok }() {
		t.Errorf("%T without warm_placeholder claims a warm tier", plain)
	}
	gone := &apiServer{replicas: 2, placeholders: -1}
	err := newScaler(t, gone, map[string]string{"warm_placeholder": "sd-warm"}).(actuator.WarmPooler).SetWarm(ctx, "sd-pool", 1, "plan")
	if !errors.Is(err, actuator.ErrRejected) || !strings.Contains(err.Error(), "inference/deployments/sd-warm/scale") {
		t.Errorf("SetWarm without the placeholder Deployment: %v, want rejected, naming it", err)
	}
}
