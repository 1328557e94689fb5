package volcengine_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
)

// The warm tier of a group in ScalingMode recycle follows SetWarm up and
// down: a shortfall is launched (the group's desired size holds the
// launches beside the serving size, which Capacity keeps reporting),
// recycled once the launches serve, at the next settling (SettleWarm, the
// repeat of SetWarm at each decision), and a surplus is released. A
// scale-out starts the stopped members first, which serve after the warm
// start, long before a cold boot, and the next settling refills the tier.
func TestWarmTierFollowsSetWarm(t *testing.T) {
	const boot, warmStart, interval = 5 * time.Minute, 30 * time.Second, time.Minute
	f := newFixture(t, volcengine.Options{})
	clock := actuatortest.NewClock(f.now)
	f.srv.BootDelay, f.srv.WarmStart, f.srv.BootClock = boot, warmStart, clock.Now
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 20, Desired: 4, ScalingMode: volcenginetest.ScalingModeRecycle,
		InstanceIDs: []string{"i-1", "i-2", "i-3", "i-4"}})
	ctx := context.Background()

	type want struct{ stopped, serving, desired int }
	check := func(step string, w want) {
		t.Helper()
		if _, err := f.act.SettleWarm(ctx, "scg-gpu"); err != nil { // each decision's SetWarm settles the tier
			t.Fatalf("%s: %v", step, err)
		}
		c, err := f.act.Capacity(ctx, "scg-gpu")
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		g, _ := f.srv.Group("scg-gpu")
		stopped := 0
		for _, m := range f.srv.Members("scg-gpu") {
			if m.Status == "STOPPED" {
				stopped++
			}
		}
		if stopped != w.stopped || c.Current != w.serving || c.Desired != w.serving || g.Desired != w.desired {
			t.Errorf("%s: %d stopped, Capacity %+v, group desired %d; want %d stopped, current and desired %d, group desired %d",
				step, stopped, c, g.Desired, w.stopped, w.serving, w.desired)
		}
	}
	setWarm := func(warm int) {
		t.Helper()
		if err := f.act.SetWarm(ctx, "scg-gpu", warm, "plan"); err != nil {
			t.Fatal(err)
		}
	}

	setWarm(3)
	check("warm 3 asked: 3 launched beside the 4 serving", want{stopped: 0, serving: 4, desired: 7})
	clock.Advance(boot + interval)
	check("the launches serve: recycled at the settling", want{stopped: 3, serving: 4, desired: 4})
	stoppedBefore := membersIn(f.srv, "STOPPED")

	if err := f.act.SetDesired(ctx, "scg-gpu", 6, "ramp"); err != nil {
		t.Fatal(err)
	}
	started := slices.DeleteFunc(slices.Clone(stoppedBefore), func(id string) bool { return slices.Contains(membersIn(f.srv, "STOPPED"), id) })
	if len(started) != 2 {
		t.Fatalf("the scale-out by 2 started %v of the stopped %v, want 2 of them", started, stoppedBefore)
	}
	// The refill raises the desired size by the 2 missing and the 1 still
	// stopped, which the group starts first.
	check("after a scale-out by 2: the tier refilled by 3 launches", want{stopped: 0, serving: 6, desired: 9})
	clock.Advance(interval)
	check("the stopped one serves again after its warm start: recycled", want{stopped: 1, serving: 6, desired: 8})
	if ready, _ := f.act.ReadyInstances(ctx, "scg-gpu"); ready != 6 {
		t.Errorf("one interval after the scale-out: %d serving, want 6 (the stopped members start in %v, a boot takes %v)", ready, warmStart, boot)
	}
	clock.Advance(boot)
	check("the cold launches serve: recycled", want{stopped: 3, serving: 6, desired: 6})

	setWarm(1)
	check("warm 1: two stopped released", want{stopped: 1, serving: 6, desired: 6})
	setWarm(4)
	clock.Advance(boot)
	check("warm 4 after a boot", want{stopped: 4, serving: 6, desired: 6})
	if err := f.act.SetDesired(ctx, "scg-gpu", 3, "evening"); err != nil {
		t.Fatal(err)
	}
	check("a scale-in by 3 stops 3 more, released beyond the tier", want{stopped: 4, serving: 3, desired: 3})
	setWarm(0)
	check("warm 0", want{stopped: 0, serving: 3, desired: 3})
	if n := len(f.srv.Calls("RemoveInstances")); n == 0 {
		t.Error("no RemoveInstances call")
	}
	for _, c := range f.srv.Calls("RemoveInstances") {
		checkCall(t, c, "auto_scaling", "2020-01-01")
		mode, decrease := c.Params.Get("RemoveMode"), c.Params.Get("DecreaseDesiredCapacity")
		if !(mode == "recycle" && decrease == "true") && !(mode == "release" && decrease == "false") {
			t.Errorf("RemoveInstances with RemoveMode %q, DecreaseDesiredCapacity %q; want recycle with true (launches) or release with false (stopped)", mode, decrease)
		}
	}
}

