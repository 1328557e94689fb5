package volcengine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/planner"
)

// ecsFixture is an ECS pool of the instances named, in that order, on
// the loopback stand-in, whose boots' clock the test moves.
type ecsFixture struct {
	*fixture
	pool  *volcengine.ECSPool
	clock *actuatortest.Clock
}

const startDelay, stopDelay = 40 * time.Second, 20 * time.Second

// newECSFixture adds the instances with the statuses given ("RUNNING",
// "STOPPED", "STARTING", "STOPPING", "LOCAL": running and refusing
// StopCharging) and makes the pool of their IDs, i-0, i-1, ...
func newECSFixture(t *testing.T, opts volcengine.Options, statuses ...string) *ecsFixture {
	t.Helper()
	f := &ecsFixture{fixture: newFixture(t, opts)}
	f.clock = actuatortest.NewClock(f.now)
	f.srv.BootClock, f.srv.StartDelay, f.srv.StopDelay = f.clock.Now, startDelay, stopDelay
	var ids []string
	for i, st := range statuses {
		in := volcenginetest.Instance{ID: fmt.Sprintf("i-%d", i), Status: st}
		switch st {
		case "STARTING":
			in.Status, in.ReadyAt = "RUNNING", f.now.Add(10*time.Second)
		case "STOPPING":
			in.Status, in.ReadyAt = "STOPPED", f.now.Add(10*time.Second)
		case "LOCAL":
			in.Status, in.RefusesStopCharging = "RUNNING", true
		}
		f.srv.AddInstance(in)
		ids = append(ids, in.ID)
	}
	pool, err := volcengine.NewECSPool(f.act, "gpu", ids)
	if err != nil {
		t.Fatal(err)
	}
	f.pool = pool
	return f
}

func repeat(status string, n int) []string { return slices.Repeat([]string{status}, n) }

func TestECSPoolCapacityCountsRunningReadyAndStopped(t *testing.T) {
	tests := []struct {
		name     string
		statuses []string
		want     actuator.Capacity
	}{
		{"all running", repeat("RUNNING", 3),
			actuator.Capacity{Current: 3, Ready: 3, ReadyKnown: true, StoppedKnown: true, Desired: 3, Max: 3}},
		{"running, starting and stopped", []string{"RUNNING", "STARTING", "STOPPED", "STOPPED"},
			actuator.Capacity{Current: 2, Ready: 1, ReadyKnown: true, Stopped: 2, StoppedKnown: true, Desired: 2, Max: 4}},
		{"a stopping instance counts in none", []string{"RUNNING", "STOPPING", "STOPPED"},
			actuator.Capacity{Current: 1, Ready: 1, ReadyKnown: true, Stopped: 1, StoppedKnown: true, Desired: 1, Max: 3}},
		{"more instances than one page of the stand-in", append(repeat("RUNNING", 7), repeat("STOPPED", 8)...),
			actuator.Capacity{Current: 7, Ready: 7, ReadyKnown: true, Stopped: 8, StoppedKnown: true, Desired: 7, Max: 15}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newECSFixture(t, volcengine.Options{}, tt.statuses...)
			got, err := f.pool.Capacity(context.Background(), "gpu")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Capacity = %+v, want %+v", got, tt.want)
			}
			calls := f.srv.Calls("DescribeInstances")
			for _, c := range calls {
				checkCall(t, c, "ecs", volcenginetest.ECSVersion)
			}
			if len(tt.statuses) > 10 && (len(calls) < 2 || calls[1].Params.Get("NextToken") == "") {
				t.Errorf("%d DescribeInstances calls, want the second page read with NextToken", len(calls))
			}
		})
	}
}

