package actuator_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/redact"
)

// hanging is a back-end whose first SetDesired attempts hang until their
// context ends and then fail with a flat error that does not wrap
// context.DeadlineExceeded, as many SDKs report a timed-out request.
type hanging struct {
	*actuatortest.Fake
	mu    sync.Mutex
	hangs int
}

func (h *hanging) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	h.mu.Lock()
	hang := h.hangs > 0
	h.hangs--
	h.mu.Unlock()
	if hang {
		<-ctx.Done()
		return errors.New("RequestError: send request failed: read tcp: i/o timeout")
	}
	return h.Fake.SetDesired(ctx, pool, desired, reason)
}

func TestSafeAttemptTimeoutRetried(t *testing.T) {
	fake := actuatortest.New("fake").AddPool("p", 1, 0, 0)
	be := &hanging{Fake: fake, hangs: 1}
	clock := actuatortest.NewClock(t0)
	s := actuator.NewSafe(be, actuator.SafetyOptions{
		Pools:  []actuator.PoolConfig{{Name: "p", Backend: "fake", Limits: planner.Limits{MaxInstances: 10}}},
		Retry:  actuator.RetryPolicy{AttemptTimeout: 20 * time.Millisecond},
		Sleep:  clock.Sleep,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err := s.SetDesired(context.Background(), "p", 4, "test"); err != nil {
		t.Fatalf("error = %v, want the timed-out attempt retried", err)
	}
	if got := fake.Pool("p").Desired; got != 4 {
		t.Errorf("size = %d, want 4", got)
	}
	if n := len(clock.Sleeps()); n != 1 {
		t.Errorf("backoff sleeps = %d, want 1", n)
	}
}

func TestSafeBackoffBounded(t *testing.T) {
	// A large base delay must not overflow into small or negative waits:
	// every sleep is within [0, MaxDelay) and they never shrink.
	const maxDelay = 3 * time.Hour
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 1, 0, 0, func(o *actuator.SafetyOptions) {
		o.Retry = actuator.RetryPolicy{MaxAttempts: 40, BaseDelay: time.Hour, MaxDelay: maxDelay}
		o.Jitter = func() float64 { return 0.999 }
	})
	h.fake.OnScale = func(string, int, int) error { return actuator.ErrThrottled }
	_ = h.safe.SetDesired(context.Background(), "p", 3, "test")
	sleeps := h.clock.Sleeps()
	if len(sleeps) != 39 {
		t.Fatalf("sleeps = %d, want 39", len(sleeps))
	}
	for i, d := range sleeps {
		if d < 0 || d >= maxDelay || (i > 0 && d < sleeps[i-1]) {
			t.Fatalf("sleep %d = %v (previous %v): want non-decreasing within [0, %v)", i, d, sleeps[max(i-1, 0)], maxDelay)
		}
	}
}

func TestSafeBreakerConcurrentReleases(t *testing.T) {
	const coolOff = time.Minute
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 1, 0, 0, func(o *actuator.SafetyOptions) {
		o.Retry.MaxAttempts = 1
		o.Breaker = actuator.BreakerPolicy{FailureThreshold: 2, CoolOff: coolOff}
	})
	// Every call is admitted while the breaker is closed, then they all
	// fail: the breaker opens once, with one alert.
	start := make(chan struct{})
	var inFlight sync.WaitGroup
	inFlight.Add(8)
	h.fake.OnRelease = func(string, string) error {
		inFlight.Done()
		<-start
		return fmt.Errorf("InternalError: %w", actuator.ErrRejected)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = h.safe.Release(context.Background(), fmt.Sprintf("i-%d", i), "idle")
		}()
	}
	inFlight.Wait()
	close(start)
	wg.Wait()
	if alerts := len(h.alerts); alerts != 1 {
		t.Errorf("alerts = %d after 8 concurrent failures, want 1 (one trip)", alerts)
	}
	if got := metricValue(t, h.reg, "prewarm_actuator_circuit_opened_total", map[string]string{"pool": ""}); got != 1 {
		t.Errorf("prewarm_actuator_circuit_opened_total = %v, want 1", got)
	}

	// After the cool-off, concurrent calls: exactly one trial reaches the
	// back-end, the others are refused while it is in flight.
	h.clock.Advance(coolOff)
	before := len(h.fake.CallsOf(actuator.OpRelease))
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	h.fake.OnRelease = func(string, string) error {
		entered <- struct{}{}
		<-release
		return nil
	}
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- h.safe.Release(context.Background(), fmt.Sprintf("j-%d", i), "idle")
		}()
		if i == 0 {
			<-entered // the trial is in flight before the others arrive
		}
	}
	for range 7 {
		if err := <-errs; !errors.Is(err, actuator.ErrCircuitOpen) {
			t.Errorf("concurrent call during the half-open trial: %v, want ErrCircuitOpen", err)
		}
	}
	close(release)
	wg.Wait()
	if err := <-errs; err != nil {
		t.Errorf("trial: %v", err)
	}
	if n := len(h.fake.CallsOf(actuator.OpRelease)) - before; n != 1 {
		t.Errorf("back-end calls in half-open = %d, want 1", n)
	}
	if st := h.safe.BreakerState(""); st != actuator.BreakerClosed {
		t.Errorf("breaker after a successful trial = %v, want closed", st)
	}
}