// The warm tier recycles the members its own launch started, never those
// that served the desired size before it: neither when both were created
// in the same second (CreatedTime has one-second resolution) nor when the
// serving ones are older, and a stopped member the tier's launch started
// first is stopped again.
func TestWarmTierRecyclesItsOwnLaunches(t *testing.T) {
	const boot = 5 * time.Minute
	cases := []struct {
		name             string
		running, stopped []string      // the group's members at the start
		between          time.Duration // from the serving scale-out to the tier's launch
		serving, warm    int
	}{
		{"launched in the same second", nil, nil, 0, 6, 6},
		{"launched a minute apart", nil, nil, time.Minute, 4, 3},
		{"a stopped member started first by the tier's launch", []string{"i-1", "i-2", "i-3"}, []string{"i-0"}, 0, 3, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			clock := actuatortest.NewClock(f.now.Truncate(time.Second))
			f.srv.BootDelay, f.srv.BootClock = boot, clock.Now
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 20, Desired: len(tc.running), ScalingMode: volcenginetest.ScalingModeRecycle,
				InstanceIDs: append(slices.Clone(tc.stopped), tc.running...)})
			for _, id := range tc.stopped {
				f.srv.AddInstance(volcenginetest.Instance{ID: id, Status: "STOPPED"})
			}
			ctx := context.Background()
			if err := f.act.SetDesired(ctx, "scg-gpu", tc.serving, "plan"); err != nil {
				t.Fatal(err)
			}
			serving := membersIn(f.srv, "RUNNING")
			clock.Advance(tc.between)
			if err := f.act.SetWarm(ctx, "scg-gpu", tc.warm, "plan"); err != nil {
				t.Fatal(err)
			}
			clock.Advance(boot)
			if _, err := f.act.SettleWarm(ctx, "scg-gpu"); err != nil {
				t.Fatal(err)
			}
			if running := membersIn(f.srv, "RUNNING"); !slices.Equal(running, serving) {
				t.Errorf("running after the tier settled: %v, want those that served before its launch: %v", running, serving)
			}
			if stopped := membersIn(f.srv, "STOPPED"); len(stopped) != tc.warm || !slices.Contains(stopped, "i-0") && tc.stopped != nil {
				t.Errorf("stopped: %v, want the warm tier's %d (i-0 among them when the group had it stopped)", stopped, tc.warm)
			}
		})
	}
}