func TestECSPoolCapacityRefusesAnInstanceTheAPIDoesNotReturn(t *testing.T) {
	f := newECSFixture(t, volcengine.Options{}, "RUNNING")
	pool, err := volcengine.NewECSPool(f.act, "gpu", []string{"i-0", "i-gone"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Capacity(context.Background(), "gpu")
	if !errors.Is(err, actuator.ErrRejected) || !strings.Contains(err.Error(), "instance_ids lists i-gone") {
		t.Errorf("err = %v, want a rejection naming instance_ids and i-gone", err)
	}
}

func TestECSPoolSetDesired(t *testing.T) {
	tests := []struct {
		name     string
		opts     volcengine.Options
		statuses []string
		desired  int
		// want is each instance's status (DescribeInstances) right after
		// the call, and wantSettled once starts and stops have finished.
		want, wantSettled []string
		// wantModes are the StoppedModes of the instances stopped.
		wantModes map[string]string
		wantErr   error
		wantText  string
		// retry asks for the size again once settled: it must then succeed.
		retry bool
	}{
		{name: "scaling up starts the first stopped instances", statuses: []string{"RUNNING", "STOPPED", "STOPPED", "STOPPED"}, desired: 3,
			want:        []string{"RUNNING", "STARTING", "STARTING", "STOPPED"},
			wantSettled: []string{"RUNNING", "RUNNING", "RUNNING", "STOPPED"}},
		{name: "scaling down stops the last running ones with StopCharging", statuses: []string{"RUNNING", "RUNNING", "RUNNING", "STOPPED"}, desired: 1,
			want:        []string{"RUNNING", "STOPPING", "STOPPING", "STOPPED"},
			wantSettled: []string{"RUNNING", "STOPPED", "STOPPED", "STOPPED"},
			wantModes:   map[string]string{"i-1": volcengine.StopCharging, "i-2": volcengine.StopCharging}},
		{name: "an instance refusing StopCharging is stopped with KeepCharging", statuses: []string{"RUNNING", "LOCAL"}, desired: 0,
			want:        []string{"STOPPING", "STOPPING"},
			wantSettled: []string{"STOPPED", "STOPPED"},
			wantModes:   map[string]string{"i-0": volcengine.StopCharging, "i-1": volcengine.KeepCharging}},
		{name: "without the fallback the refusal is an error", opts: volcengine.Options{NoStopChargingFallback: true}, statuses: []string{"RUNNING", "LOCAL"}, desired: 0,
			want: []string{"RUNNING", "RUNNING"}, wantSettled: []string{"RUNNING", "RUNNING"}, wantErr: actuator.ErrRejected, wantText: "falling back to KeepCharging is disabled"},
		{name: "the size it has changes nothing", statuses: []string{"RUNNING", "STOPPED"}, desired: 1,
			want: []string{"RUNNING", "STOPPED"}, wantSettled: []string{"RUNNING", "STOPPED"}},
		{name: "more than instance_ids lists is refused", statuses: []string{"RUNNING", "STOPPED"}, desired: 3,
			want: []string{"RUNNING", "STOPPED"}, wantSettled: []string{"RUNNING", "STOPPED"}, wantErr: actuator.ErrRejected, wantText: "options.instance_ids lists 2"},
		{name: "instances still stopping start on a retry", retry: true, statuses: []string{"RUNNING", "STOPPING", "STOPPED"}, desired: 3,
			want: []string{"RUNNING", "STOPPING", "STARTING"}, wantSettled: []string{"RUNNING", "STOPPED", "RUNNING"}, wantErr: actuator.ErrTransient, wantText: "only 1 are stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newECSFixture(t, tt.opts, tt.statuses...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// One logical call: a retry sends the same token, as Safe does.
			ctx = actuator.WithIdempotencyToken(ctx, "call-token")
			err := f.pool.SetDesired(ctx, "gpu", tt.desired, "test")
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && (!errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText)) {
				t.Fatalf("SetDesired(%d): err = %v, want %v containing %q", tt.desired, err, tt.wantErr, tt.wantText)
			}
			if tt.desired > len(tt.statuses) && len(f.srv.Calls("")) != 0 {
				t.Errorf("a refused size made %d calls, want none", len(f.srv.Calls("")))
			}
			f.checkStatuses(t, "right after", tt.want)
			f.clock.Advance(max(startDelay, stopDelay))
			f.checkStatuses(t, "settled", tt.wantSettled)
			if tt.retry {
				if err := f.pool.SetDesired(ctx, "gpu", tt.desired, "test"); err != nil {
					t.Fatalf("SetDesired(%d) again once settled: %v", tt.desired, err)
				}
				f.clock.Advance(startDelay)
				f.checkStatuses(t, "after the retry", repeat("RUNNING", tt.desired))
			}
			for id, mode := range tt.wantModes {
				if in, _ := f.srv.Instance(id); in.StoppedMode != mode {
					t.Errorf("%s stopped in mode %q, want %q", id, in.StoppedMode, mode)
				}
			}
			if tt.wantModes[fmt.Sprintf("i-%d", len(tt.statuses)-1)] == volcengine.KeepCharging && !strings.Contains(f.log.String(), "falling back to KeepCharging") {
				t.Errorf("the KeepCharging fallback was not logged:\n%s", f.log.String())
			}
		})
	}
}

