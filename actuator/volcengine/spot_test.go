package volcengine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	sdk "github.com/volcengine/volcengine-go-sdk/volcengine"
	"github.com/volcengine/volcengine-go-sdk/volcengine/credentials"
	"github.com/volcengine/volcengine-go-sdk/volcengine/session"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/planner"
)

// mix is an InstancesDistribution as a client of the API reads it back.
type mix struct {
	base, percent      int32
	remedy, compensate bool
}

// describeMix reads the group's InstancesDistribution with the SDK's own
// DescribeScalingGroups, as any client of the API sees it; ok is false
// when the group has none.
func describeMix(t *testing.T, srv *volcenginetest.Server, group string) (m mix, desired int32, ok bool) {
	t.Helper()
	sess, err := session.NewSession(sdk.NewConfig().WithRegion(volcenginetest.DefaultRegion).
		WithCredentials(credentials.NewStaticCredentials(volcenginetest.DefaultAccessKey, secret, "")).
		WithEndpoint(srv.URL).WithDisableSSL(true).WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	out, err := autoscaling.New(sess).DescribeScalingGroups(&autoscaling.DescribeScalingGroupsInput{ScalingGroupIds: sdk.StringSlice([]string{group})})
	if err != nil || len(out.ScalingGroups) != 1 {
		t.Fatalf("DescribeScalingGroups: %v, %v", out, err)
	}
	g := out.ScalingGroups[0]
	d := g.InstancesDistribution
	if d == nil {
		return mix{}, sdk.Int32Value(g.DesireInstanceNumber), false
	}
	return mix{sdk.Int32Value(d.OnDemandBaseCapacity), sdk.Int32Value(d.OnDemandPercentageAboveBaseCapacity),
		sdk.BoolValue(d.SpotInstanceRemedy), sdk.BoolValue(d.CompensateWithOnDemand)}, sdk.Int32Value(g.DesireInstanceNumber), true
}

// SetSpot gives the group the plan's spot tier as its
// InstancesDistribution (base on demand, round(100 × (1 − share)) percent
// on demand above it, CompensateWithOnDemand from the fallback,
// SpotInstanceRemedy from options.spot_remedy, default true), which
// DescribeScalingGroups then shows, and leaves the size alone; a resize
// sends the same mix again. Spot-mix options that repeat the plan are
// fine; one that contradicts it, or a tier out of range, is refused
// before any call, naming the keys.
func TestSetSpotSetsTheGroupsMix(t *testing.T) {
	cases := []struct {
		name    string
		options *volcengine.Distribution
		spot    planner.Spot
		want    mix
		wantErr []string // the refusal's words; nil: accepted
	}{
		{"three quarters on spot above a base of two", nil,
			planner.Spot{Share: 0.75, BaseOnDemand: 2}, mix{2, 25, true, true}, nil},
		{"a third on spot rounds to 67% on demand", nil,
			planner.Spot{Share: 1.0 / 3}, mix{0, 67, true, true}, nil},
		{"no fallback and no remedy", &volcengine.Distribution{SpotRemedy: sdk.Bool(false)},
			planner.Spot{Share: 0.5, BaseOnDemand: 1, Fallback: planner.SpotFallbackNone}, mix{1, 50, false, false}, nil},
		{"options that repeat the plan", &volcengine.Distribution{OnDemandBase: sdk.Int32(2), OnDemandPercentage: sdk.Int32(25), CompensateWithOnDemand: sdk.Bool(true)},
			planner.Spot{Share: 0.75, BaseOnDemand: 2, Fallback: planner.SpotFallbackOnDemand}, mix{2, 25, true, true}, nil},
		{"a percentage that contradicts the share", &volcengine.Distribution{OnDemandPercentage: sdk.Int32(50)},
			planner.Spot{Share: 0.75}, mix{}, []string{"options.on_demand_percentage (50)", "spot.share (0.75, 25% on demand)"}},
		{"a base that contradicts the plan's", &volcengine.Distribution{OnDemandBase: sdk.Int32(4)},
			planner.Spot{Share: 0.5, BaseOnDemand: 2}, mix{}, []string{"options.on_demand_base (4)", "spot.base_on_demand (2)"}},
		{"no compensation against an on-demand fallback", &volcengine.Distribution{CompensateWithOnDemand: sdk.Bool(false)},
			planner.Spot{Share: 0.5}, mix{}, []string{"options.compensate_with_on_demand (false)", "spot.fallback (on_demand)"}},
		{"a share above one", nil, planner.Spot{Share: 1.5}, mix{}, []string{"spot.share 1.5 is outside [0, 1]"}},
		{"an unknown fallback", nil, planner.Spot{Share: 0.5, Fallback: "reserved"}, mix{}, []string{`spot.fallback: "reserved" is not a fallback`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{Distribution: tc.options})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 40, Desired: 6})
			ctx := context.Background()
			err := f.act.SetSpot(ctx, "scg-gpu", tc.spot, "plan")
			if tc.wantErr != nil {
				if !errors.Is(err, actuator.ErrRejected) {
					t.Fatalf("SetSpot = %v, want ErrRejected", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if n := len(f.srv.Calls("ModifyScalingGroup")); n != 0 {
					t.Errorf("%d ModifyScalingGroup calls after a refusal, want none", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, desired, ok := describeMix(t, f.srv, "scg-gpu"); !ok || got != tc.want || desired != 6 {
				t.Errorf("after SetSpot: mix %+v (set %v), desired %d; want %+v and the size left at 6", got, ok, desired, tc.want)
			}
			if c := onlyCall(t, f.srv, "ModifyScalingGroup"); c.Params.Has("DesireInstanceNumber") {
				t.Errorf("SetSpot sent DesireInstanceNumber=%s; the size is SetDesired's", c.Params.Get("DesireInstanceNumber"))
			}
			if err := f.act.SetDesired(ctx, "scg-gpu", 10, "ramp"); err != nil {
				t.Fatal(err)
			}
			if got, desired, _ := describeMix(t, f.srv, "scg-gpu"); got != tc.want || desired != 10 {
				t.Errorf("after a resize: mix %+v, desired %d; want %+v kept, desired 10", got, desired, tc.want)
			}
		})
	}
}

// A spot block without a tier takes back the mix SetSpot set: the group
// returns to the pool's options, or to all on demand without them; a
// group SetSpot never changed is left as it is (no call).
func TestSetSpotWithoutATier(t *testing.T) {
	cases := []struct {
		name    string
		options *volcengine.Distribution
		before  planner.Spot
		want    mix
		wantSet bool
	}{
		{"never planned, no options", nil, planner.Spot{}, mix{}, false},
		{"planned, no options: all on demand", nil, planner.Spot{Share: 0.5, BaseOnDemand: 1}, mix{0, 100, true, true}, true},
		{"planned, options: the options", &volcengine.Distribution{OnDemandBase: sdk.Int32(3), OnDemandPercentage: sdk.Int32(40)},
			planner.Spot{Share: 0.6, BaseOnDemand: 3}, mix{3, 40, true, true}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{Distribution: tc.options})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 40, Desired: 6})
			ctx := context.Background()
			if tc.before.Tier() {
				if err := f.act.SetSpot(ctx, "scg-gpu", tc.before, "plan"); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.act.SetSpot(ctx, "scg-gpu", planner.Spot{}, "spot block removed"); err != nil {
				t.Fatal(err)
			}
			got, _, ok := describeMix(t, f.srv, "scg-gpu")
			if ok != tc.wantSet || got != tc.want {
				t.Errorf("mix %+v (set %v), want %+v (set %v)", got, ok, tc.want, tc.wantSet)
			}
			if !tc.wantSet && len(f.srv.Calls("ModifyScalingGroup")) != 0 {
				t.Errorf("a group never given a spot tier was modified")
			}
		})
	}
}