// A size set outside prewarm while the warm tier's launches are on their
// way (a scheduled policy firing, the console) drops them from the count:
// the read counts them no more, the next settling recycles no serving
// member for them, and the tier is kept from what the group then holds.
func TestWarmTierSurvivesASizeSetElsewhere(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	clock := actuatortest.NewClock(f.now)
	f.srv.BootDelay, f.srv.BootClock = 5*time.Minute, clock.Now
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 20, Desired: 4, ScalingMode: volcenginetest.ScalingModeRecycle,
		InstanceIDs: []string{"i-1", "i-2", "i-3", "i-4"}})
	ctx := context.Background()
	if err := f.act.SetWarm(ctx, "scg-gpu", 3, "plan"); err != nil {
		t.Fatal(err)
	}
	elsewhere, err := volcengine.New(testConfig(f.srv), volcengine.Options{Logger: slog.New(slog.NewTextHandler(f.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := elsewhere.SetDesired(ctx, "scg-gpu", 4, "a scheduled policy"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Minute)
	c, err := f.act.Capacity(ctx, "scg-gpu")
	if err != nil || c.Current != 4 || c.Desired != 4 {
		t.Errorf("Capacity = %+v, %v; want the 4 serving", c, err)
	}
	if _, err := f.act.SettleWarm(ctx, "scg-gpu"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"i-1", "i-2", "i-3", "i-4"} {
		if st := f.srv.Lifecycle(id); st != "InService" {
			t.Errorf("serving member %s is %s, want InService", id, st)
		}
	}
	if n := len(membersIn(f.srv, "STOPPED")); n != 3 {
		t.Errorf("%d stopped, want the warm tier's 3", n)
	}
}

// membersIn lists the group's members whose ECS status is status.
func membersIn(srv *volcenginetest.Server, status string) []string {
	var out []string
	for _, m := range srv.Members("scg-gpu") {
		if m.Status == status {
			out = append(out, m.ID)
		}
	}
	return out
}

// A group in ScalingMode release (or whose reply names no mode) keeps no
// stopped members: SetWarm refuses a warm tier with an error that names
// the mode and warm_start, and changes nothing; a warm size of 0 is fine
// there.
func TestSetWarmNeedsARecycleGroup(t *testing.T) {
	for _, mode := range []string{volcenginetest.ScalingModeRelease, ""} {
		t.Run("ScalingMode "+strconv.Quote(mode), func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 20, Desired: 2, ScalingMode: mode, InstanceIDs: []string{"i-1", "i-2"}})
			ctx := context.Background()
			err := f.act.SetWarm(ctx, "scg-gpu", 2, "plan")
			if !errors.Is(err, actuator.ErrRejected) {
				t.Fatalf("SetWarm = %v, want ErrRejected", err)
			}
			for _, w := range []string{"not in ScalingMode recycle", strconv.Quote(mode), "warm_start", "scg-gpu"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if err := f.act.SetWarm(ctx, "scg-gpu", 0, "pool removed"); err != nil {
				t.Errorf("SetWarm(0) = %v, want nil", err)
			}
			if n := len(f.srv.Calls("ModifyScalingGroup")) + len(f.srv.Calls("RemoveInstances")); n != 0 {
				t.Errorf("%d changes to the group, want none", n)
			}
			if g, _ := f.srv.Group("scg-gpu"); g.Desired != 2 {
				t.Errorf("desired %d, want 2", g.Desired)
			}
		})
	}
}

// The tiers' calls fail as every call of the package does: an *APIError
// wrapping ErrThrottled, ErrTransient or ErrRejected, with the pool and
// what was asked in the message. A warm tier that cannot be settled fails
// the settling, not the read, and the next settling finishes it.
func TestTierErrorsAreWrapped(t *testing.T) {
	cases := []struct {
		name, action string
		reply        volcenginetest.Reply
		call         func(*fixture) error
		want         error
		wantInMsg    []string
	}{
		{"SetSpot throttled", "ModifyScalingGroup", volcenginetest.Throttled,
			func(f *fixture) error { return f.act.SetSpot(context.Background(), "scg-gpu", spotHalf, "plan") },
			actuator.ErrThrottled, []string{"ModifyScalingGroup", "AccountFlowLimitExceeded"}},
		{"SetWarm cannot read the group", "DescribeScalingGroups", volcenginetest.Internal,
			func(f *fixture) error { return f.act.SetWarm(context.Background(), "scg-gpu", 2, "plan") },
			actuator.ErrTransient, []string{"DescribeScalingGroups", "InternalError"}},
		{"SetWarm's launch refused", "ModifyScalingGroup", volcenginetest.Reply{Status: 403, Code: "AccessDenied", Message: "not authorized"},
			func(f *fixture) error { return f.act.SetWarm(context.Background(), "scg-gpu", 2, "plan") },
			actuator.ErrRejected, []string{"scaling group scg-gpu: keeping 2 members stopped", "AccessDenied"}},
		{"SetWarm's release refused", "RemoveInstances", volcenginetest.Reply{Status: 400, Code: "InvalidInstance.NotInScalingGroup", Message: "gone"},
			func(f *fixture) error { return f.act.SetWarm(context.Background(), "scg-gpu", 0, "plan") },
			actuator.ErrRejected, []string{"keeping 0 members stopped", "RemoveInstances", "InvalidInstance.NotInScalingGroup"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 20, Desired: 2, ScalingMode: volcenginetest.ScalingModeRecycle,
				InstanceIDs: []string{"i-1", "i-2", "i-3"}})
			f.srv.AddInstance(volcenginetest.Instance{ID: "i-3", Status: "STOPPED"})
			f.srv.Fail(tc.action, tc.reply)
			err := tc.call(f)
			var apiErr *volcengine.APIError
			if !errors.Is(err, tc.want) || !errors.As(err, &apiErr) || apiErr.Action != tc.action {
				t.Fatalf("err = %v, want %v from %s as an *APIError", err, tc.want, tc.action)
			}
			for _, w := range tc.wantInMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}

	t.Run("a settling that fails", func(t *testing.T) {
		f := newFixture(t, volcengine.Options{})
		clock := actuatortest.NewClock(f.now)
		f.srv.BootDelay, f.srv.BootClock = time.Minute, clock.Now
		f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 20, Desired: 2, ScalingMode: volcenginetest.ScalingModeRecycle,
			InstanceIDs: []string{"i-1", "i-2"}})
		ctx := context.Background()
		if err := f.act.SetWarm(ctx, "scg-gpu", 1, "plan"); err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * time.Minute)
		f.srv.Fail("DescribeScalingInstances", volcenginetest.Internal)
		_, err := f.act.SettleWarm(ctx, "scg-gpu")
		var apiErr *volcengine.APIError
		if !errors.Is(err, actuator.ErrTransient) || !errors.As(err, &apiErr) || !strings.Contains(err.Error(), "scaling group scg-gpu: keeping 1 members stopped") {
			t.Errorf("SettleWarm = %v, want a transient *APIError naming the group and the size kept", err)
		}
		if c, err := f.act.Capacity(ctx, "scg-gpu"); err != nil || c.Desired != 2 || c.Current != 2 {
			t.Errorf("Capacity = %+v, %v; want the serving size 2 read", c, err)
		}
		if changed, err := f.act.SettleWarm(ctx, "scg-gpu"); err != nil || !changed || len(membersIn(f.srv, "STOPPED")) != 1 {
			t.Errorf("the next settling: changed %v, %v, stopped %v; want the launch recycled", changed, err, membersIn(f.srv, "STOPPED"))
		}
	})
}

