package volcengine_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/volcengine/volcengine-go-sdk/volcengine"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/planner"
)

// A group of 10 with the plan's spot share 1 runs all on spot; a stock-out
// replaces them with 10 on-demand stand-ins (CompensateWithOnDemand). The
// service's decisions (a capacity read, then Safe.Resize(10), and the warm
// size where the pool has a tier) then move the stand-ins back to spot:
// while the zone is still out of stock, a probe at most once per back-off
// (options.spot_return_after), none of its on-demand launches left
// running; once spot returns (SpotReturns), all 10 on spot again within a
// back-off and a few boots, the desired size back at 10. The serving
// (InService) count, sampled at every request the stand-in receives,
// never drops below 10 once the stand-ins serve, and every read reports
// the serving size 10 with Describe* calls only. In a recycle-mode group
// a probe also starts the warm tier's stopped members (a scale-out starts
// them first), which go back to stopped.
func TestStandInsReturnToSpot(t *testing.T) {
	const (
		size, tick     = 10, time.Minute
		boot, backOff  = 3 * time.Minute, 10 * time.Minute
		outFor         = 25 // decisions out of stock
		returnDeadline = backOff/tick + 4*boot/tick
	)
	cases := []struct {
		name string
		mode string
		warm int
	}{
		{"release-mode group", volcenginetest.ScalingModeRelease, 0},
		{"recycle-mode group with a warm tier of 2", volcenginetest.ScalingModeRecycle, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := actuatortest.NewClock(time.Now().UTC())
			f := newFixture(t, volcengine.Options{Now: clock.Now, SpotReturnAfter: backOff})
			f.srv.BootDelay, f.srv.WarmStart, f.srv.BootClock = boot, 30*time.Second, clock.Now
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 24, ScalingMode: tc.mode})
			safe := actuator.NewSafe(f.act, actuator.SafetyOptions{Now: clock.Now, Pools: []actuator.PoolConfig{
				{Name: "scg-gpu", Backend: volcengine.Name, Limits: planner.Limits{MaxInstances: 20}}}})
			ctx := context.Background()
			if err := safe.SetSpot(ctx, "scg-gpu", planner.Spot{Share: 1}, "plan"); err != nil {
				t.Fatal(err)
			}
			decide := func() {
				t.Helper()
				clock.Advance(tick)
				before := len(f.srv.Calls(""))
				c, _, err := safe.ReadCapacity(ctx, "scg-gpu")
				if err != nil {
					t.Fatal(err)
				}
				for _, call := range f.srv.Calls("")[before:] {
					if !strings.HasPrefix(call.Action, "Describe") {
						t.Errorf("the read called %s: a read must not change the group", call.Action)
					}
				}
				if g, _ := f.srv.Group("scg-gpu"); g.Desired >= size && (c.Desired != size || c.Current != size) {
					t.Errorf("%s: Capacity = %+v, want the serving size %d (group desired %d)", clock.Now().Format("15:04"), c, size, g.Desired)
				}
				if _, err := safe.Resize(ctx, "scg-gpu", size, "forecast"); err != nil {
					t.Fatal(err)
				}
				if tc.warm > 0 {
					if err := safe.SetWarm(ctx, "scg-gpu", tc.warm, "forecast"); err != nil {
						t.Fatal(err)
					}
				}
			}
			for range boot/tick + 2 {
				decide()
			}
			if got := f.srv.Tally("scg-gpu"); got != (volcenginetest.Tally{Desired: size, Serving: size, Running: size, Spot: size, Stopped: tc.warm}) {
				t.Fatalf("before the stock-out: %+v, want %d serving on spot and %d stopped", got, size, tc.warm)
			}

			var sampled sync.Mutex
			minServing, sampling := size, false
			f.srv.OnCall(func(volcenginetest.Call) {
				n := f.srv.Tally("scg-gpu").Serving
				sampled.Lock()
				defer sampled.Unlock()
				if sampling {
					minServing = min(minServing, n)
				}
			})
			if lost := f.srv.StockOut("scg-gpu"); len(lost) != size {
				t.Fatalf("the stock-out took %d members, want the %d on spot", len(lost), size)
			}
			if got := f.srv.Tally("scg-gpu"); got.Running != size || got.OnDemand != size {
				t.Fatalf("after the stock-out: %+v, want %d on-demand stand-ins launched", got, size)
			}
			clock.Advance(boot)
			sampled.Lock()
			sampling = true
			sampled.Unlock()

			// Out of stock: probes at most once per back-off, and none of
			// their on-demand launches stays.
			probes := 0
			var lastProbe time.Time
			for range outFor {
				calls := len(f.srv.Calls("ModifyScalingGroup"))
				decide()
				for _, c := range f.srv.Calls("ModifyScalingGroup")[calls:] {
					if n, _ := strconv.Atoi(c.Params.Get("DesireInstanceNumber")); n > size+tc.warm {
						if probes > 0 && clock.Now().Sub(lastProbe) < backOff {
							t.Errorf("a probe at %s, %v after the one before: want at most one per back-off of %v",
								clock.Now().Format("15:04"), clock.Now().Sub(lastProbe), backOff)
						}
						probes, lastProbe = probes+1, clock.Now()
					}
				}
				if got := f.srv.Tally("scg-gpu"); got.Desired == size && (got.Running != size || got.Spot != 0) {
					t.Errorf("%s, no probe in flight: %+v; want the %d stand-ins alone running", clock.Now().Format("15:04"), got, size)
				}
			}
			if probes < 2 {
				t.Errorf("%d probes over %d decisions out of stock, want one a back-off (%v) and a boot (%v)", probes, outFor, backOff, boot)
			}
			for i := 0; f.srv.Tally("scg-gpu").Desired != size; i++ {
				if i == int(boot/tick)+2 {
					t.Fatalf("the last probe never ended: %+v", f.srv.Tally("scg-gpu"))
				}
				decide()
			}
			if got := f.srv.Tally("scg-gpu"); got != (volcenginetest.Tally{Desired: size, Serving: size, Running: size, OnDemand: size, Stopped: tc.warm}) {
				t.Errorf("after the probes out of stock: %+v, want the %d stand-ins alone and %d stopped", got, size, tc.warm)
			}

			// Spot returns: the stand-ins move back to spot.
			f.srv.SpotReturns("scg-gpu")
			at := clock.Now()
			want := volcenginetest.Tally{Desired: size, Serving: size, Running: size, Spot: size, Stopped: tc.warm}
			for i := 0; f.srv.Tally("scg-gpu") != want; i++ {
				if i == int(returnDeadline) {
					t.Fatalf("%v after spot returned the group is %+v, want %+v", clock.Now().Sub(at), f.srv.Tally("scg-gpu"), want)
				}
				decide()
			}
			t.Logf("back on spot %v after spot returned (%d probes out of stock)", clock.Now().Sub(at), probes)
			decide()
			if got := f.srv.Tally("scg-gpu"); got != want {
				t.Errorf("a decision later: %+v, want %+v kept", got, want)
			}
			sampled.Lock()
			if minServing < size {
				t.Errorf("the serving count dropped to %d during the move, want at least %d", minServing, size)
			}
			sampled.Unlock()
			if !strings.Contains(f.log.String(), "on-demand stand-ins moved back to spot") {
				t.Errorf("no log line of the move:\n%s", f.log.String())
			}
		})
	}
}