// A zone-wide spot stock-out takes every spot member at once. With the
// plan's on-demand fallback (CompensateWithOnDemand) the group launches
// on-demand replacements at once, and they serve before the next
// decision: the InService count is restored within one interval. Without
// it the group stays short until spot returns.
func TestSpotStockOutIsAnsweredOnDemand(t *testing.T) {
	const interval, boot = time.Minute, 40 * time.Second
	cases := []struct {
		fallback            string
		wantReady, wantSpot int // one interval after the stock-out
	}{
		{planner.SpotFallbackOnDemand, 8, 0},
		{planner.SpotFallbackNone, 5, 0},
	}
	for _, tc := range cases {
		t.Run("fallback "+tc.fallback, func(t *testing.T) {
			f, clock := spotGroup(t, volcengine.Options{}, boot, planner.Spot{Share: 0.5, BaseOnDemand: 2, Fallback: tc.fallback}, 8)
			ctx := context.Background()
			clock.Advance(interval)
			if ready, spot := serving(t, f); ready != 8 || spot != 3 {
				t.Fatalf("before the stock-out: %d serving, %d on spot; want 8 with 3 on spot (half of the 6 above the base of 2)", ready, spot)
			}
			if lost := f.srv.StockOut("scg-gpu"); len(lost) != 3 {
				t.Fatalf("the stock-out took %v, want the 3 spot members", lost)
			}
			clock.Advance(interval)
			if ready, spot := serving(t, f); ready != tc.wantReady || spot != tc.wantSpot {
				t.Errorf("one interval after the stock-out: %d serving, %d on spot; want %d, %d", ready, spot, tc.wantReady, tc.wantSpot)
			}
			c, err := f.act.Capacity(ctx, "scg-gpu")
			if err != nil || c.Desired != 8 {
				t.Errorf("Capacity = %+v, %v; want desired 8 throughout", c, err)
			}
			f.srv.SpotReturns("scg-gpu")
			clock.Advance(interval)
			if ready, _ := serving(t, f); ready != 8 {
				t.Errorf("once spot returns: %d serving, want 8", ready)
			}
		})
	}
}