// checkStatuses compares the instances' statuses, as Capacity's read
// sees them, with want, in the order of instance_ids.
func (f *ecsFixture) checkStatuses(t *testing.T, when string, want []string) {
	t.Helper()
	c, err := f.pool.Capacity(context.Background(), "gpu")
	if err != nil {
		t.Fatal(err)
	}
	var running, ready, stopped int
	for _, s := range want {
		switch s {
		case "RUNNING":
			running, ready = running+1, ready+1
		case "STARTING":
			running++
		case "STOPPED":
			stopped++
		}
	}
	if c.Current != running || c.Ready != ready || c.Stopped != stopped {
		t.Errorf("%s: Capacity = %+v, want %d running, %d ready, %d stopped (%v)", when, c, running, ready, stopped, want)
	}
	for i, s := range want {
		id := fmt.Sprintf("i-%d", i)
		in, _ := f.srv.Instance(id)
		got := in.Status
		if f.clock.Now().Before(in.ReadyAt) {
			got = map[string]string{"RUNNING": "STARTING", "STOPPED": "STOPPING"}[got]
		}
		if got != s {
			t.Errorf("%s: %s is %s, want %s", when, id, got, s)
		}
	}
}

func TestECSPoolStopsCarryAClientTokenEach(t *testing.T) {
	f := newECSFixture(t, volcengine.Options{}, repeat("RUNNING", 3)...)
	ctx := actuator.WithIdempotencyToken(context.Background(), "call-token")
	if err := f.pool.SetDesired(ctx, "gpu", 0, "test"); err != nil {
		t.Fatal(err)
	}
	var tokens, order []string
	for _, c := range f.srv.Calls("StopInstances") {
		checkCall(t, c, "ecs", volcenginetest.ECSVersion)
		tokens = append(tokens, c.Params.Get("ClientToken"))
		order = append(order, c.Params.Get("InstanceIds.1"))
	}
	if !slices.Equal(order, []string{"i-2", "i-1", "i-0"}) {
		t.Errorf("stopped %v, want the last running first: i-2, i-1, i-0", order)
	}
	for i, tok := range tokens {
		if !strings.HasPrefix(tok, "call-token-") || slices.Contains(tokens[:i], tok) {
			t.Errorf("ClientTokens %q: want one per instance, each from the call's token", tokens)
			break
		}
	}
}