// Stand-ins are moved only for a plan with a spot tier and fallback
// on_demand: with fallback none, without a spot block (the spot-mix
// options alone) or before any spot mix was applied, a group of 10
// on-demand members whose mix asks for spot sees no call but the reads
// of the decisions, through Safe or SettleSpot itself, and a
// volcengine-ecs pool has no SettleSpot at all.
func TestStandInsStayWithoutTheFallback(t *testing.T) {
	members := []string{"i-1", "i-2", "i-3", "i-4", "i-5", "i-6", "i-7", "i-8", "i-9", "i-10"}
	cases := []struct {
		name    string
		options *volcengine.Distribution
		spots   []planner.Spot // applied through Safe in turn
	}{
		{"fallback none", nil, []planner.Spot{{Share: 1, Fallback: planner.SpotFallbackNone}}},
		{"no spot block, the options' mix", &volcengine.Distribution{OnDemandPercentage: sdk.Int32(0), CompensateWithOnDemand: sdk.Bool(true)}, nil},
		{"a spot block removed", nil, []planner.Spot{{Share: 1}, {}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := actuatortest.NewClock(time.Now().UTC())
			f := newFixture(t, volcengine.Options{Now: clock.Now, Distribution: tc.options, SpotReturnAfter: time.Minute})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 24, Desired: len(members), InstanceIDs: members})
			safe := actuator.NewSafe(f.act, actuator.SafetyOptions{Now: clock.Now, Pools: []actuator.PoolConfig{
				{Name: "scg-gpu", Backend: volcengine.Name, Limits: planner.Limits{MaxInstances: 20}}}})
			ctx := context.Background()
			if err := safe.SetDesired(ctx, "scg-gpu", 11, "forecast"); err != nil {
				t.Fatal(err) // sends the options' mix, if any
			}
			if err := safe.SetDesired(ctx, "scg-gpu", len(members), "forecast"); err != nil {
				t.Fatal(err)
			}
			for _, spot := range tc.spots {
				if err := safe.SetSpot(ctx, "scg-gpu", spot, "plan"); err != nil {
					t.Fatal(err)
				}
			}
			before := len(f.srv.Calls(""))
			for range 5 {
				clock.Advance(time.Minute)
				if _, err := safe.Resize(ctx, "scg-gpu", len(members), "forecast"); err != nil {
					t.Fatal(err)
				}
				if changed, err := f.act.SettleSpot(ctx, "scg-gpu"); changed || err != nil {
					t.Errorf("SettleSpot = %v, %v; want nothing changed", changed, err)
				}
			}
			for _, c := range f.srv.Calls("")[before:] {
				if c.Action != "DescribeScalingGroups" {
					t.Errorf("%s %v: want no call but the resizes' reads", c.Action, c.Params)
				}
			}
		})
	}
	t.Run("volcengine-ecs", func(t *testing.T) {
		f := newFixture(t, volcengine.Options{})
		p, err := volcengine.NewECSPool(f.act, "gpu", []string{"i-1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := any(p).(actuator.SpotSettler); ok {
			t.Error("an ECS pool is a SpotSettler; its instances are started and stopped in place, none stands in for spot")
		}
	})
}

