package actuator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/redact"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// harness is a Safe around a Fake, with a manual clock, an audit buffer and
// a private metrics registry.
type harness struct {
	fake    *actuatortest.Fake
	safe    *actuator.Safe
	clock   *actuatortest.Clock
	audit   *bytes.Buffer
	logs    *bytes.Buffer // JSON log lines
	reg     *prometheus.Registry
	metrics *actuator.Metrics
	alerts  []actuator.Alert
}

// newHarness builds a harness for one pool "p" of config cfg (Name and
// Backend filled in) whose back-end starts at current with bounds
// [beMin, beMax].
func newHarness(t *testing.T, cfg actuator.PoolConfig, current, beMin, beMax int, tweak func(*actuator.SafetyOptions)) *harness {
	t.Helper()
	h := &harness{
		fake:  actuatortest.New("fake").AddPool("p", current, beMin, beMax),
		clock: actuatortest.NewClock(t0),
		audit: &bytes.Buffer{},
		logs:  &bytes.Buffer{},
		reg:   prometheus.NewRegistry(),
	}
	var err error
	if h.metrics, err = actuator.NewMetrics(h.reg); err != nil {
		t.Fatal(err)
	}
	cfg.Name, cfg.Backend = "p", "fake"
	var n atomic.Int64
	opts := actuator.SafetyOptions{
		Pools:   []actuator.PoolConfig{cfg},
		Audit:   h.audit,
		Metrics: h.metrics,
		Logger:  slog.New(slog.NewJSONHandler(h.logs, nil)),
		OnAlert: func(a actuator.Alert) { h.alerts = append(h.alerts, a) },
		Now:     h.clock.Now,
		Sleep:   h.clock.Sleep,
		Jitter:  func() float64 { return 0.5 },
		NewToken: func() string {
			return fmt.Sprintf("tok-%d", n.Add(1))
		},
	}
	if tweak != nil {
		tweak(&opts)
	}
	h.safe = actuator.NewSafe(h.fake, opts)
	return h
}

