package volcengine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
)

// With release_mode recycle, releasing a member of the pool's group (in
// ScalingMode recycle) removes it in recycle mode (kept stopped in the
// group, one fewer asked for); a member of a pool in stop mode, and an instance outside every
// group, are stopped with StopInstances as before. The note says which.
func TestRecycleMembers(t *testing.T) {
	cases := []struct {
		name, instance string
		wantAction     string // the call that released it
		wantNote       string
		wantDesired    map[string]int // groups' desired sizes after
	}{
		{"a member of a recycling pool", "i-a1", "RemoveInstances", "recycled in scaling group scg-a", map[string]int{"scg-a": 2, "scg-b": 3}},
		{"a member of a stopping pool", "i-b1", "StopInstances", "stopped with StopCharging", map[string]int{"scg-a": 3, "scg-b": 3}},
		{"an instance in no group", "i-loose", "StopInstances", "stopped with StopCharging", map[string]int{"scg-a": 3, "scg-b": 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-a", Min: 1, Max: 8, Desired: 3, ScalingMode: volcenginetest.ScalingModeRecycle, InstanceIDs: []string{"i-a1", "i-a2", "i-a3"}})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-b", Min: 1, Max: 8, Desired: 3, InstanceIDs: []string{"i-b1", "i-b2", "i-b3"}})
			for _, id := range []string{"i-a1", "i-a2", "i-a3", "i-b1", "i-b2", "i-b3", "i-loose"} {
				f.srv.AddInstance(volcenginetest.Instance{ID: id, Status: "RUNNING"})
			}
			pools := []actuator.PoolConfig{
				{Name: "sd", Backend: volcengine.Name, Options: map[string]string{"scaling_group": "scg-a", "release_mode": "recycle"}},
				{Name: "scg-b", Backend: volcengine.Name},
			}
			rel := volcengine.RecycleMembers(f.act, pools)
			ctx, stops := volcengine.RecordStops(context.Background())
			if err := rel.Release(ctx, tc.instance, "idle"); err != nil {
				t.Fatal(err)
			}
			if n := len(f.srv.Calls(tc.wantAction)); n != 1 {
				t.Errorf("%d %s calls, want 1", n, tc.wantAction)
			}
			if tc.wantAction == "RemoveInstances" {
				c := onlyCall(t, f.srv, "RemoveInstances")
				checkCall(t, c, "auto_scaling", "2020-01-01")
				if c.Params.Get("RemoveMode") != "recycle" || c.Params.Get("DecreaseDesiredCapacity") != "true" ||
					c.Params.Get("ScalingGroupId") != "scg-a" || c.Params.Get("InstanceIds.1") != tc.instance {
					t.Errorf("RemoveInstances params %v; want scg-a, %s, RemoveMode recycle, DecreaseDesiredCapacity true", c.Params, tc.instance)
				}
				if n := len(f.srv.Calls("StopInstances")); n != 0 {
					t.Errorf("%d StopInstances calls besides the recycle, want none", n)
				}
			}
			if in, _ := f.srv.Instance(tc.instance); in.Status != "STOPPED" {
				t.Errorf("instance %s is %s, want STOPPED", tc.instance, in.Status)
			}
			for g, want := range tc.wantDesired {
				if got, _ := f.srv.Group(g); got.Desired != want || len(got.InstanceIDs) != 3 {
					t.Errorf("group %s: desired %d with %d members, want %d with its 3 (a recycled one stays)", g, got.Desired, len(got.InstanceIDs), want)
				}
			}
			if s := stops(); len(s) != 1 || !strings.Contains(s[0].Note, tc.wantNote) {
				t.Errorf("recorded %+v, want one note saying %q", s, tc.wantNote)
			}
		})
	}
	f := newFixture(t, volcengine.Options{})
	if got := volcengine.RecycleMembers(f.act, []actuator.PoolConfig{{Name: "scg-b", Backend: volcengine.Name}}); got != actuator.Actuator(f.act) {
		t.Errorf("with no pool in recycle mode RecycleMembers returned %T, want the actuator itself", got)
	}
}

// On a group in ScalingMode release, RemoveInstances with RemoveMode
// recycle would release the member: a release in recycle mode is refused
// there, naming release_mode, and the member keeps running.
func TestRecycleRefusesAReleaseModeGroup(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-a", Min: 0, Max: 8, Desired: 2, ScalingMode: volcenginetest.ScalingModeRelease, InstanceIDs: []string{"i-a1", "i-a2"}})
	rel := volcengine.RecycleMembers(f.act, []actuator.PoolConfig{{Name: "scg-a", Backend: volcengine.Name, Options: map[string]string{"release_mode": "recycle"}}})
	err := rel.Release(context.Background(), "i-a1", "idle")
	if !errors.Is(err, actuator.ErrRejected) || !strings.Contains(err.Error(), `ScalingMode "release"`) || !strings.Contains(err.Error(), "release_mode: stop") {
		t.Errorf("err = %v, want ErrRejected naming the mode and release_mode", err)
	}
	if n := len(f.srv.Calls("RemoveInstances")); n != 0 {
		t.Errorf("%d RemoveInstances calls, want none", n)
	}
	if in, ok := f.srv.Instance("i-a1"); !ok || in.Status != "RUNNING" {
		t.Errorf("instance %+v (exists %v), want it running in the group", in, ok)
	}
}