func TestECSPoolSetWarm(t *testing.T) {
	tests := []struct {
		name     string
		statuses []string
		desired  int // -1: no SetDesired first
		warm     int
		wantText string // "" when accepted
	}{
		{"the stopped instances are the warm tier", repeat("STOPPED", 4), 2, 2, ""},
		{"no warm tier always fits", repeat("RUNNING", 2), 2, 0, ""},
		{"before any resize the running instances are the desired size", []string{"RUNNING", "STOPPED", "STOPPED"}, -1, 2, ""},
		{"too few instance IDs", repeat("STOPPED", 4), 3, 3, "needs 2 more instance IDs in options.instance_ids (it lists 4)"},
		{"too few before any resize", []string{"RUNNING", "RUNNING", "STOPPED"}, -1, 2, "needs 1 more instance IDs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newECSFixture(t, volcengine.Options{}, tt.statuses...)
			ctx := context.Background()
			if tt.desired >= 0 {
				if err := f.pool.SetDesired(ctx, "gpu", tt.desired, "test"); err != nil {
					t.Fatal(err)
				}
			}
			err := f.pool.SetWarm(ctx, "gpu", tt.warm, "test")
			if tt.wantText == "" && err != nil || tt.wantText != "" && (!errors.Is(err, actuator.ErrRejected) || !strings.Contains(err.Error(), tt.wantText)) {
				t.Errorf("SetWarm(%d): err = %v, want %q", tt.warm, err, tt.wantText)
			}
		})
	}
}

func TestECSPoolReleaseStopsOnlyItsInstances(t *testing.T) {
	f := newECSFixture(t, volcengine.Options{}, "RUNNING", "RUNNING")
	f.srv.AddInstance(volcenginetest.Instance{ID: "i-other"})
	ctx := context.Background()
	if err := f.pool.Release(ctx, "i-1", "idle"); err != nil {
		t.Fatal(err)
	}
	if in, _ := f.srv.Instance("i-1"); in.Status != "STOPPED" || in.StoppedMode != volcengine.StopCharging {
		t.Errorf("i-1 = %+v, want stopped with StopCharging", in)
	}
	if err := f.pool.Release(ctx, "i-other", "idle"); !errors.Is(err, actuator.ErrRejected) || !strings.Contains(err.Error(), "instance_ids") {
		t.Errorf("releasing an instance of no pool: err = %v, want a rejection naming instance_ids", err)
	}
	if err := f.pool.PublishSchedule(ctx, "gpu", nil); !errors.Is(err, actuator.ErrNotImplemented) {
		t.Errorf("PublishSchedule: err = %v, want ErrNotImplemented", err)
	}
}

func TestECSPoolOptionsRefuseBadInstanceIDs(t *testing.T) {
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("i-%d", i)
	}
	tests := []struct {
		name, ids, want string
	}{
		{"missing", "", "is required"},
		{"only commas", ", ,", "lists no instance ID"},
		{"not an instance ID", "i-a,sg-b", `"sg-b" is not an ECS instance ID`},
		{"a space inside", "i-a,i-b c", `"i-b c" is not an ECS instance ID`},
		{"listed twice", "i-a,i-b,i-a", "lists i-a twice"},
		{"more than one page", strings.Join(many, ","), "lists 101 instance IDs: at most 100"},
		{"fewer than max", "i-a,i-b,i-c", "max 4 is more than the 3 instances options.instance_ids lists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := actuator.PoolConfig{Name: "gpu", Backend: volcengine.ECSName, Limits: planner.Limits{MaxInstances: 4},
				Options: map[string]string{volcengine.OptRegion: volcenginetest.DefaultRegion}}
			if tt.name != "missing" {
				pool.Options[volcengine.OptInstanceIDs] = tt.ids
			}
			reg := actuator.NewRegistry()
			if err := reg.Register(volcengine.ECSName, volcengine.NewECSFactory(func(string) string { return "x" }, nil), volcengine.ECSPoolOptions); err != nil {
				t.Fatal(err)
			}
			_, err := reg.New(context.Background(), volcengine.ECSName, pool)
			if err == nil || !strings.Contains(err.Error(), "options.instance_ids") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming options.instance_ids with %q", err, tt.want)
			}
		})
	}
	t.Run("well-formed", func(t *testing.T) {
		_, problems := volcengine.ECSPoolOptions.Decode(actuator.PoolConfig{Name: "gpu", Backend: volcengine.ECSName,
			Options: map[string]string{volcengine.OptInstanceIDs: " i-3tiefmkskq3vj0, i-b2 "}})
		if len(problems) != 0 {
			t.Errorf("problems = %v, want none", problems)
		}
	})
}