// records parses the audit log.
func (h *harness) records(t *testing.T) []actuator.AuditRecord {
	t.Helper()
	var out []actuator.AuditRecord
	for _, line := range strings.Split(strings.TrimSpace(h.audit.String()), "\n") {
		if line == "" {
			continue
		}
		var r actuator.AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func (h *harness) last(t *testing.T) actuator.AuditRecord {
	t.Helper()
	recs := h.records(t)
	if len(recs) == 0 {
		t.Fatal("no audit record")
	}
	return recs[len(recs)-1]
}

func ptr(v int) *int { return &v }

func TestSafeSetDesiredLimits(t *testing.T) {
	tests := []struct {
		name             string
		cfg              actuator.PoolConfig
		current          int
		beMin, beMax     int
		desired          int
		wantErr          error
		wantCalls        int // SetDesired calls reaching the back-end
		wantSize         int
		wantOutcome      string
		wantLimitedBy    string
		wantRequested    *int
		wantFrom, wantTo *int
	}{
		{name: "within bounds applied", cfg: actuator.PoolConfig{Limits: planner.Limits{MinInstances: 0, MaxInstances: 10}}, current: 2, desired: 5,
			wantCalls: 1, wantSize: 5, wantOutcome: "ok", wantRequested: ptr(5), wantFrom: ptr(2), wantTo: ptr(5)},
		{name: "above config max clamped", cfg: actuator.PoolConfig{Limits: planner.Limits{MinInstances: 0, MaxInstances: 10}}, current: 2, desired: 50,
			wantCalls: 1, wantSize: 10, wantOutcome: "ok", wantLimitedBy: "max", wantRequested: ptr(50), wantFrom: ptr(2), wantTo: ptr(10)},
		{name: "below config min clamped", cfg: actuator.PoolConfig{Limits: planner.Limits{MinInstances: 3, MaxInstances: 10}}, current: 5, desired: 0,
			wantCalls: 1, wantSize: 3, wantOutcome: "ok", wantLimitedBy: "min", wantRequested: ptr(0), wantFrom: ptr(5), wantTo: ptr(3)},
		{name: "back-end max tighter than config", cfg: actuator.PoolConfig{Limits: planner.Limits{MinInstances: 0, MaxInstances: 16}}, current: 2, beMax: 8, desired: 12,
			wantCalls: 1, wantSize: 8, wantOutcome: "ok", wantLimitedBy: "max", wantRequested: ptr(12), wantFrom: ptr(2), wantTo: ptr(8)},
		{name: "back-end min tighter than config", cfg: actuator.PoolConfig{Limits: planner.Limits{MinInstances: 0, MaxInstances: 16}}, current: 4, beMin: 2, desired: 0,
			wantCalls: 1, wantSize: 2, wantOutcome: "ok", wantLimitedBy: "min", wantRequested: ptr(0), wantFrom: ptr(4), wantTo: ptr(2)},
		{name: "step limit up", cfg: actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 20, MaxStep: 3}}, current: 2, desired: 10,
			wantCalls: 1, wantSize: 5, wantOutcome: "ok", wantLimitedBy: "max_step", wantRequested: ptr(10), wantFrom: ptr(2), wantTo: ptr(5)},
		{name: "step limit down", cfg: actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 20, MaxStep: 3}}, current: 10, desired: 0,
			wantCalls: 1, wantSize: 7, wantOutcome: "ok", wantLimitedBy: "max_step", wantRequested: ptr(0), wantFrom: ptr(10), wantTo: ptr(7)},
		{name: "bounds win over step limit", cfg: actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 8, MaxStep: 2}}, current: 15, desired: 15,
			wantCalls: 1, wantSize: 8, wantOutcome: "ok", wantLimitedBy: "max", wantRequested: ptr(15), wantFrom: ptr(15), wantTo: ptr(8)},
		{name: "no change no call", cfg: actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, current: 4, desired: 4,
			wantCalls: 0, wantSize: 4, wantOutcome: "noop", wantRequested: ptr(4), wantFrom: ptr(4), wantTo: ptr(4)},
		{name: "clamped to current is a no-op", cfg: actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, current: 10, desired: 30,
			wantCalls: 0, wantSize: 10, wantOutcome: "noop", wantLimitedBy: "max", wantRequested: ptr(30), wantFrom: ptr(10), wantTo: ptr(10)},
		{name: "negative refused", cfg: actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, current: 4, desired: -1,
			wantErr: actuator.ErrInvalidDesired, wantSize: 4, wantOutcome: "refused"},
		{name: "absurd refused", cfg: actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, current: 4, desired: 1_000_000,
			wantErr: actuator.ErrInvalidDesired, wantSize: 4, wantOutcome: "refused"},
		{name: "config and back-end bounds conflict", cfg: actuator.PoolConfig{Limits: planner.Limits{MinInstances: 0, MaxInstances: 4}}, current: 6, beMin: 5, desired: 3,
			wantErr: actuator.ErrInvalidConfig, wantSize: 6, wantOutcome: "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.cfg, tt.current, tt.beMin, tt.beMax, nil)
			err := h.safe.SetDesired(context.Background(), "p", tt.desired, "test")
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("SetDesired(%d) error = %v, want %v", tt.desired, err, tt.wantErr)
			}
			if got := len(h.fake.CallsOf(actuator.OpSetDesired)); got != tt.wantCalls {
				t.Errorf("back-end SetDesired calls = %d, want %d", got, tt.wantCalls)
			}
			if got := h.fake.Pool("p").Desired; got != tt.wantSize {
				t.Errorf("pool size = %d, want %d", got, tt.wantSize)
			}
			rec := h.last(t)
			if rec.Outcome != tt.wantOutcome || rec.LimitedBy != tt.wantLimitedBy {
				t.Errorf("audit outcome/limited_by = %q/%q, want %q/%q", rec.Outcome, rec.LimitedBy, tt.wantOutcome, tt.wantLimitedBy)
			}
			if tt.wantOutcome != "refused" {
				if !eqPtr(rec.Requested, tt.wantRequested) || !eqPtr(rec.From, tt.wantFrom) || !eqPtr(rec.To, tt.wantTo) {
					t.Errorf("audit requested/from/to = %v/%v/%v, want %v/%v/%v", deref(rec.Requested), deref(rec.From), deref(rec.To),
						deref(tt.wantRequested), deref(tt.wantFrom), deref(tt.wantTo))
				}
			}
			if got := metricValue(t, h.reg, "prewarm_actuator_calls_total",
				map[string]string{"backend": "fake", "op": "set_desired", "outcome": tt.wantOutcome}); got != 1 {
				t.Errorf("prewarm_actuator_calls_total{outcome=%q} = %v, want 1", tt.wantOutcome, got)
			}
		})
	}
}

