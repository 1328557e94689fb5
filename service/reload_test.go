package service

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store"
)

// Reload adds and drops pools and gives a changed pool its new settings at
// its next decision, keeping its memory: min_interval still counts from
// the change made before the reload.
func TestReload(t *testing.T) {
	r := newRig(t, 1, floor30(poolspec.ModeActive))
	r.fake.AddPool("new", 2, 0, 0)
	r.tickWithDemand(t, 5)
	if got := r.fake.Pool(testPool).Desired; got != 5 {
		t.Fatalf("before the reload: %d, want 5", got)
	}
	file := poolspec.DefaultFile()
	file.Pools = []poolspec.Pool{
		testSpec(testPool, func(p *poolspec.Pool) {
			floor30(poolspec.ModeActive)(p)
			p.Fleet.MaxStep = 10
			p.Fleet.MaxInstances = 45
		}),
		testSpec("new", nil),
	}
	if err := r.svc.Reload(context.Background(), &file); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(time.Minute)
	newDemand := func() {
		r.db.Write(context.Background(), []store.Point{{Measurement: "requests_rps", Tags: map[string]string{"pool": "new"}, Value: 5, Time: r.clock.Now().Add(-time.Second)}})
	}
	newDemand()
	r.tickWithDemand(t, 5)
	st := r.svc.Status()
	if len(st) != 2 || st[0].Name != testPool || st[1].Name != "new" {
		t.Fatalf("pools after the reload: %+v", st)
	}
	// The new max_step (10) is in force, and so is the old change's
	// min_interval: the step to 15 waits.
	if st[0].Outcome != OutcomeRateLimited || st[0].Desired != 5 || !st[0].NextChangeAt.Equal(st[0].Applied.At.Add(10*time.Minute)) {
		t.Errorf("reloaded pool %+v, want rate limited by the change before the reload", st[0])
	}
	r.clock.Advance(10 * time.Minute)
	newDemand()
	r.tickWithDemand(t, 5)
	if got := r.fake.Pool(testPool).Desired; got != 15 {
		t.Errorf("after min_interval: %d, want 5 + the new max_step 10", got)
	}
}

// A reload whose pool cannot be built changes nothing.
func TestReloadRefusesWhatCannotBeBuilt(t *testing.T) {
	r := newRig(t, 1, floor30(poolspec.ModeActive))
	r.svc.deps.Backend = func(_ context.Context, pc actuator.PoolConfig) (actuator.Actuator, error) {
		if pc.Name == "broken" {
			return nil, errors.New("options.region: required")
		}
		return r.fake, nil
	}
	file := poolspec.DefaultFile()
	file.Interval = 5 * time.Minute
	file.Pools = []poolspec.Pool{testSpec(testPool, nil), testSpec("broken", nil)}
	err := r.svc.Reload(context.Background(), &file)
	if err == nil || !strings.Contains(err.Error(), `pool "broken": options.region: required`) {
		t.Fatalf("Reload = %v", err)
	}
	if got := r.svc.Status(); len(got) != 1 || r.svc.Interval() != time.Minute {
		t.Errorf("after a refused reload: %d pools, interval %v; want the running configuration", len(got), r.svc.Interval())
	}
}

// A reload refits every pool at its next decision, whatever its refit
// schedule: it is how an operator tells a running service that history
// was imported.
func TestReloadRefitsEveryPool(t *testing.T) {
	r := newRig(t, 1, nil)
	now := r.clock.Now()
	r.writeDemand(t, now.Add(-15*24*time.Hour), now, daily)
	if err := r.svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	first := r.svc.Status()[0].LastRefit
	if first.IsZero() {
		t.Fatal("setup: no refit at the first decision")
	}
	// Refit times are rounded down to the forecast step: the decisions
	// below are in the next step, so a refit there has a later time.
	tick := func(after time.Duration) time.Time {
		t.Helper()
		r.clock.Advance(after)
		r.writeDemand(t, r.clock.Now().Add(-after), r.clock.Now(), daily)
		if err := r.svc.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
		return r.svc.Status()[0].LastRefit
	}
	step := r.svc.pools[0].ctl().Settings().Step
	if got := tick(step + time.Minute); !got.Equal(first) {
		t.Fatalf("setup: refit again at %s a step later, want the next refit hours ahead", got)
	}
	file := poolspec.DefaultFile()
	file.Pools = []poolspec.Pool{testSpec(testPool, nil)}
	if err := r.svc.Reload(t.Context(), &file); err != nil {
		t.Fatal(err)
	}
	if got, want := tick(time.Minute), first.Add(step); !got.Equal(want) {
		t.Errorf("after the reload: last refit %s, want one in the decision's step, %s", got, want)
	}
}