// spotGroup is a fixture whose group scg-gpu (empty, max 20) boots its
// launches in boot on the returned clock and has been given spot's mix and
// then desired members.
func spotGroup(t *testing.T, opts volcengine.Options, boot time.Duration, spot planner.Spot, desired int) (*fixture, *actuatortest.Clock) {
	t.Helper()
	f := newFixture(t, opts)
	clock := actuatortest.NewClock(f.now)
	f.srv.BootDelay, f.srv.BootClock = boot, clock.Now
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 20})
	ctx := context.Background()
	if err := f.act.SetSpot(ctx, "scg-gpu", spot, "plan"); err != nil {
		t.Fatal(err)
	}
	if err := f.act.SetDesired(ctx, "scg-gpu", desired, "forecast"); err != nil {
		t.Fatal(err)
	}
	return f, clock
}

// spotHalf is a plan running half the fleet on spot.
var spotHalf = planner.Spot{Share: 0.5}

// serving counts the group's serving members as ReadyInstances reads them
// (each decision's read), and how many of the group's members run on
// spot.
func serving(t *testing.T, f *fixture) (ready, spot int) {
	t.Helper()
	ready, ok := f.act.ReadyInstances(context.Background(), "scg-gpu")
	if !ok {
		t.Fatal("ReadyInstances failed")
	}
	for _, m := range f.srv.Members("scg-gpu") {
		if m.Spot && m.Status == "RUNNING" {
			spot++
		}
	}
	return ready, spot
}

// A pool whose name is not its group's ID runs both tiers through the
// factory's back-end, which the service finds by type (WarmPooler,
// SpotMixer): the pool name reaches the group of options.scaling_group.
func TestTiersThroughThePoolName(t *testing.T) {
	srv := volcenginetest.New()
	t.Cleanup(srv.Close)
	srv.AddGroup(volcenginetest.Group{ID: "scg-real-id", Max: 8, Desired: 2, ScalingMode: volcenginetest.ScalingModeRecycle, InstanceIDs: []string{"i-1", "i-2"}})
	getenv := env(map[string]string{"VOLCENGINE_ACCESS_KEY": volcenginetest.DefaultAccessKey, "VOLCENGINE_SECRET_KEY": secret})
	a, err := volcengine.NewFactory(getenv, nil)(context.Background(), actuator.PoolConfig{Name: "gpu-a100", Backend: volcengine.Name},
		mustDecode(t, actuator.PoolConfig{Name: "gpu-a100", Backend: volcengine.Name, Options: map[string]string{
			"region": volcenginetest.DefaultRegion, "endpoint": srv.URL, "scaling_group": "scg-real-id"}}))
	if err != nil {
		t.Fatal(err)
	}
	sm, isMixer := a.(actuator.SpotMixer)
	wp, isPooler := a.(actuator.WarmPooler)
	if !isMixer || !isPooler {
		t.Fatalf("%T: SpotMixer %v, WarmPooler %v; want both", a, isMixer, isPooler)
	}
	ctx := context.Background()
	if err := sm.SetSpot(ctx, "gpu-a100", spotHalf, "plan"); err != nil {
		t.Fatal(err)
	}
	if err := wp.SetWarm(ctx, "gpu-a100", 1, "plan"); err != nil {
		t.Fatal(err)
	}
	if g, _ := srv.Group("scg-real-id"); g.Distribution == nil || g.Distribution.OnDemandPercentageAboveBaseCapacity != 50 || g.Desired != 3 {
		t.Errorf("group: distribution %+v, desired %d; want 50%% on demand and one launch for the warm tier", g.Distribution, g.Desired)
	}
}