func eqPtr(a, b *int) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }
func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// metricValue returns the value of the counter or gauge series name whose
// labels include labels (0 if there is none).
func metricValue(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}

func TestSafeApplyFloat(t *testing.T) {
	tests := []struct {
		name     string
		desired  float64
		wantErr  error
		wantSize int
	}{
		{"NaN refused", math.NaN(), actuator.ErrInvalidDesired, 4},
		{"+Inf refused", math.Inf(1), actuator.ErrInvalidDesired, 4},
		{"-Inf refused", math.Inf(-1), actuator.ErrInvalidDesired, 4},
		{"negative refused", -0.5, actuator.ErrInvalidDesired, 4},
		{"absurd refused", 1e12, actuator.ErrInvalidDesired, 4},
		{"fraction rounds up", 6.2, nil, 7},
		{"float noise is not an extra instance", 6.0000000001, nil, 6},
		{"zero", 0, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 4, 0, 0, nil)
			err := h.safe.Apply(context.Background(), "p", tt.desired, "planner")
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Apply(%v) error = %v, want %v", tt.desired, err, tt.wantErr)
			}
			if got := h.fake.Pool("p").Desired; got != tt.wantSize {
				t.Errorf("pool size = %d, want %d", got, tt.wantSize)
			}
			if tt.wantErr != nil {
				if n := len(h.fake.Calls()); n != 0 {
					t.Errorf("refused value reached the back-end: %d calls", n)
				}
				if rec := h.last(t); rec.Outcome != actuator.OutcomeRefused || rec.Error == "" {
					t.Errorf("audit = %+v, want outcome refused with an error", rec)
				}
			}
		})
	}
}

func TestSafeRetries(t *testing.T) {
	tests := []struct {
		name         string
		failures     []error // errors of successive attempts; then success
		maxAttempts  int
		wantErr      error
		wantAttempts int
		wantSleeps   []time.Duration
		wantOutcome  string
	}{
		{name: "throttled then success", failures: []error{actuator.ErrThrottled, actuator.ErrThrottled},
			wantAttempts: 3, wantSleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, wantOutcome: "ok"},
		{name: "transient then success", failures: []error{actuator.ErrTransient},
			wantAttempts: 2, wantSleeps: []time.Duration{100 * time.Millisecond}, wantOutcome: "ok"},
		{name: "per-attempt deadline retried", failures: []error{context.DeadlineExceeded},
			wantAttempts: 2, wantSleeps: []time.Duration{100 * time.Millisecond}, wantOutcome: "ok"},
		{name: "retries exhausted", failures: []error{actuator.ErrTransient, actuator.ErrTransient, actuator.ErrTransient, actuator.ErrTransient},
			wantErr: actuator.ErrTransient, wantAttempts: 4,
			wantSleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}, wantOutcome: "error"},
		{name: "backoff capped at MaxDelay", maxAttempts: 7,
			failures:     []error{actuator.ErrThrottled, actuator.ErrThrottled, actuator.ErrThrottled, actuator.ErrThrottled, actuator.ErrThrottled, actuator.ErrThrottled},
			wantAttempts: 7, wantSleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
				800 * time.Millisecond, 1000 * time.Millisecond, 1000 * time.Millisecond}, wantOutcome: "ok"},
		{name: "rejected not retried", failures: []error{actuator.ErrRejected},
			wantErr: actuator.ErrRejected, wantAttempts: 1, wantOutcome: "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 1, 0, 0, func(o *actuator.SafetyOptions) {
				o.Retry = actuator.RetryPolicy{MaxAttempts: tt.maxAttempts, BaseDelay: 200 * time.Millisecond, MaxDelay: 2 * time.Second}
			})
			attempt := 0
			h.fake.OnScale = func(pool string, from, to int) error {
				attempt++
				if attempt <= len(tt.failures) {
					return fmt.Errorf("provider said no (RequestId r-%d): %w", attempt, tt.failures[attempt-1])
				}
				return nil
			}
			err := h.safe.SetDesired(context.Background(), "p", 3, "test")
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			calls := h.fake.CallsOf(actuator.OpSetDesired)
			if len(calls) != tt.wantAttempts {
				t.Fatalf("attempts = %d, want %d", len(calls), tt.wantAttempts)
			}
			for _, c := range calls {
				if c.Token != calls[0].Token || c.Token == "" {
					t.Errorf("idempotency token changed across retries: %q vs %q", c.Token, calls[0].Token)
				}
			}
			if got := h.clock.Sleeps(); fmt.Sprint(got) != fmt.Sprint(tt.wantSleeps) {
				t.Errorf("backoff sleeps = %v, want %v", got, tt.wantSleeps)
			}
			rec := h.last(t)
			if rec.Outcome != tt.wantOutcome || rec.Attempts != tt.wantAttempts || rec.RequestID != calls[0].Token {
				t.Errorf("audit outcome/attempts/request_id = %s/%d/%s, want %s/%d/%s",
					rec.Outcome, rec.Attempts, rec.RequestID, tt.wantOutcome, tt.wantAttempts, calls[0].Token)
			}
		})
	}
}

