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

// settler is a Fake whose warm tier settles over several calls: it
// records every SetWarm and SettleWarm, each settling reports changed as
// the next of changes says (false when none is left), and both fail the
// next attempts with fail.
type settler struct {
	*actuatortest.Fake
	mu              sync.Mutex
	sets, settles   int
	changes         []bool
	fail            []error
	settleAttempted int
}

func (s *settler) SetWarm(ctx context.Context, pool string, warm int, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sets++
	return s.next()
}

func (s *settler) SettleWarm(ctx context.Context, pool string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleAttempted++
	if err := s.next(); err != nil {
		return false, err
	}
	s.settles++
	changed := len(s.changes) > 0 && s.changes[0]
	if len(s.changes) > 0 {
		s.changes = s.changes[1:]
	}
	return changed, nil
}

// next is the next queued failure, nil when none. s.mu held.
func (s *settler) next() error {
	if len(s.fail) == 0 {
		return nil
	}
	err := s.fail[0]
	s.fail = s.fail[1:]
	return fmt.Errorf("provider said no: %w", err)
}

// SetWarm on a WarmSettler: the first size and a new one are SetWarm
// calls; a repeat settles the tier (SettleWarm) instead of calling
// nothing, audited only when the settling changed the pool or failed; a
// failing settling is retried and counts towards the circuit breaker,
// and while the breaker is open a repeat settles nothing and reports
// nothing (the resize reports the open breaker).
func TestSafeSetWarmSettles(t *testing.T) {
	var opts actuator.SafetyOptions
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
		o.Breaker = actuator.BreakerPolicy{FailureThreshold: 2, CoolOff: 5 * time.Minute}
		o.Retry = actuator.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Second, MaxDelay: time.Second}
		opts = *o
	})
	s := &settler{Fake: h.fake}
	h.safe = actuator.NewSafe(s, opts)
	ctx := context.Background()
	steps := []struct {
		name                   string
		warm                   int
		changes                []bool
		fail                   []error
		wantErr                error
		wantSets, wantSettles  int
		wantAudit              string // the reason of the one audit record written, "" for none
		wantBreaker            actuator.BreakerState
		wantSettleAttemptsUpTo int
	}{
		{"the first size is set", 3, nil, nil, nil, 1, 0, "plan", actuator.BreakerClosed, 0},
		{"a repeat that changes nothing", 3, []bool{false}, nil, nil, 1, 1, "", actuator.BreakerClosed, 1},
		{"a repeat that recycles", 3, []bool{true}, nil, nil, 1, 2, "settling what was applied: plan", actuator.BreakerClosed, 2},
		{"a settling retried once", 3, []bool{true}, []error{actuator.ErrTransient}, nil, 1, 3, "settling what was applied: plan", actuator.BreakerClosed, 4},
		{"a settling that fails", 3, nil, []error{actuator.ErrRejected}, actuator.ErrRejected, 1, 3, "settling what was applied: plan", actuator.BreakerClosed, 5},
		{"a second failure opens the breaker", 3, nil, []error{actuator.ErrRejected}, actuator.ErrRejected, 1, 3, "settling what was applied: plan", actuator.BreakerOpen, 6},
		{"open: nothing is called or reported", 3, []bool{true}, nil, nil, 1, 3, "", actuator.BreakerOpen, 6},
		{"a new size is set, not settled", 4, nil, nil, actuator.ErrCircuitOpen, 1, 3, "plan", actuator.BreakerOpen, 6},
	}
	for _, st := range steps {
		s.mu.Lock()
		s.changes, s.fail = st.changes, st.fail
		s.mu.Unlock()
		before := len(h.records(t))
		err := h.safe.SetWarm(ctx, "p", st.warm, "plan")
		if !errors.Is(err, st.wantErr) || (err != nil) != (st.wantErr != nil) {
			t.Fatalf("%s: error %v, want %v", st.name, err, st.wantErr)
		}
		s.mu.Lock()
		sets, settles, attempts := s.sets, s.settles, s.settleAttempted
		s.mu.Unlock()
		if sets != st.wantSets || settles != st.wantSettles || attempts != st.wantSettleAttemptsUpTo {
			t.Errorf("%s: %d SetWarm, %d settlings (%d attempts); want %d, %d (%d)", st.name, sets, settles, attempts,
				st.wantSets, st.wantSettles, st.wantSettleAttemptsUpTo)
		}
		recs := h.records(t)
		switch {
		case st.wantAudit == "" && len(recs) != before:
			t.Errorf("%s: audit record %+v written, want none", st.name, recs[len(recs)-1])
		case st.wantAudit != "" && (len(recs) != before+1 || recs[len(recs)-1].Op != actuator.OpSetWarm || !strings.Contains(recs[len(recs)-1].Reason, st.wantAudit)):
			t.Errorf("%s: audit records %+v, want one set_warm record naming %q", st.name, recs[before:], st.wantAudit)
		}
		if got := h.safe.BreakerState("p"); got != st.wantBreaker {
			t.Errorf("%s: breaker %v, want %v", st.name, got, st.wantBreaker)
		}
	}
}
