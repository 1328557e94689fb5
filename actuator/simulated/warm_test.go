package simulated_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/planner"
)

// A warm pool is filled by cold boots that stop once ready; a scale-out
// starts its stopped instances in WarmStart, a scale-in stops the removed
// ones back into it, and its stopped time is billed apart from the
// running time.
func TestWarmPool(t *testing.T) {
	const boot, warmStart = 10 * time.Minute, 90 * time.Second
	ctx := context.Background()
	type counts struct{ ready, booting, stopped, warming int }
	get := func(f *simulated.Fleet) counts {
		c := f.Counts("gpu")
		return counts{c.Ready, c.Booting, c.Stopped, c.Warming}
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, f *simulated.Fleet, clock *actuatortest.Clock)
	}{
		{"filled by cold boots that stop once ready", func(t *testing.T, f *simulated.Fleet, clock *actuatortest.Clock) {
			must(t, f.SetWarm(ctx, "gpu", 3, "plan"))
			clock.Advance(time.Second)
			if got, want := get(f), (counts{2, 0, 0, 3}); got != want {
				t.Fatalf("after asking for 3 warm: %+v, want %+v", got, want)
			}
			clock.Advance(boot)
			if got, want := get(f), (counts{2, 0, 3, 0}); got != want {
				t.Fatalf("a boot later: %+v, want %+v", got, want)
			}
			u := f.Usage("gpu")
			// Two running for the whole time, three for their boot (from
			// the settling, a nanosecond after the call), then stopped for
			// the rest of the second.
			wantRun, wantStopped := 2*(boot+time.Second)+3*boot, 3*(time.Second-time.Nanosecond)
			if u.OnDemand != wantRun || u.Stopped != wantStopped {
				t.Errorf("billed %v running and %v stopped, want %v and %v", u.OnDemand, u.Stopped, wantRun, wantStopped)
			}
		}},
		{"a scale-out starts stopped instances first", func(t *testing.T, f *simulated.Fleet, clock *actuatortest.Clock) {
			fill(t, f, clock, 3, boot)
			must(t, f.SetDesired(ctx, "gpu", 6, "burst"))
			must(t, f.SetWarm(ctx, "gpu", 0, "plan"))
			clock.Advance(warmStart - time.Second)
			if got, want := get(f), (counts{2, 4, 0, 0}); got != want {
				t.Fatalf("just before the warm start: %+v, want %+v", got, want)
			}
			clock.Advance(time.Second)
			if got, want := get(f), (counts{5, 1, 0, 0}); got != want {
				t.Fatalf("at the warm start: %+v, want %+v (three warm, one cold)", got, want)
			}
			if n := f.Usage("gpu").WarmStarts; n != 3 {
				t.Errorf("warm starts %d, want 3", n)
			}
		}},
		{"a scale-out takes over cold boots on their way into the pool", func(t *testing.T, f *simulated.Fleet, clock *actuatortest.Clock) {
			must(t, f.SetWarm(ctx, "gpu", 2, "plan"))
			clock.Advance(time.Minute)
			must(t, f.SetDesired(ctx, "gpu", 3, "rise"))
			clock.Advance(boot - time.Minute + time.Second)
			if got, want := get(f), (counts{3, 0, 1, 0}); got != want {
				t.Fatalf("a boot after the pool was asked for: %+v, want %+v (one warming boot serves, the other stopped)", got, want)
			}
		}},
		{"a scale-in stops instances into the pool while it has room", func(t *testing.T, f *simulated.Fleet, clock *actuatortest.Clock) {
			must(t, f.SetDesired(ctx, "gpu", 5, "peak"))
			clock.Advance(boot)
			must(t, f.SetWarm(ctx, "gpu", 2, "plan"))
			must(t, f.SetDesired(ctx, "gpu", 1, "night"))
			clock.Advance(time.Second)
			if got, want := get(f), (counts{1, 0, 2, 0}); got != want {
				t.Fatalf("after scaling in by 4 with room for 2: %+v, want %+v", got, want)
			}
		}},
		{"a smaller pool terminates stopped instances", func(t *testing.T, f *simulated.Fleet, clock *actuatortest.Clock) {
			fill(t, f, clock, 4, boot)
			must(t, f.SetWarm(ctx, "gpu", 1, "plan"))
			clock.Advance(time.Second)
			if got, want := get(f), (counts{2, 0, 1, 0}); got != want {
				t.Fatalf("after lowering the pool to 1: %+v, want %+v", got, want)
			}
			before := f.Usage("gpu").Stopped
			clock.Advance(time.Hour)
			if got := f.Usage("gpu").Stopped - before; got != time.Hour {
				t.Errorf("one stopped instance for an hour billed %v, want 1h", got)
			}
		}},
		{"the pool stays within max", func(t *testing.T, f *simulated.Fleet, clock *actuatortest.Clock) {
			must(t, f.SetDesired(ctx, "gpu", 7, "peak"))
			must(t, f.SetWarm(ctx, "gpu", 5, "plan"))
			clock.Advance(time.Second)
			if got := get(f); got.stopped+got.warming != 3 {
				t.Errorf("max 10, desired 7, warm 5: %+v holds %d warm, want 3", got, got.stopped+got.warming)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := actuatortest.NewClock(t0)
			f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: boot, WarmStart: warmStart})
			f.AddPool("gpu", 2, 0, 10)
			tc.run(t, f, clock)
		})
	}
}