func TestSafeRetryHonoursContext(t *testing.T) {
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 1, 0, 0, func(o *actuator.SafetyOptions) {
		o.Breaker.FailureThreshold = 1
	})
	ctx, cancel := context.WithCancel(context.Background())
	h.fake.OnScale = func(string, int, int) error {
		cancel() // the caller gives up while the provider is throttling
		return actuator.ErrThrottled
	}
	err := h.safe.SetDesired(ctx, "p", 3, "test")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, actuator.ErrThrottled) {
		t.Fatalf("error = %v, want context.Canceled wrapping ErrThrottled", err)
	}
	if n := len(h.fake.CallsOf(actuator.OpSetDesired)); n != 1 {
		t.Errorf("attempts = %d, want 1 (no retry after the context ended)", n)
	}
	if st := h.safe.BreakerState("p"); st != actuator.BreakerClosed {
		t.Errorf("breaker = %v after a caller cancellation, want closed", st)
	}
}

func TestSafeCircuitBreaker(t *testing.T) {
	const coolOff = 5 * time.Minute
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
		o.Breaker = actuator.BreakerPolicy{FailureThreshold: 3, CoolOff: coolOff}
	})
	failing := true
	h.fake.OnScale = func(string, int, int) error {
		if failing {
			return fmt.Errorf("InvalidParameter: %w", actuator.ErrRejected)
		}
		return nil
	}
	ctx := context.Background()
	backendCalls := func() int { return len(h.fake.CallsOf(actuator.OpSetDesired)) }

	steps := []struct {
		name        string
		advance     time.Duration
		failing     bool
		wantErr     error
		wantState   actuator.BreakerState
		wantCalls   int // cumulative back-end SetDesired calls
		wantAlerts  int
		wantOutcome string
	}{
		{"failure 1", 0, true, actuator.ErrRejected, actuator.BreakerClosed, 1, 0, "error"},
		{"failure 2", time.Second, true, actuator.ErrRejected, actuator.BreakerClosed, 2, 0, "error"},
		{"failure 3 opens", time.Second, true, actuator.ErrRejected, actuator.BreakerOpen, 3, 1, "error"},
		{"open: back-end not called", time.Minute, true, actuator.ErrCircuitOpen, actuator.BreakerOpen, 3, 1, "circuit_open"},
		{"still open before cool-off", coolOff - time.Minute - time.Second, false, actuator.ErrCircuitOpen, actuator.BreakerOpen, 3, 1, "circuit_open"},
		{"half-open trial fails, reopens", 2 * time.Second, true, actuator.ErrRejected, actuator.BreakerOpen, 4, 2, "error"},
		{"open again", time.Second, false, actuator.ErrCircuitOpen, actuator.BreakerOpen, 4, 2, "circuit_open"},
		{"half-open trial succeeds, closes", coolOff, false, nil, actuator.BreakerClosed, 5, 2, "ok"},
	}
	for _, st := range steps {
		h.clock.Advance(st.advance)
		failing = st.failing
		err := h.safe.SetDesired(ctx, "p", 6, "test")
		if !errors.Is(err, st.wantErr) || (err != nil) != (st.wantErr != nil) {
			t.Fatalf("%s: error = %v, want %v", st.name, err, st.wantErr)
		}
		if got := h.safe.BreakerState("p"); got != st.wantState {
			t.Errorf("%s: breaker = %v, want %v", st.name, got, st.wantState)
		}
		if got := backendCalls(); got != st.wantCalls {
			t.Errorf("%s: back-end calls = %d, want %d", st.name, got, st.wantCalls)
		}
		if len(h.alerts) != st.wantAlerts {
			t.Errorf("%s: alerts = %d, want %d", st.name, len(h.alerts), st.wantAlerts)
		}
		if got := h.last(t).Outcome; got != st.wantOutcome {
			t.Errorf("%s: audit outcome = %q, want %q", st.name, got, st.wantOutcome)
		}
		if st.wantErr != nil && h.fake.Pool("p").Desired != 2 {
			t.Errorf("%s: capacity changed to %d while failing", st.name, h.fake.Pool("p").Desired)
		}
	}
	if a := h.alerts[0]; a.Pool != "p" || a.Backend != "fake" || a.ConsecutiveFailures != 3 ||
		!a.RetryAt.Equal(a.Time.Add(coolOff)) || !strings.Contains(a.LastError, "InvalidParameter") {
		t.Errorf("first alert = %+v", a)
	}
	if n := strings.Count(h.logs.String(), `"level":"ERROR","msg":"circuit breaker open`); n != 2 {
		t.Errorf("Error-level alert log lines = %d, want 2:\n%s", n, h.logs.String())
	}
	if got := metricValue(t, h.reg, "prewarm_actuator_circuit_opened_total", map[string]string{"pool": "p"}); got != 2 {
		t.Errorf("prewarm_actuator_circuit_opened_total = %v, want 2", got)
	}
	if got := metricValue(t, h.reg, "prewarm_actuator_circuit_state", map[string]string{"pool": "p"}); got != 0 {
		t.Errorf("prewarm_actuator_circuit_state = %v, want 0 (closed)", got)
	}
}

