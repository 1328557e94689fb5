package simulated_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
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
	if err := r.Register(simulated.Name, f.Factory(), simulated.PoolOptions); err != nil {
		t.Fatal(err)
	}
	cfg := actuator.PoolConfig{Name: "gpu", Backend: simulated.Name, Limits: planner.Limits{MinInstances: 1, MaxInstances: 8, MaxStep: 3},
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

// A removed ready instance drains: it no longer counts or serves, and is
// billed for the drain; a booting one stops at once.
func TestFleetDrainsOnScaleIn(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 10 * time.Minute, Drain: 2 * time.Minute})
	f.AddPool("gpu", 3, 0, 10)
	ctx := context.Background()
	if err := f.SetDesired(ctx, "gpu", 4, "up"); err != nil { // one booting
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := f.SetDesired(ctx, "gpu", 1, "down"); err != nil {
		t.Fatal(err)
	}
	got := f.Counts("gpu")
	if want := (simulated.Counts{Ready: 1, Draining: 2, Desired: 1}); got != want {
		t.Fatalf("right after scale-in: %+v, want %+v", got, want)
	}
	clock.Advance(5 * time.Minute)
	if got := f.Counts("gpu"); got.Draining != 0 {
		t.Errorf("still %d draining after the drain time", got.Draining)
	}
	// 3 ready: 1 for 6 m, 2 for 1 m + 2 m of drain; the booting one 1 m.
	want := 6*time.Minute + 2*3*time.Minute + time.Minute
	if got := f.Billed("gpu"); got != want {
		t.Errorf("billed %v, want %v", got, want)
	}
}

// Boot times drawn with a spread keep the mean, vary, and repeat with the
// same seed.
func TestFleetBootSpread(t *testing.T) {
	run := func(seed uint64) []time.Duration {
		clock := actuatortest.NewClock(t0)
		f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 10 * time.Minute, BootSpread: 3 * time.Minute,
			Rand: rand.New(rand.NewPCG(seed, 0))})
		f.AddPool("gpu", 0, 0, 5000)
		if err := f.SetDesired(context.Background(), "gpu", 4000, "up"); err != nil {
			t.Fatal(err)
		}
		var out []time.Duration
		for _, in := range f.Instances("gpu") {
			out = append(out, in.ReadyAt.Sub(in.LaunchedAt))
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	var sum, sq float64
	for _, d := range a {
		sum += d.Minutes()
		sq += d.Minutes() * d.Minutes()
	}
	mean := sum / float64(len(a))
	sd := math.Sqrt(sq/float64(len(a)) - mean*mean)
	if math.Abs(mean-10) > 0.2 || math.Abs(sd-3) > 0.3 {
		t.Errorf("boot times: mean %.2f min, sd %.2f; want 10 and 3", mean, sd)
	}
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Error("boot times do not repeat with the seed, or do not change with it")
	}
}

// Spot instances above the on-demand base are interrupted at their rate
// and replaced at once by the group; a scale-in keeps the mix.
func TestFleetSpotInterruptions(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 10 * time.Minute, OnDemandBase: 2, SpotShare: 0.5,
		InterruptionsPerHour: 0.5, Rand: rand.New(rand.NewPCG(7, 0))})
	f.AddPool("gpu", 0, 0, 20)
	ctx := context.Background()
	if err := f.SetDesired(ctx, "gpu", 10, "up"); err != nil {
		t.Fatal(err)
	}
	spots := 0
	for _, in := range f.Instances("gpu") {
		if in.Spot {
			spots++
		}
	}
	if spots != 4 { // half of the 8 above the base of 2
		t.Fatalf("%d spot instances, want 4", spots)
	}
	for range 48 * 60 {
		clock.Advance(time.Minute)
		if c := f.Counts("gpu"); c.Booting+c.Ready != 10 {
			t.Fatalf("%s: %d instances, want the group to keep 10", clock.Now(), c.Booting+c.Ready)
		}
	}
	// 4 spot instances for 48 h at 0.5/h, minus time rebooting: ~90.
	if n := f.Usage("gpu").Interruptions; n < 60 || n > 120 {
		t.Errorf("%d interruptions, want about 90", n)
	}
	if err := f.SetDesired(ctx, "gpu", 6, "down"); err != nil {
		t.Fatal(err)
	}
	spots = 0
	for _, in := range f.Instances("gpu") {
		if in.Spot {
			spots++
		}
	}
	if spots != 2 { // half of the 4 above the base
		t.Errorf("%d spot instances of 6 after the scale-in, want the mix's 2", spots)
	}
}