// Capacity, each decision's read, only reads, however far the warm tier is
// from its size: every call it makes is a Describe*, and what it reports
// is the serving size (the tier's launches on their way left out). The
// settling the tier is due is the write path's: SettleWarm makes it with
// the calls each case names. Each case asks a group of 4 serving for a
// warm tier of 3, lets a boot pass and then changes the group.
func TestCapacityOnlyReads(t *testing.T) {
	const boot = 5 * time.Minute
	cases := []struct {
		name string
		// elsewhere is a size another client sets while the tier's
		// launches boot; resize one SetDesired sets once the tier has
		// settled (0: none).
		elsewhere, resize int
		// serving is what Capacity reports as Current and Desired.
		serving int
		// settles are the mutating actions SettleWarm then makes.
		settles []string
	}{
		{"the tier's launches serve, not yet recycled", 0, 0, 4, []string{"RemoveInstances"}},
		{"a scale-out started the stopped members", 0, 6, 6, []string{"ModifyScalingGroup"}},
		{"a scale-in stopped more than the tier keeps", 0, 2, 2, []string{"RemoveInstances"}},
		// The scale-in stopped 2 of the 3 launches: one more is launched.
		{"the size was set elsewhere while the tier's launches boot", 5, 0, 5, []string{"ModifyScalingGroup"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			clock := actuatortest.NewClock(f.now)
			f.srv.BootDelay, f.srv.BootClock = boot, clock.Now
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 20, Desired: 4, ScalingMode: volcenginetest.ScalingModeRecycle,
				InstanceIDs: []string{"i-1", "i-2", "i-3", "i-4"}})
			ctx := context.Background()
			if err := f.act.SetWarm(ctx, "scg-gpu", 3, "plan"); err != nil {
				t.Fatal(err)
			}
			if tc.elsewhere > 0 {
				other, err := volcengine.New(testConfig(f.srv), volcengine.Options{Logger: slog.New(slog.NewTextHandler(f.log, nil))})
				if err == nil {
					err = other.SetDesired(ctx, "scg-gpu", tc.elsewhere, "a scheduled policy")
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(boot)
			if tc.resize > 0 {
				_, err := f.act.SettleWarm(ctx, "scg-gpu")
				if err == nil {
					err = f.act.SetDesired(ctx, "scg-gpu", tc.resize, "plan")
				}
				if err != nil {
					t.Fatal(err)
				}
			}

			before := len(f.srv.Calls(""))
			c, err := f.act.Capacity(ctx, "scg-gpu")
			if err != nil {
				t.Fatal(err)
			}
			f.act.ReadyInstances(ctx, "scg-gpu")
			for _, call := range f.srv.Calls("")[before:] {
				if !strings.HasPrefix(call.Action, "Describe") {
					t.Errorf("the read called %s %v: a read must not change the group", call.Action, call.Params)
				}
			}
			if c.Current != tc.serving || c.Desired != tc.serving {
				t.Errorf("Capacity = %+v, want current and desired %d", c, tc.serving)
			}

			before = len(f.srv.Calls(""))
			changed, err := f.act.SettleWarm(ctx, "scg-gpu")
			if err != nil {
				t.Fatal(err)
			}
			var writes []string
			for _, call := range f.srv.Calls("")[before:] {
				if !strings.HasPrefix(call.Action, "Describe") && !slices.Contains(writes, call.Action) {
					writes = append(writes, call.Action)
				}
			}
			if !slices.Equal(writes, tc.settles) || changed != (len(tc.settles) > 0) {
				t.Errorf("SettleWarm made %v (changed %v), want %v", writes, changed, tc.settles)
			}
			if n := len(membersIn(f.srv, "STOPPED")); tc.settles[0] == "RemoveInstances" && n != 3 {
				t.Errorf("%d stopped after the settling, want the warm tier's 3", n)
			}
		})
	}
}