// mustDecode decodes a pool's options as the registry does.
func mustDecode(t *testing.T, p actuator.PoolConfig) actuator.OptionValues {
	t.Helper()
	opts, problems := volcengine.PoolOptions.Decode(p)
	if err := actuator.OptionError(p.Name, problems); err != nil {
		t.Fatal(err)
	}
	return opts
}

// A spot interruption while the zone has stock is answered by the group on
// spot again, the mix kept, as the group's SpotInstanceRemedy says: with
// the remedy on (options.spot_remedy's default) the replacements start at
// the notice and the interrupted members serve until they do, so the group
// never serves fewer; with it off the interrupted members go at once and
// the group is short by them until their replacements have booted.
func TestSpotInterruptionIsReplacedOnSpot(t *testing.T) {
	const boot = 30 * time.Second
	cases := []struct {
		name   string
		static *volcengine.Distribution // the pool's spot-mix options
		remedy bool                     // the group's SpotInstanceRemedy
		// serving (ReadyInstances) at the notice and half a boot after
		atNotice, midBoot int
	}{
		{"remedy on", nil, true, 5, 5},
		{"remedy off", &volcengine.Distribution{SpotRemedy: sdk.Bool(false)}, false, 3, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, clock := spotGroup(t, volcengine.Options{Distribution: tc.static}, boot, planner.Spot{Share: 1, BaseOnDemand: 1, Fallback: planner.SpotFallbackNone}, 5)
			if got, _, _ := describeMix(t, f.srv, "scg-gpu"); got.remedy != tc.remedy {
				t.Fatalf("the group's SpotInstanceRemedy is %v, want %v", got.remedy, tc.remedy)
			}
			clock.Advance(time.Minute)
			lost := f.srv.Interrupt("scg-gpu", 2)
			if len(lost) != 2 {
				t.Fatalf("interrupted %v, want 2 spot members", lost)
			}
			if ready, _ := serving(t, f); ready != tc.atNotice {
				t.Errorf("at the interruption: %d serving, want %d", ready, tc.atNotice)
			}
			clock.Advance(boot / 2)
			if ready, _ := serving(t, f); ready != tc.midBoot {
				t.Errorf("half a boot after the interruption: %d serving, want %d", ready, tc.midBoot)
			}
			if g, _ := f.srv.Group("scg-gpu"); g.Desired != 5 {
				t.Errorf("the group asks for %d, want 5 throughout", g.Desired)
			}
			clock.Advance(boot / 2)
			if ready, spot := serving(t, f); ready != 5 || spot != 4 {
				t.Errorf("a boot after the interruption: %d serving, %d on spot; want 5 with 4 on spot above the base of 1", ready, spot)
			}
			members := f.srv.Members("scg-gpu")
			for _, m := range members {
				if slices.Contains(lost, m.ID) {
					t.Errorf("interrupted member %s is still in the group once its replacement serves: %+v", m.ID, m)
				}
			}
			if len(members) != 5 {
				t.Errorf("%d members, want the 5 asked for", len(members))
			}
		})
	}
}