func TestSafeRateLimit(t *testing.T) {
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10, MinInterval: 2 * time.Minute}}, 1, 0, 0, nil)
	ctx := context.Background()
	steps := []struct {
		name     string
		advance  time.Duration
		desired  int
		wantErr  error
		wantSize int
	}{
		{"first change applied", 0, 4, nil, 4},
		{"change 1m later refused", time.Minute, 6, actuator.ErrRateLimited, 4},
		{"no-op within interval is fine", 0, 4, nil, 4},
		{"change 2m after the first applied", time.Minute, 6, nil, 6},
		{"refused again right after", time.Second, 2, actuator.ErrRateLimited, 6},
	}
	for _, st := range steps {
		h.clock.Advance(st.advance)
		err := h.safe.SetDesired(ctx, "p", st.desired, "test")
		if !errors.Is(err, st.wantErr) || (err != nil) != (st.wantErr != nil) {
			t.Fatalf("%s: error = %v, want %v", st.name, err, st.wantErr)
		}
		if got := h.fake.Pool("p").Desired; got != st.wantSize {
			t.Errorf("%s: size = %d, want %d", st.name, got, st.wantSize)
		}
	}
	if st := h.safe.BreakerState("p"); st != actuator.BreakerClosed {
		t.Errorf("rate limiting tripped the breaker: %v", st)
	}
}