// Snapshot reads the same counts and usage as Counts and Usage do at the
// same instant, through boots, scale-ins, drains and scheduled steps,
// and all zeros for an unknown pool.
func TestSnapshotIsCountsAndUsageAtOnce(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 3 * time.Minute, Drain: 2 * time.Minute})
	f.AddPool("gpu", 2, 1, 8)
	steps := planner.Schedule{{At: t0.Add(5 * time.Minute), Desired: 6}, {At: t0.Add(12 * time.Minute), Desired: 3}}
	if err := f.PublishSchedule(context.Background(), "gpu", steps); err != nil {
		t.Fatal(err)
	}
	for minute := range 20 {
		counts, usage := f.Snapshot("gpu")
		if want := f.Counts("gpu"); counts != want {
			t.Errorf("at %dm: Snapshot counts %+v, Counts %+v", minute, counts, want)
		}
		if want := f.Usage("gpu"); usage != want {
			t.Errorf("at %dm: Snapshot usage %+v, Usage %+v", minute, usage, want)
		}
		clock.Advance(time.Minute)
	}
	if c, u := f.Snapshot("none"); c != (simulated.Counts{}) || u != (simulated.Usage{}) {
		t.Errorf("Snapshot of an unknown pool = %+v, %+v; want zeros", c, u)
	}
}

// A zone-wide spot stock-out interrupts every spot instance at once; the
// group replaces them on demand within the same tick and launches on
// demand while the stock-out lasts. When spot returns, the on-demand
// stand-ins move back to spot without the pool running short, and
// launches are spot again.
func TestFleetSpotStockOut(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 5 * time.Minute, SpotShare: 0.5,
		StockOutsPerWeek: 7, StockOutFor: time.Hour, Rand: rand.New(rand.NewPCG(3, 0))})
	f.AddPool("gpu", 0, 0, 40)
	ctx := context.Background()
	if err := f.SetDesired(ctx, "gpu", 10, "up"); err != nil {
		t.Fatal(err)
	}
	spotsOf := func() (spots, all int) {
		for _, in := range f.Instances("gpu") {
			all++
			if in.Spot {
				spots++
			}
		}
		return spots, all
	}
	if s, _ := spotsOf(); s != 5 {
		t.Fatalf("%d spot instances before the stock-out, want 5", s)
	}
	minutes := 0
	for f.Usage("gpu").StockOuts == 0 {
		if minutes++; minutes > 14*24*60 {
			t.Fatal("no stock-out in two weeks at seven a week")
		}
		clock.Advance(time.Minute)
	}
	if s, all := spotsOf(); s != 0 || all != 10 || f.Usage("gpu").Interruptions != 5 {
		t.Fatalf("at the stock-out: %d spot of %d instances, %d interruptions; want 0 of 10 (replaced on demand) and 5",
			s, all, f.Usage("gpu").Interruptions)
	}
	clock.Advance(20 * time.Minute)
	if err := f.SetDesired(ctx, "gpu", 14, "during"); err != nil {
		t.Fatal(err)
	}
	if s, _ := spotsOf(); s != 0 {
		t.Errorf("%d spot instances launched during the stock-out, want none", s)
	}
	for minute := range 45 {
		clock.Advance(time.Minute)
		if c := f.Counts("gpu"); c.Ready != 14 && minute >= 4 { // the 4 launched boot for 5 minutes
			t.Fatalf("%s: %d ready, want 14 throughout the return to spot", clock.Now(), c.Ready)
		}
	}
	if f.Usage("gpu").StockOuts != 1 {
		t.Fatalf("%d stock-outs within the hour; this seed draws one", f.Usage("gpu").StockOuts)
	}
	if s, all := spotsOf(); s != 7 || all != 14 {
		t.Errorf("%d spot instances of %d a boot after spot returned, want the mix's 7 of 14", s, all)
	}
	if err := f.SetDesired(ctx, "gpu", 18, "after"); err != nil {
		t.Fatal(err)
	}
	if s, _ := spotsOf(); s != 9 {
		t.Errorf("%d spot instances after 4 more were launched, want the mix's 9", s)
	}
}
