package actuator_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/planner"
)

// mixer is a Fake that runs a spot mix: it records every SetSpot attempt
// (with its idempotency token) and fails the next attempts with fail.
type mixer struct {
	*actuatortest.Fake
	mu     sync.Mutex
	mixes  []planner.Spot
	tokens []string
	fail   []error
}

func (m *mixer) SetSpot(ctx context.Context, pool string, spot planner.Spot, reason string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	token, _ := actuator.IdempotencyToken(ctx)
	m.mixes, m.tokens = append(m.mixes, spot), append(m.tokens, token)
	if len(m.fail) > 0 {
		err := m.fail[0]
		m.fail = m.fail[1:]
		return fmt.Errorf("provider said no: %w", err)
	}
	return nil
}

func (m *mixer) attempts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mixes)
}

// spotHarness is a harness whose Safe wraps a mixer around its Fake (nil
// mixer: the Fake alone, which runs no spot mix), for pool "p" of max 10.
func spotHarness(t *testing.T, withMixer bool, tweak func(*actuator.SafetyOptions)) (*harness, *mixer) {
	t.Helper()
	var opts actuator.SafetyOptions
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
		if tweak != nil {
			tweak(o)
		}
		opts = *o
	})
	if !withMixer {
		return h, nil
	}
	m := &mixer{Fake: h.fake}
	h.safe = actuator.NewSafe(m, opts)
	return h, m
}

// SetSpot applies a valid mix once, calls nothing for a repeat of the mix
// last applied, refuses a mix out of range before the back-end sees it,
// naming the key, and says so when the back-end runs no spot mix.
func TestSafeSetSpot(t *testing.T) {
	h, m := spotHarness(t, true, nil)
	plain, _ := spotHarness(t, false, nil)
	ctx := context.Background()
	steps := []struct {
		name        string
		h           *harness
		spot        planner.Spot
		wantErr     error
		wantCalls   int    // the mixer's attempts so far
		wantOutcome string // the last audit record's; "" when none is written
		wantReason  string // in the last audit record's reason, or in the error and the record's error when refused
	}{
		{"a mix is applied", h, planner.Spot{Share: 0.6, BaseOnDemand: 2}, nil, 1, "ok", "spot.share 0.6, spot.base_on_demand 2, spot.fallback on_demand: plan"},
		{"a repeat calls nothing", h, planner.Spot{Share: 0.6, BaseOnDemand: 2, Fallback: planner.SpotFallbackOnDemand}, nil, 1, "", ""},
		{"a new base is applied", h, planner.Spot{Share: 0.6, BaseOnDemand: 3}, nil, 2, "ok", "spot.base_on_demand 3"},
		{"a new fallback is applied", h, planner.Spot{Share: 0.6, BaseOnDemand: 3, Fallback: planner.SpotFallbackNone}, nil, 3, "ok", "spot.fallback none"},
		{"no spot tier is a mix too", h, planner.Spot{}, nil, 4, "ok", "spot.share 0,"},
		{"share above 1", h, planner.Spot{Share: 1.5}, actuator.ErrInvalidDesired, 4, "refused", "spot.share 1.5 is outside [0, 1]"},
		{"negative share", h, planner.Spot{Share: -0.5}, actuator.ErrInvalidDesired, 4, "refused", "spot.share -0.5 is outside [0, 1]"},
		{"share not a number", h, planner.Spot{Share: math.NaN()}, actuator.ErrInvalidDesired, 4, "refused", "spot.share NaN is outside [0, 1]"},
		{"base above max", h, planner.Spot{Share: 0.5, BaseOnDemand: 11}, actuator.ErrInvalidDesired, 4, "refused", "spot.base_on_demand 11 is outside [0, max 10]"},
		{"negative base", h, planner.Spot{Share: 0.5, BaseOnDemand: -1}, actuator.ErrInvalidDesired, 4, "refused", "spot.base_on_demand -1 is outside [0, max 10]"},
		{"unknown fallback", h, planner.Spot{Share: 0.5, Fallback: "spot"}, actuator.ErrInvalidDesired, 4, "refused", `spot.fallback: "spot" is not a fallback`},
		{"a back-end without a spot mix", plain, planner.Spot{Share: 0.5}, actuator.ErrNotImplemented, 4, "not_implemented", "back-end fake runs no spot mix"},
	}
	for _, st := range steps {
		before := len(st.h.records(t))
		err := st.h.safe.SetSpot(ctx, "p", st.spot, "plan")
		if !errors.Is(err, st.wantErr) || (err != nil) != (st.wantErr != nil) {
			t.Fatalf("%s: error %v, want %v", st.name, err, st.wantErr)
		}
		if got := m.attempts(); got != st.wantCalls {
			t.Errorf("%s: the back-end was called %d times, want %d", st.name, got, st.wantCalls)
		}
		recs := st.h.records(t)
		switch {
		case st.wantOutcome == "" && len(recs) != before:
			t.Errorf("%s: audit record %+v written, want none", st.name, recs[len(recs)-1])
		case st.wantOutcome != "":
			rec := st.h.last(t)
			if len(recs) != before+1 || rec.Op != actuator.OpSetSpot || rec.Outcome != st.wantOutcome || !strings.Contains(rec.Reason+rec.Error, st.wantReason) ||
				(err != nil && !strings.Contains(err.Error(), st.wantReason)) {
				t.Errorf("%s: audit record %+v, want one set_spot record, outcome %s, naming %q", st.name, rec, st.wantOutcome, st.wantReason)
			}
		}
	}
	if last := m.mixes[len(m.mixes)-1]; last != (planner.Spot{Fallback: planner.SpotFallbackOnDemand}) {
		t.Errorf("the back-end was last given %+v, want no spot tier with its fallback spelt out", last)
	}
}