// A settling that fails fails as every call of the package does (an
// *APIError wrapping the kind), naming the group and spot.fallback, and
// through Safe it is the resize's error; the next decision tries again
// and probes.
func TestSettleSpotErrorsAreWrapped(t *testing.T) {
	clock := actuatortest.NewClock(time.Now().UTC())
	f := newFixture(t, volcengine.Options{Now: clock.Now})
	members := []string{"i-1", "i-2", "i-3", "i-4"}
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 8, Desired: len(members), InstanceIDs: members})
	safe := actuator.NewSafe(f.act, actuator.SafetyOptions{Now: clock.Now, Retry: actuator.RetryPolicy{MaxAttempts: 1},
		Pools: []actuator.PoolConfig{{Name: "scg-gpu", Backend: volcengine.Name, Limits: planner.Limits{MaxInstances: 8}}}})
	ctx := context.Background()
	if err := safe.SetSpot(ctx, "scg-gpu", planner.Spot{Share: 1}, "plan"); err != nil {
		t.Fatal(err)
	}
	f.srv.Fail("DescribeInstances", volcenginetest.Internal)
	res, err := safe.Resize(ctx, "scg-gpu", len(members), "forecast")
	var apiErr *volcengine.APIError
	if !errors.Is(err, actuator.ErrTransient) || !errors.As(err, &apiErr) || apiErr.Action != "DescribeInstances" ||
		!strings.Contains(err.Error(), "scaling group scg-gpu: moving on-demand stand-ins back to spot (spot.fallback on_demand)") {
		t.Errorf("Resize = %v, want a transient *APIError from DescribeInstances naming the group and spot.fallback", err)
	}
	if res.Outcome != actuator.OutcomeNoop {
		t.Errorf("the resize's outcome %q, want %q: the size was held", res.Outcome, actuator.OutcomeNoop)
	}
	if _, err := safe.Resize(ctx, "scg-gpu", len(members), "forecast"); err != nil {
		t.Fatal(err)
	}
	if g, _ := f.srv.Group("scg-gpu"); g.Desired != 2*len(members) {
		t.Errorf("the next decision left the group at %d, want a probe for its %d stand-ins (desired %d)", g.Desired, len(members), 2*len(members))
	}
}

// options.spot_return_after is a duration from 1m to 24h, 30m unless set;
// a value outside is refused at its key.
func TestSpotReturnAfterOption(t *testing.T) {
	cases := []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"", 30 * time.Minute, ""},
		{"5m", 5 * time.Minute, ""},
		{"24h", 24 * time.Hour, ""},
		{"30s", 0, "options.spot_return_after"},
		{"25h", 0, "options.spot_return_after"},
		{"soon", 0, "options.spot_return_after"},
	}
	for _, tc := range cases {
		t.Run(tc.value, func(t *testing.T) {
			p := actuator.PoolConfig{Name: "scg-gpu", Backend: volcengine.Name, Options: map[string]string{"spot_return_after": tc.value}}
			opts, problems := volcengine.PoolOptions.Decode(p)
			err := actuator.OptionError(p.Name, problems)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, actuator.ErrInvalidConfig) {
					t.Errorf("spot_return_after %q: %v, want it refused at %s", tc.value, err, tc.err)
				}
				return
			}
			if err != nil || opts.Duration("spot_return_after") != tc.want {
				t.Errorf("spot_return_after %q: %v, %v; want %v", tc.value, opts.Duration("spot_return_after"), err, tc.want)
			}
		})
	}
}