func TestSafeUnknownPoolAndInvalidConfig(t *testing.T) {
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 1, 0, 0, nil)
	err := h.safe.SetDesired(context.Background(), "other", 3, "test")
	if !errors.Is(err, actuator.ErrUnknownPool) || !strings.Contains(err.Error(), `[p]`) {
		t.Errorf("unknown pool error = %v, want ErrUnknownPool listing [p]", err)
	}
	bad := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MinInstances: 5, MaxInstances: 2}}, 1, 0, 0, nil)
	err = bad.safe.SetDesired(context.Background(), "p", 3, "test")
	if !errors.Is(err, actuator.ErrInvalidConfig) || !strings.Contains(err.Error(), "max") {
		t.Errorf("invalid config error = %v, want ErrInvalidConfig naming max", err)
	}
	if n := len(h.fake.Calls()) + len(bad.fake.Calls()); n != 0 {
		t.Errorf("back-end called %d times for refused pools", n)
	}
}

func TestSafeWithoutCapacity(t *testing.T) {
	// A back-end that cannot report its size: Safe applies config bounds
	// and remembers what it set to skip repeated calls.
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10, MaxStep: 2}}, 1, 0, 0, nil)
	h.fake.OnCapacity = func(string) error { return actuator.ErrNotImplemented }
	ctx := context.Background()
	for i, want := range []struct{ desired, size, calls int }{{30, 10, 1}, {10, 10, 1}, {5, 8, 2}} {
		if err := h.safe.SetDesired(ctx, "p", want.desired, "test"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got := h.fake.Pool("p").Desired; got != want.size {
			t.Errorf("call %d: size = %d, want %d", i, got, want.size)
		}
		if got := len(h.fake.CallsOf(actuator.OpSetDesired)); got != want.calls {
			t.Errorf("call %d: back-end calls = %d, want %d", i, got, want.calls)
		}
	}
}

func TestSafeAuditLine(t *testing.T) {
	const fakeKey = "AKLTZmFrZUFjY2Vzc0tleUZvclRlc3Rz"
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
		o.Redactor = redact.New(fakeKey)
		o.Retry.MaxAttempts = 1
	})
	h.fake.OnScale = func(string, int, int) error {
		return fmt.Errorf("signature mismatch for AccessKey %s: %w", fakeKey, actuator.ErrRejected)
	}
	ctx := context.Background()
	err := h.safe.SetDesired(ctx, "p", 5, "forecast p95 needs 5 (key "+fakeKey+")")
	if !errors.Is(err, actuator.ErrRejected) {
		t.Fatalf("error = %v, want ErrRejected", err)
	}
	if strings.Contains(err.Error(), fakeKey) {
		t.Errorf("returned error leaks the access key: %v", err)
	}
	if strings.Contains(h.audit.String(), fakeKey) {
		t.Errorf("audit log leaks the access key: %s", h.audit.String())
	}
	if strings.Contains(h.logs.String(), fakeKey) {
		t.Errorf("log leaks the access key: %s", h.logs.String())
	}

	h.fake.OnScale = nil
	if err := h.safe.SetDesired(ctx, "p", 5, "forecast p95 needs 5"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(h.audit.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit lines = %d, want 2:\n%s", len(lines), h.audit.String())
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &fields); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"time": "2026-11-30T09:00:00Z", "op": "set_desired", "pool": "p", "backend": "fake",
		"from": 2.0, "to": 5.0, "requested": 5.0, "reason": "forecast p95 needs 5",
		"request_id": "tok-2", "attempts": 1.0, "outcome": "ok",
	}
	if fmt.Sprint(fields) != fmt.Sprint(want) {
		t.Errorf("audit line fields:\n got %v\nwant %v", fields, want)
	}
	var failed map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &failed); err != nil {
		t.Fatal(err)
	}
	if failed["outcome"] != "error" || !strings.Contains(fmt.Sprint(failed["error"]), "[REDACTED]") ||
		!strings.Contains(fmt.Sprint(failed["reason"]), "[REDACTED]") {
		t.Errorf("failed audit line = %v, want outcome error with redacted error and reason", failed)
	}
}

// reporter is a back-end that reports the provider's request ID.
type reporter struct{ *actuatortest.Fake }

func (r reporter) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	actuator.ReportRequestID(ctx, "20261130-provider-req")
	return r.Fake.SetDesired(ctx, pool, desired, reason)
}