func TestSafeHalfOpenNoopClosesMetric(t *testing.T) {
	const coolOff = time.Minute
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
		o.Retry.MaxAttempts = 1
		o.Breaker = actuator.BreakerPolicy{FailureThreshold: 1, CoolOff: coolOff}
	})
	h.fake.OnScale = func(string, int, int) error { return actuator.ErrRejected }
	if err := h.safe.SetDesired(context.Background(), "p", 5, "up"); !errors.Is(err, actuator.ErrRejected) {
		t.Fatalf("error = %v", err)
	}
	if got := metricValue(t, h.reg, "prewarm_actuator_circuit_state", map[string]string{"pool": "p"}); got != 2 {
		t.Fatalf("circuit_state = %v, want 2 (open)", got)
	}
	h.clock.Advance(coolOff)
	// The trial finds nothing to change: the read worked, the breaker
	// closes, and the gauge says so.
	if err := h.safe.SetDesired(context.Background(), "p", 2, "same"); err != nil {
		t.Fatal(err)
	}
	if st := h.safe.BreakerState("p"); st != actuator.BreakerClosed {
		t.Errorf("breaker = %v, want closed", st)
	}
	if got := metricValue(t, h.reg, "prewarm_actuator_circuit_state", map[string]string{"pool": "p"}); got != 0 {
		t.Errorf("circuit_state = %v after the breaker closed, want 0", got)
	}
}

func TestSafeRefusedAuditRecordsRequest(t *testing.T) {
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MinInstances: 0, MaxInstances: 4}}, 6, 5, 0, nil)
	tests := []struct {
		name      string
		desired   int
		wantFrom  *int
		wantError error
	}{
		{name: "negative", desired: -3, wantError: actuator.ErrInvalidDesired},
		{name: "bounds conflict", desired: 3, wantFrom: ptr(6), wantError: actuator.ErrInvalidConfig},
	}
	for _, tt := range tests {
		err := h.safe.SetDesired(context.Background(), "p", tt.desired, "why")
		if !errors.Is(err, tt.wantError) {
			t.Fatalf("%s: error = %v, want %v", tt.name, err, tt.wantError)
		}
		rec := h.last(t)
		if rec.Outcome != actuator.OutcomeRefused || !eqPtr(rec.Requested, ptr(tt.desired)) ||
			!eqPtr(rec.From, tt.wantFrom) || rec.Reason != "why" || rec.Error == "" {
			t.Errorf("%s: audit = %+v, want refused with requested %d, from %v, reason and error", tt.name, rec,
				tt.desired, deref(tt.wantFrom))
		}
	}
}

func TestSafeRedactsEscapedSecrets(t *testing.T) {
	const secret = "c2VjcmV0/S2V5+Zm9yVGVzdHM=" // base64-like: '/', '+', '='
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
		o.Redactor = redact.New(secret)
		o.Retry.MaxAttempts = 1
	})
	h.fake.OnScale = func(string, int, int) error {
		return fmt.Errorf("POST https://open.volcengineapi.com/?SecretKey=%s&Action=X: %w",
			url.QueryEscape(secret), actuator.ErrRejected)
	}
	err := h.safe.SetDesired(context.Background(), "p", 5, "up")
	for what, text := range map[string]string{"error": fmt.Sprint(err), "audit": h.audit.String(), "log": h.logs.String()} {
		if strings.Contains(text, url.QueryEscape(secret)) || strings.Contains(text, secret) {
			t.Errorf("%s leaks the URL-escaped secret: %s", what, text)
		}
	}
}
