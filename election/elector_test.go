package election

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prewarm/prewarm/election/kubetest"
	coordinationv1 "k8s.io/api/coordination/v1"
)

// electorFor builds an elector of one replica on the Lease "leader".
func electorFor(t *testing.T, r *replica, identity string, timings Timings) *Elector {
	t.Helper()
	e, err := NewElector(r.client.CoordinationV1(), Config{Namespace: "ns", LeaseName: "leader", Identity: identity, Timings: timings})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// pair is two electors campaigning for one Lease.
type pair struct {
	electors [2]*Elector
	replicas [2]*replica
	stops    [2]func()
}

// startPair starts replicas "a" and "b" and waits for one to lead.
func startPair(t *testing.T, srv *kubetest.Server, timings Timings) *pair {
	t.Helper()
	p := &pair{}
	run := &runner{t: t}
	for i, id := range []string{"a", "b"} {
		p.replicas[i] = newReplica(t, srv)
		e := electorFor(t, p.replicas[i], id, timings)
		p.electors[i] = e
		p.stops[i] = run.start(func(ctx context.Context) { _ = e.Run(ctx) })
	}
	waitFor(t, 3*time.Second, "a leader", func() bool { return p.leaders() == 1 })
	return p
}

// leaders counts the electors that lead now.
func (p *pair) leaders() int {
	n := 0
	for _, e := range p.electors {
		if e.IsLeader() {
			n++
		}
	}
	return n
}

// leader is the index of the leading elector, -1 for none.
func (p *pair) leader() int {
	for i, e := range p.electors {
		if e.IsLeader() {
			return i
		}
	}
	return -1
}

func TestExactlyOneOfTwoLeads(t *testing.T) {
	p := startPair(t, newServer(t), fastTimings)
	lead := p.leader()
	other := 1 - lead
	leaderID := []string{"a", "b"}[lead]
	deadline := time.Now().Add(3 * fastTimings.RetryPeriod)
	for time.Now().Before(deadline) {
		if n := p.leaders(); n != 1 {
			t.Fatalf("%d leaders, want 1", n)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if got := p.electors[lead].Leader(); got != leaderID {
		t.Errorf("leader's Leader() = %q, want %q", got, leaderID)
	}
	waitFor(t, 2*fastTimings.RetryPeriod, "the standby reading the leader", func() bool {
		return p.electors[other].Leader() == leaderID
	})
}

func TestStandbyTakesOverWithinOneLeaseDuration(t *testing.T) {
	// The release runs within the renew deadline, which fastTimings keeps
	// short for the killed case; a loaded machine under the race detector
	// can take longer than that to give the Lease up. So the released case
	// runs with a long deadline and Lease: taking over within the killed
	// case's limit, well inside that Lease, shows the Lease was released
	// and not left to expire.
	slowLease := Timings{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: fastTimings.RetryPeriod}
	cases := []struct {
		name    string
		timings Timings
		stop    func(p *pair, lead int)
		limit   time.Duration
	}{
		// Released: the Lease is given up at the stop (checked below), so
		// the standby takes it at its next retry (0.1 to 0.25 s alone).
		{"released on cancel", slowLease, func(p *pair, lead int) { p.stops[lead]() }, fastTimings.LeaseDuration + 5*fastTimings.RetryPeriod},
		{"killed without release", fastTimings, func(p *pair, lead int) {
			p.replicas[lead].dead.Store(true)
			p.stops[lead]()
		}, fastTimings.LeaseDuration + 5*fastTimings.RetryPeriod},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startPair(t, newServer(t), tc.timings)
			lead := p.leader()
			stoppedAt := time.Now()
			tc.stop(p, lead)
			if p.electors[lead].IsLeader() {
				t.Fatal("the stopped elector still leads")
			}
			if !p.replicas[lead].dead.Load() {
				lease, err := p.replicas[1-lead].client.CoordinationV1().Leases("ns").Get(t.Context(), "leader", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if h := lease.Spec.HolderIdentity; h != nil && *h == p.electors[lead].cfg.Identity {
					t.Errorf("after a clean stop the Lease is still held by %q, want it released", *h)
				}
			}
			waitFor(t, tc.limit, "the standby leading", p.electors[1-lead].IsLeader)
			t.Logf("took over %s after the stop", time.Since(stoppedAt).Round(time.Millisecond))
		})
	}
}

func TestLeaderThatCannotRenewStopsBeforeTakeOver(t *testing.T) {
	cases := []struct {
		name string
		// fail is the leader's fate once its renewal is picked: an error,
		// or a request that hangs until the test ends.
		fail func(unblock <-chan struct{}) bool
	}{
		{"renewals fail", func(<-chan struct{}) bool { return true }},
		{"renewals hang", func(unblock <-chan struct{}) bool {
			<-unblock
			return true
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			unblock := make(chan struct{})
			t.Cleanup(func() { close(unblock) }) // runs before the server closes
			p := startPair(t, srv, fastTimings)
			lead := p.leader()
			leaderID := []string{"a", "b"}[lead]
			// Late in a second, the renewals made earlier in it have the
			// same renewTime to a second's precision as the latest one:
			// the standby must still count the lease from the latest.
			lateInASecond(t)
			srv.SetFault(func(verb, resource, name string, body []byte) bool {
				var lease coordinationv1.Lease
				_ = json.Unmarshal(body, &lease)
				// The leader's renewals fail, and so does its release (no
				// holder), so the standby has to wait the lease out.
				picked := verb == kubetest.VerbUpdate && lease.Spec.HolderIdentity != nil &&
					(*lease.Spec.HolderIdentity == leaderID || *lease.Spec.HolderIdentity == "")
				return picked && tc.fail(unblock)
			})
			assertStopsFirst(t, p, lead)
		})
	}
}

// lateInASecond waits until the clock is 0.8s to 0.9s into a second.
func lateInASecond(t *testing.T) {
	t.Helper()
	waitFor(t, 2*time.Second, "the clock 0.8s into a second", func() bool {
		frac := time.Duration(time.Now().Nanosecond())
		return frac >= 800*time.Millisecond && frac < 900*time.Millisecond
	})
}

// assertStopsFirst watches a leader whose renewals no longer land: it must
// stop within the renew deadline, and before the standby takes over.
func assertStopsFirst(t *testing.T, p *pair, lead int) {
	t.Helper()
	faultAt := time.Now()
	var stoppedAt time.Time
	limit := faultAt.Add(fastTimings.LeaseDuration + fastTimings.RenewDeadline + 5*fastTimings.RetryPeriod)
	for !p.electors[1-lead].IsLeader() {
		if time.Now().After(limit) {
			t.Fatal("the standby never took over")
		}
		if stoppedAt.IsZero() && !p.electors[lead].IsLeader() {
			stoppedAt = time.Now()
		}
		time.Sleep(time.Millisecond)
	}
	takenAt := time.Now()
	if stoppedAt.IsZero() || p.electors[lead].IsLeader() {
		t.Fatal("the standby took over while the old leader still led")
	}
	if late := stoppedAt.Sub(faultAt); late > fastTimings.RenewDeadline+20*time.Millisecond {
		t.Errorf("the leader stopped %s after its renewals began failing, want within the renew deadline %s", late, fastTimings.RenewDeadline)
	}
	if wait := takenAt.Sub(faultAt); wait < fastTimings.LeaseDuration-2*fastTimings.RetryPeriod {
		t.Errorf("the standby took over %s after the fault, before the lease could expire", wait)
	}
	t.Logf("leader stopped after %s, standby took over after %s", stoppedAt.Sub(faultAt).Round(time.Millisecond), takenAt.Sub(faultAt).Round(time.Millisecond))
}

func TestElectorConfigErrorsNameTheYAMLKey(t *testing.T) {
	leases := newReplica(t, newServer(t)).client.CoordinationV1()
	good := Config{Namespace: "ns", LeaseName: "leader", Identity: "a", Timings: DefaultTimings()}
	assertConfigErrors(t, good, func(c Config) error {
		_, err := NewElector(leases, c)
		return err
	}, []configCase[Config]{
		{"namespace", func(c *Config) { c.Namespace = "Not_A_Namespace" }, "election.namespace"},
		{"lease name", func(c *Config) { c.LeaseName = "" }, "election.lease_name"},
		{"identity", func(c *Config) { c.Identity = "" }, "election.identity"},
		{"timings", func(c *Config) { c.Timings.RenewDeadline = c.Timings.LeaseDuration }, "election.renew_deadline"},
	})
	if _, err := NewElector(nil, good); err == nil {
		t.Fatal("an elector without a client was accepted")
	}
}
