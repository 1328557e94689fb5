package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/election"
	"github.com/prewarm/prewarm/poolspec"
)

// fakeShards is one replica's view of a single bucket whose owner a test
// sets; ownsAfter, when set, turns ownership off after that many checks.
type fakeShards struct {
	identity  string
	owner     *atomic.Pointer[string] // shared by the replicas of a test
	checks    atomic.Int64
	ownsAfter int64
	changes   chan struct{}
}

func newOwner(who string) *atomic.Pointer[string] {
	var p atomic.Pointer[string]
	p.Store(&who)
	return &p
}

func (f *fakeShards) Identity() string         { return f.identity }
func (f *fakeShards) Bucket(string) int        { return 0 }
func (f *fakeShards) Owner(string) string      { return *f.owner.Load() }
func (f *fakeShards) Changes() <-chan struct{} { return f.changes }
func (f *fakeShards) Owns(string) bool {
	n := f.checks.Add(1)
	if f.ownsAfter > 0 && n > f.ownsAfter {
		return false
	}
	return *f.owner.Load() == f.identity
}
func (f *fakeShards) Owned() []int {
	if *f.owner.Load() == f.identity {
		return []int{0}
	}
	return nil
}

// memShards is an in-memory election.Store: versions count up, a stale
// one is election.ErrConflict; beforePut, when set, runs before each Put;
// while down is set every call fails as an unreachable API server's.
type memShards struct {
	mu        sync.Mutex
	data      map[int][]byte
	version   map[int]int
	puts      int
	beforePut func()
	down      bool
}

// errAPIDown is the failure of a memShards that is down.
var errAPIDown = errors.New("dial tcp 10.96.0.1:443: connect: connection refused")

func newMemShards() *memShards { return &memShards{data: map[int][]byte{}, version: map[int]int{}} }

func (m *memShards) Get(_ context.Context, shard int) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, "", errAPIDown
	}
	if _, ok := m.data[shard]; !ok {
		return nil, "", nil
	}
	return append([]byte(nil), m.data[shard]...), fmt.Sprint(m.version[shard]), nil
}

func (m *memShards) Put(_ context.Context, shard int, data []byte, version string) error {
	if f := m.beforePut; f != nil {
		f()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errAPIDown
	}
	cur := ""
	if _, ok := m.data[shard]; ok {
		cur = fmt.Sprint(m.version[shard])
	}
	if version != cur {
		return fmt.Errorf("shard %d at %q, not %q: %w", shard, cur, version, election.ErrConflict)
	}
	m.data[shard], m.version[shard] = append([]byte(nil), data...), m.version[shard]+1
	m.puts++
	return nil
}

// replica is a rig sharing fleet, owner and store with the others.
func replica(t *testing.T, identity string, owner *atomic.Pointer[string], store *memShards, fleet *actuatortest.Fake,
	mode poolspec.Mode) (*rig, *fakeShards) {
	t.Helper()
	sh := &fakeShards{identity: identity, owner: owner, changes: make(chan struct{}, 1)}
	r := newRigWith(t, 1, func(p *poolspec.Pool) {
		p.Mode, p.Fleet.MaxStep, p.Fleet.MinInterval = mode, 4, 10*time.Minute
		p.Windows = "daily 00:00-24:00 at least 30"
	}, func(d *Deps) {
		d.Shards, d.Backend = sh, fakeBackend(fleet)
		if store != nil {
			d.ShardStore = store
		}
	})
	r.writeDemand(t, r.clock.Now().Add(-10*time.Minute), r.clock.Now().Add(time.Hour), func(time.Time) float64 { return 5 })
	return r, sh
}

func tick(t *testing.T, r *rig) PoolStatus {
	t.Helper()
	_ = r.svc.Tick(context.Background())
	st, _ := r.svc.PoolStatus(testPool)
	return st
}

// A standby decides an active pool and shows the decision, names the
// owner, and applies nothing; the owner applies it.
func TestStandbyDecidesAndDoesNotApply(t *testing.T) {
	fleet := actuatortest.New("fake").AddPool(testPool, 1, 1, 50)
	owner := newOwner("b")
	a, _ := replica(t, "a", owner, nil, fleet, poolspec.ModeActive)
	st := tick(t, a)
	if st.Outcome != OutcomeStandby || !strings.HasPrefix(st.Reason, "standby: pool owned by b") || st.Wished != 30 || st.Desired != 5 {
		t.Errorf("standby: outcome %s, reason %q, wished %d, desired %d; want standby owned by b, 30 wished, 5 shown", st.Outcome, st.Reason, st.Wished, st.Desired)
	}
	if e := st.Election; e == nil || e.Owner != "b" || e.Owned || e.Identity != "a" {
		t.Errorf("election status %+v, want owner b, not owned by a", e)
	}
	if n := len(fleet.CallsOf(actuator.OpSetDesired)); n != 0 {
		t.Errorf("standby made %d changes", n)
	}
	owner.Store(ptr("a"))
	if st := tick(t, a); st.Outcome != OutcomeLimited || fleet.Pool(testPool).Desired != 5 || !st.Election.Owned {
		t.Errorf("owner: outcome %s, fleet at %d, election %+v; want limited to 5 and owned", st.Outcome, fleet.Pool(testPool).Desired, st.Election)
	}
}

