package actuator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// What Safe remembers survives a restart through Persist and Restore: a new
// Safe restored from the saved memory neither repeats nor accelerates a
// change within min_interval, and steps from the last size applied.
func TestMemorySurvivesARestart(t *testing.T) {
	var saved []actuator.Memory
	persist := func(o *actuator.SafetyOptions) {
		o.Persist = func(pool string, m actuator.Memory) error { saved = append(saved, m); return nil }
	}
	cfg := actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 40, MaxStep: 4, MinInterval: 10 * time.Minute}}
	h := newHarness(t, cfg, 1, 0, 0, persist)
	ctx := context.Background()
	res, err := h.safe.Resize(ctx, "p", 30, "floor")
	if err != nil || res.To != 5 || res.LimitedBy != "max_step" || res.Outcome != actuator.OutcomeOK || res.RequestID != "tok-1" {
		t.Fatalf("Resize = %+v, %v", res, err)
	}
	// Written ahead (pending), then confirmed.
	if len(saved) != 2 || !saved[0].LastChange.Pending || saved[1].LastChange.Pending ||
		saved[1].LastChange != (actuator.Change{At: t0, From: 1, To: 5, RequestID: "tok-1"}) {
		t.Fatalf("persisted %+v", saved)
	}

	// The process dies; a new one starts a minute later with the memory.
	restarted := newHarness(t, cfg, 5, 0, 0, nil)
	restarted.clock.Advance(time.Minute)
	if err := restarted.safe.Restore("p", saved[len(saved)-1]); err != nil {
		t.Fatal(err)
	}
	res, err = restarted.safe.Resize(ctx, "p", 30, "floor")
	if !errors.Is(err, actuator.ErrRateLimited) || res.Outcome != actuator.OutcomeRateLimited || !res.NextChangeAt.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("after restart: %+v, %v; want rate limited until %v", res, err, t0.Add(10*time.Minute))
	}
	if calls := restarted.fake.CallsOf(actuator.OpSetDesired); len(calls) != 0 {
		t.Errorf("restarted Safe changed the pool: %+v", calls)
	}
	// Without Restore, a fresh Safe steps again at once.
	fresh := newHarness(t, cfg, 5, 0, 0, nil)
	if res, err := fresh.safe.Resize(ctx, "p", 30, "floor"); err != nil || res.To != 9 {
		t.Errorf("fresh Safe = %+v, %v; want the step to 9 the restore prevents", res, err)
	}
}

// A crash between the write-ahead and the back-end's answer leaves a
// pending change, which a restart counts as made.
func TestPendingChangeCountsAsMade(t *testing.T) {
	cfg := actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 40, MaxStep: 4, MinInterval: 10 * time.Minute}}
	h := newHarness(t, cfg, 1, 0, 0, nil)
	h.clock.Advance(time.Minute)
	if err := h.safe.Restore("p", actuator.Memory{LastChange: actuator.Change{At: t0, From: 1, To: 5, RequestID: "x", Pending: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.safe.Resize(context.Background(), "p", 30, "floor"); !errors.Is(err, actuator.ErrRateLimited) {
		t.Errorf("err = %v, want rate limited by the pending change", err)
	}
}

// A change that cannot be recorded is not made; a failed change is taken
// back from the record.
func TestPersistFailures(t *testing.T) {
	t.Run("write-ahead fails", func(t *testing.T) {
		h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
			o.Persist = func(string, actuator.Memory) error { return errors.New("disk full") }
		})
		_, err := h.safe.Resize(context.Background(), "p", 5, "x")
		if !errors.Is(err, actuator.ErrNotPersisted) || len(h.fake.CallsOf(actuator.OpSetDesired)) != 0 {
			t.Errorf("err = %v, calls %v; want nothing sent", err, h.fake.CallsOf(actuator.OpSetDesired))
		}
		if m, _ := h.safe.Memory("p"); !m.LastChange.At.IsZero() {
			t.Errorf("memory = %+v, want no change remembered", m)
		}
	})
	t.Run("back-end fails", func(t *testing.T) {
		var last actuator.Memory
		h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10, MinInterval: time.Hour}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
			o.Persist = func(_ string, m actuator.Memory) error { last = m; return nil }
			o.Retry.MaxAttempts = 1
		})
		h.fake.OnScale = func(string, int, int) error { return actuator.ErrRejected }
		if _, err := h.safe.Resize(context.Background(), "p", 5, "x"); !errors.Is(err, actuator.ErrRejected) {
			t.Fatalf("err = %v", err)
		}
		if !last.LastChange.At.IsZero() {
			t.Errorf("persisted %+v after a failed change, want it taken back", last)
		}
		h.fake.OnScale = nil
		if _, err := h.safe.Resize(context.Background(), "p", 5, "x"); err != nil {
			t.Errorf("retry after a failure: %v (a failed change must not start min_interval)", err)
		}
	})
}

// Preview says what a change would do without calling the back-end or
// writing an audit line.
func TestPreview(t *testing.T) {
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MinInstances: 1, MaxInstances: 40, MaxStep: 4, MinInterval: 10 * time.Minute}}, 1, 0, 0, nil)
	tests := []struct {
		name    string
		capa    actuator.Capacity
		known   bool
		desired int
		want    actuator.Result
	}{
		{"stepped", actuator.Capacity{Current: 1, Desired: 1}, true, 30, actuator.Result{From: 1, FromKnown: true, To: 5, LimitedBy: "max_step", Outcome: actuator.OutcomeOK}},
		{"above max", actuator.Capacity{Current: 38, Desired: 38}, true, 50, actuator.Result{From: 38, FromKnown: true, To: 40, LimitedBy: "max", Outcome: actuator.OutcomeOK}},
		{"already there", actuator.Capacity{Current: 7, Desired: 7}, true, 7, actuator.Result{From: 7, FromKnown: true, To: 7, Outcome: actuator.OutcomeNoop}},
		{"size unknown", actuator.Capacity{}, false, 30, actuator.Result{To: 30, Outcome: actuator.OutcomeOK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.safe.Preview("p", tt.capa, tt.known, tt.desired)
			if err != nil || got != tt.want {
				t.Errorf("Preview = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if err := h.safe.Restore("p", actuator.Memory{LastChange: actuator.Change{At: t0, From: 1, To: 5}}); err != nil {
		t.Fatal(err)
	}
	got, err := h.safe.Preview("p", actuator.Capacity{Current: 5, Desired: 5}, true, 30)
	if err != nil || got.Outcome != actuator.OutcomeRateLimited || got.To != 9 || !got.NextChangeAt.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("rate-limited Preview = %+v, %v", got, err)
	}
	if n := len(h.fake.Calls()); n != 0 || h.audit.Len() != 0 {
		t.Errorf("Preview made %d back-end calls and wrote %q", n, h.audit.String())
	}
}
