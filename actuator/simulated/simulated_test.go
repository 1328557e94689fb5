package simulated_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/planner"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func TestFleetScenario(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 4 * time.Minute})
	f.AddPool("gpu", 2, 1, 6)
	ctx := context.Background()

	type want struct{ current, ready, desired int }
	check := func(step string, w want) {
		t.Helper()
		c, err := f.Capacity(ctx, "gpu")
		if err != nil {
			t.Fatal(err)
		}
		if got := (want{c.Current, f.Ready("gpu"), c.Desired}); got != w {
			t.Errorf("%s: current/ready/desired = %+v, want %+v", step, got, w)
		}
	}
	check("start", want{2, 2, 2})
	if err := f.SetDesired(ctx, "gpu", 5, "forecast"); err != nil {
		t.Fatal(err)
	}
	check("just scaled up: booting", want{5, 2, 5})
	clock.Advance(3*time.Minute + 59*time.Second)
	check("a second before boot", want{5, 2, 5})
	clock.Advance(time.Second)
	check("booted", want{5, 5, 5})

	ids := f.Instances("gpu")
	if err := f.Release(ctx, ids[0].ID, "idle"); err != nil {
		t.Fatal(err)
	}
	check("released one: not replaced", want{4, 4, 4})
	if err := f.Release(ctx, ids[0].ID, "again"); !errors.Is(err, actuator.ErrRejected) {
		t.Errorf("releasing twice: %v, want ErrRejected", err)
	}
	if err := f.SetDesired(ctx, "gpu", 9, "too many"); !errors.Is(err, actuator.ErrRejected) {
		t.Errorf("above max: %v, want ErrRejected", err)
	}

	steps := planner.Schedule{{At: t0.Add(10 * time.Minute), Desired: 6}, {At: t0.Add(20 * time.Minute), Desired: 1}}
	if err := f.PublishSchedule(ctx, "gpu", steps); err != nil {
		t.Fatal(err)
	}
	check("schedule not yet due", want{4, 4, 4})
	clock.Advance(6 * time.Minute) // t0+10m
	check("first step due", want{6, 4, 6})
	clock.Advance(10 * time.Minute) // t0+20m
	check("second step due: scale in", want{1, 1, 1})

	// One instance left: billing grows by exactly the time it runs.
	before := f.Billed("gpu")
	clock.Advance(time.Hour)
	if got := f.Billed("gpu") - before; got != time.Hour {
		t.Errorf("one instance for an hour billed %v, want 1h", got)
	}
}

func TestFleetBehindSafe(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: time.Minute})
	r := actuator.NewRegistry()
	if err := r.Register(simulated.Name, f.Factory(), "initial"); err != nil {
		t.Fatal(err)
	}
	cfg := actuator.PoolConfig{Name: "gpu", Backend: simulated.Name, Min: 1, Max: 8, MaxStep: 3,
		Options: map[string]string{"initial": "2"}}
	a, err := r.New(context.Background(), simulated.Name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := actuator.NewSafe(a, actuator.SafetyOptions{Pools: []actuator.PoolConfig{cfg}, Now: clock.Now})
	if err := s.Apply(context.Background(), "gpu", 7.4, "forecast"); err != nil {
		t.Fatal(err)
	}
	if got := len(f.Instances("gpu")); got != 5 {
		t.Errorf("instances = %d, want 5 (2 + max_step 3)", got)
	}
	bad := cfg
	bad.Options = map[string]string{"initial": "20"}
	if _, err := r.New(context.Background(), simulated.Name, bad); err == nil {
		t.Error("initial above max accepted")
	}
}

func TestFleetBillsStepsNobodyLookedAt(t *testing.T) {
	// Steps that fell due while nobody called the fleet still take effect
	// at their own times: 6 instances from 10m to 20m are billed even when
	// the fleet is next read at 30m, and a step already past when the
	// schedule is published is not back-dated.
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now})
	f.AddPool("gpu", 2, 1, 8)
	steps := planner.Schedule{{At: t0.Add(10 * time.Minute), Desired: 6}, {At: t0.Add(20 * time.Minute), Desired: 1}}
	if err := f.PublishSchedule(context.Background(), "gpu", steps); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Minute)
	// 2 instances 0–10m, then 6 until 20m, then 1 until 30m.
	want := 2*10*time.Minute + 6*10*time.Minute + 1*10*time.Minute
	if got := f.Billed("gpu"); got != want {
		t.Errorf("billed %v, want %v", got, want)
	}

	late := planner.Schedule{{At: t0, Desired: 3}} // 30 minutes in the past
	if err := f.PublishSchedule(context.Background(), "gpu", late); err != nil {
		t.Fatal(err)
	}
	for _, in := range f.Instances("gpu")[1:] {
		if !in.LaunchedAt.Equal(clock.Now()) {
			t.Errorf("instance %s launched at %v, want now (%v): a past step is not back-dated", in.ID, in.LaunchedAt, clock.Now())
		}
	}
	if n := len(f.Instances("gpu")); n != 3 {
		t.Errorf("instances = %d, want 3", n)
	}
}
