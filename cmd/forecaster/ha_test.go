package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prewarm/prewarm/election/kubetest"
	"github.com/prewarm/prewarm/service"
)

// haLease is the test's lease duration; takeovers must come within it
// plus haSlack (the standby's retries, up to 4.4 retry periods, and the
// status poll).
const (
	haLease = time.Second
	haSlack = 1500 * time.Millisecond
	haToken = "api-token-of-the-ha-test"
)

// haRig is two serve replicas with election on, over the restart
// demonstration's fleet and a loopback stand-in of the Kubernetes API.
type haRig struct {
	*fleetRig
	kube  *kubetest.Server
	procs map[string]*process
	addrs map[string]string
}

func newHARig(t *testing.T) *haRig {
	r := &haRig{fleetRig: newFleetRig(t, "forecast-only"), kube: kubetest.NewServer(), procs: map[string]*process{}, addrs: map[string]string{}}
	t.Cleanup(r.kube.Close)
	raw, err := os.ReadFile(r.config)
	if err != nil {
		t.Fatal(err)
	}
	block := fmt.Sprintf("election:\n  enabled: true\n  namespace: prewarm\n  buckets: 1\n  lease_duration: %s\n"+
		"  renew_deadline: 600ms\n  retry_period: 100ms\n  api_server: %s\npools:\n", haLease, r.kube.URL)
	cfg := strings.Replace(strings.Replace(string(raw), "pools:\n", block, 1), "interval: 5s", "interval: 2s", 1)
	if err := os.WriteFile(r.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// start runs replica name (its identity) on a fresh address with its own
// state file and waits for its first decision.
func (r *haRig) start(t *testing.T, name string) {
	t.Helper()
	addr := freeAddr(t)
	r.procs[name] = start(t, r.forecaster, []string{"POD_NAME=" + name, service.EnvAPIToken + "=" + haToken},
		"serve", "--config", r.config, "--store", "http://"+r.collectorAddr, "--listen", addr,
		"--state", filepath.Join(r.dir, name+"-state.db"))
	r.addrs[name] = addr
	waitFor(t, 20*time.Second, name+"'s first decision", func() bool {
		st, ok := poolStatus(addr)
		return ok && !st.At.IsZero()
	})
}

// kill sends SIGKILL to a replica and reaps it.
func (r *haRig) kill(t *testing.T, name string) {
	t.Helper()
	r.procs[name].kill(t)
}

// kill sends SIGKILL to the process and reaps it.
func (p *process) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
}

// owner waits until exactly one replica owns the pool and the other names
// it, and returns the owner and the standby.
func (r *haRig) owner(t *testing.T) (owner, standby string) {
	t.Helper()
	return waitForOwner(t, r.addrs)
}

// waitForOwner waits until exactly one of replica-a and replica-b (their
// API addresses in addrs) owns the first pool and the other names it, and
// returns the owner and the standby.
func waitForOwner(t *testing.T, addrs map[string]string) (owner, standby string) {
	t.Helper()
	waitFor(t, 10*time.Second, "one owner that the standby names", func() bool {
		a, okA := poolStatus(addrs["replica-a"])
		b, okB := poolStatus(addrs["replica-b"])
		if !okA || !okB || a.Election == nil || b.Election == nil {
			return false
		}
		switch {
		case a.Election.Owned && !b.Election.Owned && b.Election.Owner == "replica-a":
			owner, standby = "replica-a", "replica-b"
		case b.Election.Owned && !a.Election.Owned && a.Election.Owner == "replica-b":
			owner, standby = "replica-b", "replica-a"
		default:
			return false
		}
		return true
	})
	return owner, standby
}

// setMode posts a mode to a replica's API.
func setMode(t *testing.T, addr, mode string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/pools/sd/mode", strings.NewReader(`{"mode":"`+mode+`"}`))
	req.Header.Set("Authorization", "Bearer "+haToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST mode %s: %s", mode, resp.Status)
	}
}

// The failover demonstration: two replicas share a pool whose floor needs
// 30 at max_step 4 and min_interval 10m. A mode set through the standby's
// API reaches the owner, which makes the one change (1 → 5). The owner is
// then killed with SIGKILL three times within a minute and restarted: each
// time the standby takes over within the lease duration (plus the retry
// slack), keeps the last change, the next change time and the API's mode,
// and the scale API sees no second change.
func TestFailoverSendsOneChange(t *testing.T) {
	r := newHARig(t)
	r.start(t, "replica-a")
	r.start(t, "replica-b")
	owner, standby := r.owner(t)
	setMode(t, r.addrs[standby], "active")
	var before service.PoolStatus
	waitFor(t, 15*time.Second, "the owner's change", func() bool {
		st, ok := poolStatus(r.addrs[owner])
		before = st
		return ok && st.Applied != nil && st.Mode == "active"
	})
	t.Logf("%s owns the pool: outcome %s, applied %+v, changes %v", owner, before.Outcome, *before.Applied, r.api.changes())

	nextChange := before.Applied.At.Add(10 * time.Minute) // min_interval
	began := time.Now()
	var takeovers []time.Duration
	for cycle := range 3 {
		killed := time.Now()
		r.kill(t, owner)
		var took time.Duration
		waitFor(t, haLease+haSlack+2*time.Second, standby+" taking over", func() bool {
			st, ok := poolStatus(r.addrs[standby])
			took = time.Since(killed)
			return ok && st.Election != nil && st.Election.Owned
		})
		takeovers = append(takeovers, took)
		if took > haLease+haSlack {
			t.Errorf("cycle %d: %s took over %v after the kill, want within %v", cycle, standby, took, haLease+haSlack)
		}
		var after service.PoolStatus
		waitFor(t, 10*time.Second, standby+"'s decision as the owner", func() bool {
			st, ok := poolStatus(r.addrs[standby])
			after = st
			return ok && st.At.After(killed) && st.Outcome != service.OutcomeStandby
		})
		if after.Outcome != service.OutcomeRateLimited || after.Applied == nil || !after.Applied.At.Equal(before.Applied.At) ||
			after.Applied.To != before.Applied.To || !after.NextChangeAt.Equal(nextChange) ||
			after.Mode != before.Mode || after.ModeSource != "api" || !after.ModeSetAt.Equal(before.ModeSetAt) {
			t.Errorf("cycle %d: new owner %s: outcome %s (%s), applied %+v, next change %v, mode %s (%s, %v); want rate_limited with %+v, %v, %s (api, %v)",
				cycle, standby, after.Outcome, after.Reason, after.Applied, after.NextChangeAt, after.Mode, after.ModeSource, after.ModeSetAt,
				*before.Applied, nextChange, before.Mode, before.ModeSetAt)
		}
		r.start(t, owner)
		owner, standby = r.owner(t)
		t.Logf("cycle %d: took over in %v; %s owns now; changes %v", cycle, took.Round(time.Millisecond), owner, r.api.changes())
	}
	if got := r.api.changes(); len(got) != 1 || got[0] != 5 {
		t.Errorf("changes sent to the scale API: %v, want exactly one, to 5", got)
	}
	if took := time.Since(began); took > time.Minute {
		t.Errorf("the three kills took %v, want them within a minute", took)
	}
	t.Logf("takeovers after kill -9 (lease %v, renew 600ms, retry 100ms): %v; API requests %v", haLease, takeovers, r.kube.Requests())
}