func TestSafeProviderRequestID(t *testing.T) {
	var audit bytes.Buffer
	fake := actuatortest.New("fake").AddPool("p", 1, 0, 0)
	s := actuator.NewSafe(reporter{fake}, actuator.SafetyOptions{
		Pools:  []actuator.PoolConfig{{Name: "p", Backend: "fake", Limits: planner.Limits{MaxInstances: 4}}},
		Audit:  &audit,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err := s.SetDesired(context.Background(), "p", 3, "r"); err != nil {
		t.Fatal(err)
	}
	var rec actuator.AuditRecord
	if err := json.Unmarshal(audit.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ProviderRequestID != "20261130-provider-req" || len(rec.RequestID) != 32 {
		t.Errorf("provider_request_id/request_id = %q/%q", rec.ProviderRequestID, rec.RequestID)
	}
	if tok := fake.CallsOf(actuator.OpSetDesired)[0].Token; tok != rec.RequestID {
		t.Errorf("back-end saw token %q, audit has %q", tok, rec.RequestID)
	}
}

func TestSafePublishSchedule(t *testing.T) {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	tests := []struct {
		name      string
		steps     planner.Schedule
		wantErr   error
		wantSizes []int
	}{
		{name: "clamped and step limited", steps: planner.Schedule{{At: at(10), Desired: 8}, {At: at(20), Desired: 30}, {At: at(30), Desired: 0}},
			wantSizes: []int{5, 8, 5}},
		{name: "out of order refused", steps: planner.Schedule{{At: at(20), Desired: 2}, {At: at(10), Desired: 3}},
			wantErr: actuator.ErrInvalidDesired},
		{name: "zero time refused", steps: planner.Schedule{{Desired: 2}}, wantErr: actuator.ErrInvalidDesired},
		{name: "negative refused", steps: planner.Schedule{{At: at(1), Desired: -2}}, wantErr: actuator.ErrInvalidDesired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MinInstances: 1, MaxInstances: 9, MaxStep: 3}}, 2, 0, 0, nil)
			err := h.safe.PublishSchedule(context.Background(), "p", tt.steps)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			var sizes []int
			for _, st := range h.fake.Schedule("p") {
				sizes = append(sizes, st.Desired)
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.wantSizes) {
				t.Errorf("published sizes = %v, want %v", sizes, tt.wantSizes)
			}
			if err == nil { // republishing the same schedule is a no-op
				if err := h.safe.PublishSchedule(context.Background(), "p", tt.steps); err != nil {
					t.Fatal(err)
				}
				if n := len(h.fake.CallsOf(actuator.OpPublishSchedule)); n != 1 {
					t.Errorf("publish calls = %d after republishing, want 1", n)
				}
				if h.last(t).Outcome != actuator.OutcomeNoop {
					t.Errorf("republish outcome = %q, want noop", h.last(t).Outcome)
				}
			}
		})
	}
}

func TestSafeRelease(t *testing.T) {
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 1, 0, 0, nil)
	attempts := 0
	h.fake.OnRelease = func(id, reason string) error {
		attempts++
		if attempts == 1 {
			return actuator.ErrThrottled
		}
		return nil
	}
	if err := h.safe.Release(context.Background(), "i-abc", "training finished"); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Released(); fmt.Sprint(got) != "[i-abc]" {
		t.Errorf("released = %v", got)
	}
	rec := h.last(t)
	if rec.Op != "release" || rec.Instance != "i-abc" || rec.Attempts != 2 || rec.Outcome != "ok" {
		t.Errorf("audit = %+v", rec)
	}
	if err := h.safe.Release(context.Background(), "", "x"); !errors.Is(err, actuator.ErrInvalidDesired) {
		t.Errorf("empty instance: error = %v, want ErrInvalidDesired", err)
	}
}

func TestSafeConcurrent(t *testing.T) {
	// Run with -race: concurrent changes to one pool are serialised, and
	// the back-end never sees a value outside the bounds.
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10, MaxStep: 2}}, 0, 0, 0, nil)
	var mu sync.Mutex
	h.fake.OnScale = func(pool string, from, to int) error {
		mu.Lock()
		defer mu.Unlock()
		if to < 0 || to > 10 || to-from > 2 || from-to > 2 {
			t.Errorf("unsafe change %d → %d", from, to)
		}
		return nil
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				_ = h.safe.SetDesired(context.Background(), "p", (i*7+j*3)%15, "race")
				_ = h.safe.Release(context.Background(), "i-x", "race")
			}
		}()
	}
	wg.Wait()
}