func ptr(s string) *string { return &s }

// A replica that gains a bucket decides its pools at once, without
// waiting for its next tick (a minute away here): the pools of a replica
// that died are decided again as soon as their Leases are taken.
func TestGainedBucketIsDecidedAtOnce(t *testing.T) {
	fleet := actuatortest.New("fake").AddPool(testPool, 1, 1, 50)
	owner := newOwner("b")
	a, sh := replica(t, "a", owner, nil, fleet, poolspec.ModeActive)
	if a.svc.Interval() < time.Minute {
		t.Fatalf("interval %v: the test needs one far longer than its wait", a.svc.Interval())
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- a.svc.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	status := func() PoolStatus {
		st, _ := a.svc.PoolStatus(testPool)
		return st
	}
	waitUntil(t, 5*time.Second, "the standby's first decision", func() bool { return status().Outcome == OutcomeStandby })
	owner.Store(ptr("a"))
	sh.changes <- struct{}{}
	waitUntil(t, 5*time.Second, "the new owner's decision", func() bool { return status().Outcome == OutcomeLimited })
	if got := fleet.Pool(testPool).Desired; got != 5 {
		t.Errorf("fleet at %d after the take-over, want 5 (max_step 4 from 1)", got)
	}
}

// waitUntil polls cond every 10 ms for at most limit.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
	}
}

// Ownership lost after the plan, before the back-end call, applies
// nothing: the change is refused at the last check.
func TestOwnershipLostMidDecisionAppliesNothing(t *testing.T) {
	fleet := actuatortest.New("fake").AddPool(testPool, 1, 1, 50)
	a, sh := replica(t, "a", newOwner("a"), newMemShards(), fleet, poolspec.ModeActive)
	sh.ownsAfter = 1 // the check after the plan passes, the one before the call does not
	st := tick(t, a)
	if st.Outcome != OutcomeStandby || len(fleet.CallsOf(actuator.OpSetDesired)) != 0 || st.Error != "" {
		t.Errorf("outcome %s (%s), error %q, %d changes; want standby, no error, none", st.Outcome, st.Reason, st.Error, len(fleet.CallsOf(actuator.OpSetDesired)))
	}
}

// A mode set through the API on a standby reaches the owner, which
// applies; after a takeover the new owner counts min_interval and
// max_step from that change and keeps the mode: one change in all.
func TestTakeoverKeepsClocksAndMode(t *testing.T) {
	fleet := actuatortest.New("fake").AddPool(testPool, 1, 1, 50)
	store, owner := newMemShards(), newOwner("a")
	a, _ := replica(t, "a", owner, store, fleet, poolspec.ModeForecastOnly)
	b, _ := replica(t, "b", owner, store, fleet, poolspec.ModeForecastOnly)
	if _, err := b.svc.SetMode(testPool, poolspec.ModeActive, "test"); err != nil {
		t.Fatal(err)
	}
	before := tick(t, a)
	if before.Outcome != OutcomeLimited || before.Mode != poolspec.ModeActive || before.ModeSource != "api" {
		t.Fatalf("owner after the mode was set on the standby: outcome %s, mode %s (%s); want limited, active from the API",
			before.Outcome, before.Mode, before.ModeSource)
	}
	tick(t, b) // the standby reads the owner's change
	owner.Store(ptr("b"))
	for _, r := range []*rig{a, b} {
		r.clock.Advance(time.Minute)
	}
	after := tick(t, b)
	if after.Outcome != OutcomeRateLimited || after.Mode != poolspec.ModeActive || after.ModeSource != "api" {
		t.Errorf("new owner: outcome %s (%s), mode %s (%s); want rate_limited, active from the API", after.Outcome, after.Reason, after.Mode, after.ModeSource)
	}
	if after.Applied == nil || !after.Applied.At.Equal(before.Applied.At) || after.Applied.To != 5 || !after.NextChangeAt.Equal(before.Applied.At.Add(10*time.Minute)) {
		t.Errorf("new owner's last change %+v, next change %v; want the owner's %+v, 10m later", after.Applied, after.NextChangeAt, before.Applied)
	}
	if st := tick(t, a); st.Outcome != OutcomeStandby {
		t.Errorf("old owner: outcome %s, want standby", st.Outcome)
	}
	if n := len(fleet.CallsOf(actuator.OpSetDesired)); n != 1 {
		t.Errorf("%d changes, want exactly one", n)
	}
}