// SetSpot retries what may pass with one idempotency token, and a pool
// whose back-end keeps failing opens its circuit breaker, after which the
// back-end is not called until the cool-off is over.
func TestSafeSetSpotRetriesAndBreaks(t *testing.T) {
	h, m := spotHarness(t, true, func(o *actuator.SafetyOptions) {
		o.Breaker = actuator.BreakerPolicy{FailureThreshold: 2, CoolOff: 5 * time.Minute}
	})
	ctx := context.Background()
	m.fail = []error{actuator.ErrThrottled, actuator.ErrTransient}
	if err := h.safe.SetSpot(ctx, "p", planner.Spot{Share: 0.5}, "plan"); err != nil {
		t.Fatalf("throttled, then transient, then success: %v", err)
	}
	if rec := h.last(t); rec.Attempts != 3 || rec.Outcome != "ok" || m.tokens[0] != m.tokens[2] || m.tokens[0] == "" {
		t.Errorf("audit %+v, tokens %v: want 3 attempts under one token, ok", rec, m.tokens)
	}
	steps := []struct {
		name      string
		share     float64
		wantErr   error
		wantCalls int
		wantState actuator.BreakerState
	}{
		{"rejected once", 0.6, actuator.ErrRejected, 4, actuator.BreakerClosed},
		{"rejected twice opens", 0.7, actuator.ErrRejected, 5, actuator.BreakerOpen},
		{"open: the back-end is not called", 0.8, actuator.ErrCircuitOpen, 5, actuator.BreakerOpen},
	}
	for _, st := range steps {
		m.fail = []error{actuator.ErrRejected}
		err := h.safe.SetSpot(ctx, "p", planner.Spot{Share: st.share}, "plan")
		if !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: error %v, want %v", st.name, err, st.wantErr)
		}
		if got := m.attempts(); got != st.wantCalls {
			t.Errorf("%s: %d back-end calls, want %d", st.name, got, st.wantCalls)
		}
		if got := h.safe.BreakerState("p"); got != st.wantState {
			t.Errorf("%s: breaker %v, want %v", st.name, got, st.wantState)
		}
	}
	h.clock.Advance(5 * time.Minute)
	m.fail = nil
	if err := h.safe.SetSpot(ctx, "p", planner.Spot{Share: 0.8}, "plan"); err != nil || h.safe.BreakerState("p") != actuator.BreakerClosed {
		t.Errorf("after the cool-off: %v, breaker %v; want the mix applied and the breaker closed", err, h.safe.BreakerState("p"))
	}
}