// A cold boot on its way into the warm pool that a scale-out takes over
// joins the group as a launch does: on spot where the spot share asks.
func TestTakenOverWarmBootFollowsTheSpotShare(t *testing.T) {
	ctx := context.Background()
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 10 * time.Minute, WarmStart: time.Minute, SpotShare: 1})
	f.AddPool("gpu", 0, 0, 10)
	must(t, f.SetWarm(ctx, "gpu", 1, "plan"))
	clock.Advance(time.Minute)
	must(t, f.SetDesired(ctx, "gpu", 1, "rise"))
	ins := f.Instances("gpu")
	if len(ins) != 1 || !ins[0].Spot || !ins[0].ReadyAt.Equal(t0.Add(10*time.Minute+time.Nanosecond)) {
		t.Fatalf("instances %+v, want the warming boot taken over, on spot, ready when its boot ends", ins)
	}
	clock.Advance(time.Hour)
	u := f.Usage("gpu")
	if u.OnDemand != time.Minute-time.Nanosecond || u.Spot != time.Hour {
		t.Errorf("billed %v on demand and %v spot, want its first minute on demand (warming) and the hour after on spot", u.OnDemand, u.Spot)
	}
}

func TestSetWarmRefusesANegativeSize(t *testing.T) {
	f := simulated.New(simulated.Options{Now: actuatortest.NewClock(t0).Now})
	f.AddPool("gpu", 1, 0, 4)
	if err := f.SetWarm(context.Background(), "gpu", -1, "bad"); !errors.Is(err, actuator.ErrRejected) {
		t.Errorf("SetWarm(-1): %v, want ErrRejected", err)
	}
	if err := f.SetWarm(context.Background(), "nope", 1, "bad"); !errors.Is(err, actuator.ErrRejected) {
		t.Errorf("SetWarm on an unknown pool: %v, want ErrRejected", err)
	}
}

// fill asks for n warm instances and waits a boot for them to stop.
func fill(t *testing.T, f *simulated.Fleet, clock *actuatortest.Clock, n int, boot time.Duration) {
	t.Helper()
	must(t, f.SetWarm(context.Background(), "gpu", n, "plan"))
	clock.Advance(boot + time.Second)
	if c := f.Counts("gpu"); c.Stopped != n {
		t.Fatalf("warm pool holds %d stopped, want %d", c.Stopped, n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The safety layer passes a warm tier to a back-end that keeps one,
// audits it, refuses a size beyond the pool's max, calls nothing for a
// repeat, and says so for a back-end without a warm tier.
func TestSafeSetWarm(t *testing.T) {
	ctx := context.Background()
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 10 * time.Minute, WarmStart: time.Minute})
	f.AddPool("gpu", 2, 0, 8)
	cfg := actuator.PoolConfig{Name: "gpu", Backend: simulated.Name, Limits: planner.Limits{MaxInstances: 8}}
	var audit bytes.Buffer
	s := actuator.NewSafe(f, actuator.SafetyOptions{Pools: []actuator.PoolConfig{cfg}, Now: clock.Now, Audit: &audit})
	if err := s.SetWarm(ctx, "gpu", 3, "plan"); err != nil {
		t.Fatal(err)
	}
	if c := f.Counts("gpu"); c.Warm != 3 {
		t.Errorf("warm %d after SetWarm(3), want 3", c.Warm)
	}
	if n := strings.Count(audit.String(), `"op":"set_warm"`); n != 1 {
		t.Errorf("%d set_warm audit lines, want 1:\n%s", n, audit.String())
	}
	if err := s.SetWarm(ctx, "gpu", 3, "again"); err != nil || strings.Count(audit.String(), `"op":"set_warm"`) != 1 {
		t.Errorf("a repeat: %v, audit:\n%s; want nothing called", err, audit.String())
	}
	for _, tc := range []struct {
		pool string
		warm int
		want error
	}{{"gpu", 9, actuator.ErrInvalidDesired}, {"gpu", -1, actuator.ErrInvalidDesired}, {"nope", 1, actuator.ErrUnknownPool}} {
		if err := s.SetWarm(ctx, tc.pool, tc.warm, "bad"); !errors.Is(err, tc.want) {
			t.Errorf("SetWarm(%q, %d): %v, want %v", tc.pool, tc.warm, err, tc.want)
		}
	}
	if c := f.Counts("gpu"); c.Warm != 3 {
		t.Errorf("warm %d after refused calls, want 3 kept", c.Warm)
	}
	plain := actuator.NewSafe(actuatortest.New("fake").AddPool("gpu", 2, 0, 8), actuator.SafetyOptions{Pools: []actuator.PoolConfig{cfg}, Now: clock.Now})
	if err := plain.SetWarm(ctx, "gpu", 1, "plan"); !errors.Is(err, actuator.ErrNotImplemented) {
		t.Errorf("SetWarm on a back-end without a warm tier: %v, want ErrNotImplemented", err)
	}
}