// A write by another replica between the read and the change means the
// change is not made that tick; the next tick reads it and goes on.
func TestConflictSkipsTheTick(t *testing.T) {
	fleet := actuatortest.New("fake").AddPool(testPool, 1, 1, 50)
	store := newMemShards()
	a, _ := replica(t, "a", newOwner("a"), store, fleet, poolspec.ModeActive)
	once := sync.Once{}
	store.beforePut = func() {
		once.Do(func() {
			store.mu.Lock()
			store.data[0], store.version[0] = []byte(`{"pools":{}}`), store.version[0]+1
			store.mu.Unlock()
		})
	}
	if st := tick(t, a); st.Outcome != OutcomeNotApplied || !strings.Contains(st.Reason, "another replica wrote") || len(fleet.CallsOf(actuator.OpSetDesired)) != 0 {
		t.Errorf("after a conflicting write: outcome %s (%s), %d changes; want not applied, none", st.Outcome, st.Reason, len(fleet.CallsOf(actuator.OpSetDesired)))
	}
	a.clock.Advance(time.Minute)
	if st := tick(t, a); st.Outcome != OutcomeLimited || fleet.Pool(testPool).Desired != 5 {
		t.Errorf("next tick: outcome %s (%s), fleet at %d; want limited to 5", st.Outcome, st.Reason, fleet.Pool(testPool).Desired)
	}
}

// Publishing a schedule is an action: with two weeks of history a refit
// publishes the plan's steps through the owner's back-end, never a
// standby's.
func TestOnlyTheOwnerPublishesTheSchedule(t *testing.T) {
	for _, tc := range []struct {
		owner string
		want  int
	}{{"a", 1}, {"b", 0}} {
		t.Run("owned by "+tc.owner, func(t *testing.T) {
			fleet := actuatortest.New("fake").AddPool(testPool, 1, 1, 50)
			a, _ := replica(t, "a", newOwner(tc.owner), newMemShards(), fleet, poolspec.ModeActive)
			a.svc.pools[0].spec.PublishSchedule = true
			a.writeDemand(t, a.clock.Now().Add(-14*24*time.Hour), a.clock.Now(), daily)
			st := tick(t, a)
			if st.LastRefit.IsZero() {
				t.Fatalf("no refit (%s)", st.GateReason)
			}
			if n := len(fleet.CallsOf(actuator.OpPublishSchedule)); n != tc.want {
				t.Errorf("%d schedules published, want %d (outcome %s, gate %s: %s)", n, tc.want, st.Outcome, st.Gate, st.GateReason)
			}
		})
	}
}

// A replica that owns no pool but follows the owner's decisions is ready:
// it serves the page, the API and the owner's plan, and is a valid
// failover target. /readyz names the pools it stands by for; it turns
// unready only when, for 3 intervals, it cannot read the state the
// replicas share (it would no longer follow the owner), and ready again
// once it can.
func TestReadinessOfAStandby(t *testing.T) {
	for _, tc := range []struct {
		owner       string
		wantStandby bool
	}{{"b", true}, {"a", false}} {
		t.Run("owned by "+tc.owner, func(t *testing.T) {
			fleet := actuatortest.New("fake").AddPool(testPool, 1, 1, 50)
			store := newMemShards()
			a, _ := replica(t, "a", newOwner(tc.owner), store, fleet, poolspec.ModeActive)
			srv := httptest.NewServer(a.svc.Handler(HTTPOptions{}))
			defer srv.Close()
			probe := func(step string, want int) readiness {
				t.Helper()
				code, body, _ := fetch(t, srv, "/readyz")
				var rd readiness
				if err := json.Unmarshal(body, &rd); err != nil {
					t.Fatal(err)
				}
				if code != want || rd.Ready != (want == http.StatusOK) {
					t.Errorf("%s: /readyz %d %+v, want %d", step, code, rd, want)
				}
				return rd
			}
			interval := a.svc.Interval()
			step := func(n int) {
				for range n {
					a.clock.Advance(interval)
					a.writeDemand(t, a.clock.Now().Add(-interval), a.clock.Now().Add(time.Hour), func(time.Time) float64 { return 5 })
					_ = a.svc.Tick(context.Background())
				}
			}
			step(1)
			rd := probe("deciding", http.StatusOK)
			if got := slices.Equal(rd.Standby, []string{testPool}); got != tc.wantStandby {
				t.Errorf("standby pools %v, want the pool listed: %v", rd.Standby, tc.wantStandby)
			}
			store.mu.Lock()
			store.down = true
			store.mu.Unlock()
			step(2)
			probe("shared state unreadable for 2 intervals", http.StatusOK)
			step(2)
			rd = probe("shared state unreadable for 4 intervals", http.StatusServiceUnavailable)
			if why := rd.Failing[testPool]; !strings.Contains(why, "state shared with the other replicas") {
				t.Errorf("failing pool's error %q, want it to name the shared state", why)
			}
			store.mu.Lock()
			store.down = false
			store.mu.Unlock()
			step(1)
			probe("shared state readable again", http.StatusOK)
			if n := len(fleet.CallsOf(actuator.OpSetDesired)); (n == 0) != tc.wantStandby {
				t.Errorf("%d changes made; a standby makes none, an owner one", n)
			}
		})
	}
}