// Through actuator.Safe, as the service calls them, both tiers reach the
// group once per change, audited; a repeat of the warm size settles the
// tier instead (SettleWarm): nothing while the launches boot, and once
// they serve it recycles them, audited as a settling.
func TestTiersThroughSafe(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	clock := actuatortest.NewClock(f.now)
	f.srv.BootDelay, f.srv.BootClock = 5*time.Minute, clock.Now
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 16, Desired: 2, ScalingMode: volcenginetest.ScalingModeRecycle, InstanceIDs: []string{"i-1", "i-2"}})
	var audit syncBuffer
	safe := actuator.NewSafe(f.act, actuator.SafetyOptions{Audit: &audit, Pools: []actuator.PoolConfig{
		{Name: "scg-gpu", Backend: volcengine.Name, Limits: planner.Limits{MaxInstances: 16}}}})
	ctx := context.Background()
	for range 2 {
		if err := safe.SetSpot(ctx, "scg-gpu", planner.Spot{Share: 0.5, BaseOnDemand: 2}, "plan"); err != nil {
			t.Fatal(err)
		}
		if err := safe.SetWarm(ctx, "scg-gpu", 2, "plan"); err != nil {
			t.Fatal(err)
		}
	}
	if got, _, ok := describeMix(t, f.srv, "scg-gpu"); !ok || got != (mix{2, 50, true, true}) {
		t.Errorf("mix %+v, want base 2, 50%% on demand, remedy and compensation", got)
	}
	if g, _ := f.srv.Group("scg-gpu"); g.Desired != 4 {
		t.Errorf("group desired %d, want 4: the 2 serving and 2 launches for the warm tier", g.Desired)
	}
	if n := len(f.srv.Calls("ModifyScalingGroup")); n != 2 {
		t.Errorf("%d ModifyScalingGroup calls, want 2 (one mix, one launch; the repeats change nothing while the launches boot)", n)
	}
	if n := strings.Count(audit.String(), `"op":"set_warm"`); n != 1 {
		t.Errorf("%d set_warm audit lines, want 1 (a settling that changes nothing is not audited):\n%s", n, audit.String())
	}
	clock.Advance(5 * time.Minute)
	if err := safe.SetWarm(ctx, "scg-gpu", 2, "plan"); err != nil {
		t.Fatal(err)
	}
	if g, _ := f.srv.Group("scg-gpu"); g.Desired != 2 || len(membersIn(f.srv, "STOPPED")) != 2 {
		t.Errorf("once the launches serve, the repeat left the group at desired %d with %v stopped; want 2 and 2", g.Desired, membersIn(f.srv, "STOPPED"))
	}
	if n := strings.Count(audit.String(), "settling what was applied"); n != 1 {
		t.Errorf("%d settlings audited, want the 1 that recycled:\n%s", n, audit.String())
	}
}

// The Actuator serialises the changes to one scaling group, not to all of
// them: while a resize of one group waits on the API, a resize of another
// group, with the plan's spot mix, goes through.
func TestGroupsChangeIndependently(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	for _, id := range []string{"scg-slow", "scg-other"} {
		f.srv.AddGroup(volcenginetest.Group{ID: id, Max: 20})
	}
	ctx := context.Background()
	for _, id := range []string{"scg-slow", "scg-other"} {
		if err := f.act.SetSpot(ctx, id, planner.Spot{Share: 0.5}, "plan"); err != nil {
			t.Fatal(err)
		}
	}
	held, release := make(chan struct{}), make(chan struct{})
	f.srv.OnCall(func(c volcenginetest.Call) {
		if c.Action == "ModifyScalingGroup" && c.Params.Get("ScalingGroupId") == "scg-slow" && c.Params.Get("DesireInstanceNumber") != "" {
			close(held)
			<-release
		}
	})
	slow := make(chan error, 1)
	go func() { slow <- f.act.SetDesired(ctx, "scg-slow", 4, "forecast") }()
	<-held
	other := make(chan error, 1)
	go func() { other <- f.act.SetDesired(ctx, "scg-other", 6, "forecast") }()
	select {
	case err := <-other:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("a resize of one group waited on another group's resize")
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int32{"scg-slow": 4, "scg-other": 6} {
		if g, _ := f.srv.Group(id); g.Desired != int(want) {
			t.Errorf("group %s desired %d, want %d", id, g.Desired, want)
		}
	}
}
