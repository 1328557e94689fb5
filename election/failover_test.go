package election

import (
	"context"
	"testing"
	"time"

	"github.com/prewarm/prewarm/election/kubetest"
)

// failover is what one leader change costs.
type failover struct {
	takeover     time.Duration // from killing the leader to the standby leading
	leaderCalls  float64       // API calls of the leader per retry period
	standbyCalls float64       // API calls of the standby per retry period
}

// measureFailover elects one of two replicas, counts the API calls of a
// steady window of periods retry periods, kills the leader without a
// release and times the standby's takeover.
func measureFailover(t testing.TB, periods int) failover {
	t.Helper()
	srv := kubetest.NewServer()
	defer srv.Close()
	run := &runner{t: t}
	var electors [2]*Elector
	var nets [2]*replica
	var stops [2]func()
	for i, id := range []string{"a", "b"} {
		nets[i] = newReplica(t, srv)
		e, err := NewElector(nets[i].client.CoordinationV1(), Config{Namespace: "ns", LeaseName: "leader", Identity: id, Timings: fastTimings})
		if err != nil {
			t.Fatal(err)
		}
		electors[i] = e
		stops[i] = run.start(func(ctx context.Context) { _ = e.Run(ctx) })
	}
	waitFor(t, 3*time.Second, "a leader", func() bool { return electors[0].IsLeader() || electors[1].IsLeader() })
	lead := 0
	if electors[1].IsLeader() {
		lead = 1
	}
	before := srv.Requests()
	start := time.Now()
	time.Sleep(time.Duration(periods) * fastTimings.RetryPeriod)
	after := srv.Requests()
	n := float64(time.Since(start)) / float64(fastTimings.RetryPeriod)
	m := failover{
		// The leader only updates; the standby only gets while the lease is held.
		leaderCalls:  float64(after[kubetest.VerbUpdate]-before[kubetest.VerbUpdate]) / n,
		standbyCalls: float64(after[kubetest.VerbGet]-before[kubetest.VerbGet]) / n,
	}
	killedAt := time.Now()
	nets[lead].dead.Store(true)
	stops[lead]()
	waitFor(t, fastTimings.LeaseDuration+5*fastTimings.RetryPeriod, "the standby leading", electors[1-lead].IsLeader)
	m.takeover = time.Since(killedAt)
	stops[1-lead]()
	return m
}

func TestFailoverCosts(t *testing.T) {
	m := measureFailover(t, 10)
	t.Logf("takeover %s; per retry period the leader made %.2f calls, the standby %.2f", m.takeover.Round(time.Millisecond), m.leaderCalls, m.standbyCalls)
	if m.leaderCalls < 0.7 || m.leaderCalls > 1.1 {
		t.Errorf("the leader made %.2f calls a retry period, want one renewal each", m.leaderCalls)
	}
	if m.standbyCalls > 1.1 {
		t.Errorf("the standby made %.2f calls a retry period, want at most one read each", m.standbyCalls)
	}
	if m.takeover < fastTimings.LeaseDuration-2*fastTimings.RetryPeriod {
		t.Errorf("took over after %s, before the lease could expire", m.takeover)
	}
}

// BenchmarkFailover reports how long a standby takes to replace a killed
// leader and the API calls per retry period of the leader (renewals) and
// of a standby (reads), with the test timings (1s lease, 100ms retry).
func BenchmarkFailover(b *testing.B) {
	var takeover time.Duration
	var leader, standby float64
	for range b.N {
		m := measureFailover(b, 10)
		takeover += m.takeover
		leader += m.leaderCalls
		standby += m.standbyCalls
	}
	n := float64(b.N)
	b.ReportMetric(float64(takeover.Milliseconds())/n, "ms/takeover")
	b.ReportMetric(leader/n, "leader-calls/renewal")
	b.ReportMetric(standby/n, "standby-calls/renewal")
}