func TestSafeRateLimitCountsFromDecision(t *testing.T) {
	// A change whose retries took time does not push the next allowed
	// change later: a service ticking every min_interval is not refused.
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10, MinInterval: time.Minute}}, 1, 0, 0, func(o *actuator.SafetyOptions) {
		o.Retry = actuator.RetryPolicy{BaseDelay: 10 * time.Second, MaxDelay: 10 * time.Second}
	})
	first := true
	h.fake.OnScale = func(string, int, int) error {
		if first {
			first = false
			return actuator.ErrTransient // retried after 5 s (jitter 0.5)
		}
		return nil
	}
	ctx := context.Background()
	if err := h.safe.SetDesired(ctx, "p", 3, "tick 1"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute - 5*time.Second) // the next tick, one minute after the first
	if err := h.safe.SetDesired(ctx, "p", 4, "tick 2"); err != nil {
		t.Errorf("next tick: %v, want applied", err)
	}
}

// failingWriter fails every write while full, as a file on a full disk.
type failingWriter struct {
	full bool
	buf  bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.full {
		return 0, errors.New("no space left on device")
	}
	return w.buf.Write(p)
}

// With the audit log failing, a resize is held rather than made without
// a record: the change whose record failed is logged in full, every later
// one is refused with ErrAuditUnavailable (the back-end not called, the
// metric counting it) until the audit log takes a record again.
func TestResizeHeldWhileTheAuditLogFails(t *testing.T) {
	w := &failingWriter{full: true}
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 50}}, 2, 1, 50, func(o *actuator.SafetyOptions) {
		o.Audit = w
	})
	ctx := context.Background()
	if _, err := h.safe.Resize(ctx, "p", 4, "first"); err != nil {
		t.Fatalf("the change whose record fails: %v", err)
	}
	if !strings.Contains(h.logs.String(), `"record":"{\"time\"`) || !strings.Contains(h.logs.String(), "no space left") {
		t.Errorf("the unrecorded change is not in the process log:\n%s", h.logs.String())
	}
	calls := len(h.fake.CallsOf(actuator.OpSetDesired))
	for i := range 3 {
		h.clock.Advance(time.Hour)
		res, err := h.safe.Resize(ctx, "p", 8+i, "later")
		if !errors.Is(err, actuator.ErrAuditUnavailable) || res.Outcome != actuator.OutcomeAuditUnavailable {
			t.Fatalf("resize %d with the audit log failing: %+v, %v; want it held with ErrAuditUnavailable", i, res, err)
		}
	}
	if n := len(h.fake.CallsOf(actuator.OpSetDesired)); n != calls {
		t.Errorf("%d back-end calls while held, want none", n-calls)
	}
	if got := metricValue(t, h.reg, "prewarm_actuator_calls_total",
		map[string]string{"backend": "fake", "op": actuator.OpSetDesired, "outcome": actuator.OutcomeAuditUnavailable}); got != 3 {
		t.Errorf("calls counted audit_unavailable: %v, want 3", got)
	}
	// Space again: the next refusal's record is written, and the resize
	// after it goes out, on record.
	w.full = false
	h.clock.Advance(time.Hour)
	if _, err := h.safe.Resize(ctx, "p", 10, "space again"); !errors.Is(err, actuator.ErrAuditUnavailable) {
		t.Fatalf("the resize that finds the audit log writable again: %v, want still held", err)
	}
	h.clock.Advance(time.Hour)
	if res, err := h.safe.Resize(ctx, "p", 6, "recovered"); err != nil || res.Outcome != actuator.OutcomeOK {
		t.Fatalf("after the audit log recovered: %+v, %v", res, err)
	}
	if !strings.Contains(w.buf.String(), `"outcome":"audit_unavailable"`) || !strings.Contains(w.buf.String(), `"reason":"recovered"`) {
		t.Errorf("audit log after recovery:\n%s", w.buf.String())
	}
}
