package election

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/election/kubetest"
)

// poolsPerBucket finds one pool name that hashes into each bucket.
func poolsPerBucket(t *testing.T, buckets int) []string {
	t.Helper()
	pools := make([]string, buckets)
	found := 0
	for i := 0; found < buckets && i < 100*buckets; i++ {
		name := fmt.Sprintf("pool-%d", i)
		if b := Bucket(name, buckets); pools[b] == "" {
			pools[b] = name
			found++
		}
	}
	if found < buckets {
		t.Fatalf("no pool name for some of %d buckets", buckets)
	}
	return pools
}

// shardReplica is one running Sharder and the means to kill it.
type shardReplica struct {
	id      string
	sharder *Sharder
	net     *replica
	stop    func()
}

// fleet is the replicas of one sharding test and a sampler that checks,
// through Owns, that no bucket ever has two owners at once.
type fleet struct {
	t       *testing.T
	srv     *kubetest.Server
	run     *runner
	pools   []string
	buckets int

	mu       sync.Mutex
	replicas []*shardReplica

	doubled atomic.Int64 // sweeps that saw a bucket owned twice
	sweeps  atomic.Int64
}

// newFleet prepares a fleet of sharders of buckets buckets and starts its
// sampler.
func newFleet(t *testing.T, buckets int) *fleet {
	f := &fleet{t: t, srv: newServer(t), run: &runner{t: t}, pools: poolsPerBucket(t, buckets), buckets: buckets}
	f.run.start(f.sample)
	return f
}

// add starts a replica called id.
func (f *fleet) add(id string) *shardReplica {
	f.t.Helper()
	net := newReplica(f.t, f.srv)
	s, err := NewSharder(net.client.CoordinationV1(), ShardConfig{Namespace: "ns", Identity: id, Buckets: f.buckets, Timings: fastTimings})
	if err != nil {
		f.t.Fatal(err)
	}
	r := &shardReplica{id: id, sharder: s, net: net}
	r.stop = f.run.start(func(ctx context.Context) { _ = s.Run(ctx) })
	f.mu.Lock()
	f.replicas = append(f.replicas, r)
	f.mu.Unlock()
	return r
}

// kill cuts a replica's network and stops it, so it releases nothing, as
// with kill -9, and drops it from the fleet.
func (f *fleet) kill(r *shardReplica) {
	r.net.dead.Store(true)
	r.stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replicas = slices.DeleteFunc(f.replicas, func(x *shardReplica) bool { return x == r })
}

// live is a copy of the fleet's replicas.
func (f *fleet) live() []*shardReplica {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.replicas)
}

// sample sweeps every bucket of every replica through Owns until ctx ends,
// counting sweeps that find a bucket with two owners.
func (f *fleet) sample(ctx context.Context) {
	for ctx.Err() == nil {
		replicas := f.live()
		for _, pool := range f.pools {
			owners := 0
			for _, r := range replicas {
				if r.sharder.Owns(pool) {
					owners++
				}
			}
			if owners > 1 {
				f.doubled.Add(1)
			}
		}
		f.sweeps.Add(1)
		time.Sleep(time.Millisecond)
	}
}

// counts is how many buckets each live replica owns, and their sum.
func (f *fleet) counts() (per map[string]int, total int) {
	per = map[string]int{}
	for _, r := range f.live() {
		n := len(r.sharder.Owned())
		per[r.id] = n
		total += n
	}
	return per, total
}

// waitBalanced waits until every bucket is owned and each live replica
// owns from lo to hi of them.
func (f *fleet) waitBalanced(limit time.Duration, lo, hi int) time.Duration {
	f.t.Helper()
	var per map[string]int
	defer func() {
		if f.t.Failed() {
			f.t.Logf("owned buckets at the end: %v", per)
		}
	}()
	return waitFor(f.t, limit, fmt.Sprintf("every replica owning %d to %d buckets", lo, hi), func() bool {
		var total int
		per, total = f.counts()
		if total != f.buckets {
			return false
		}
		for _, n := range per {
			if n < lo || n > hi {
				return false
			}
		}
		return true
	})
}

func TestShardsBalanceAndSurviveAKill(t *testing.T) {
	const buckets = 16
	f := newFleet(t, buckets)
	for _, id := range []string{"a", "b", "c"} {
		f.add(id)
	}
	took := f.waitBalanced(5*time.Second, 5, 6)
	per, _ := f.counts()
	t.Logf("3 replicas balanced %v after %s", per, took.Round(time.Millisecond))
	f.logCallsPerPeriod(10)

	victim := f.live()[2]
	orphans := victim.sharder.Owned()
	killedAt := time.Now()
	f.kill(victim)
	// The worst case: a killed leader's 4.4 retry periods, plus one for the member
	// Lease to be counted out, and a margin.
	limit := fastTimings.LeaseDuration + 7*fastTimings.RetryPeriod
	took = waitFor(t, limit, "the killed replica's buckets taken", func() bool {
		for _, b := range orphans {
			if f.live()[0].sharder.Owner(f.pools[b]) == victim.id || !f.ownedByOne(b) {
				return false
			}
		}
		return true
	})
	t.Logf("%d buckets of the killed replica taken %s after the kill", len(orphans), took.Round(time.Millisecond))
	f.waitBalanced(limit-time.Since(killedAt)+time.Second, 8, 8)

	f.add("d")
	took = f.waitBalanced(5*time.Second, 5, 6)
	per, _ = f.counts()
	t.Logf("a fourth replica joined: balanced %v after %s", per, took.Round(time.Millisecond))

	if n := f.doubled.Load(); n > 0 {
		t.Fatalf("%d of %d sweeps saw a bucket with two owners", n, f.sweeps.Load())
	}
	if f.sweeps.Load() < 100 {
		t.Fatalf("only %d sweeps: the check saw too little", f.sweeps.Load())
	}
}

// logCallsPerPeriod counts the fleet's API calls over periods retry
// periods and logs them per period and verb.
func (f *fleet) logCallsPerPeriod(periods int) {
	before := f.srv.Requests()
	start := time.Now()
	time.Sleep(time.Duration(periods) * fastTimings.RetryPeriod)
	after := f.srv.Requests()
	n := float64(time.Since(start)) / float64(fastTimings.RetryPeriod)
	var parts []string
	for _, verb := range []string{kubetest.VerbGet, kubetest.VerbUpdate, kubetest.VerbList, kubetest.VerbCreate} {
		parts = append(parts, fmt.Sprintf("%s %.1f", verb, float64(after[verb]-before[verb])/n))
	}
	f.t.Logf("%d replicas x %d buckets, API calls per retry period: %s", len(f.live()), f.buckets, strings.Join(parts, ", "))
}

// ownedByOne reports whether exactly one live replica owns bucket b.
func (f *fleet) ownedByOne(b int) bool {
	owners := 0
	for _, r := range f.live() {
		if r.sharder.Owns(f.pools[b]) {
			owners++
		}
	}
	return owners == 1
}

func TestOwnerAndChangesFollowTheLeases(t *testing.T) {
	f := newFleet(t, 4)
	a := f.add("a")
	f.waitBalanced(3*time.Second, 4, 4)
	select {
	case <-a.sharder.Changes():
	default:
		t.Fatal("no change signalled after acquiring buckets")
	}
	b := f.add("b")
	f.waitBalanced(5*time.Second, 2, 2)
	for bucket, pool := range f.pools {
		owner := "a"
		if !a.sharder.Owns(pool) {
			owner = "b"
		}
		waitFor(t, 3*fastTimings.RetryPeriod, fmt.Sprintf("bucket %d's owner read by both", bucket), func() bool {
			return a.sharder.Owner(pool) == owner && b.sharder.Owner(pool) == owner
		})
	}
}

func TestShardConfigErrorsNameTheYAMLKey(t *testing.T) {
	leases := newReplica(t, newServer(t)).client.CoordinationV1()
	good := ShardConfig{Namespace: "ns", Identity: "pod-0", Buckets: 16, Timings: DefaultTimings()}
	assertConfigErrors(t, good, func(c ShardConfig) error {
		_, err := NewSharder(leases, c)
		return err
	}, []configCase[ShardConfig]{
		{"no buckets", func(c *ShardConfig) { c.Buckets = 0 }, "election.buckets"},
		{"too many buckets", func(c *ShardConfig) { c.Buckets = MaxBuckets + 1 }, "election.buckets"},
		{"prefix", func(c *ShardConfig) { c.Prefix = "Bad_Prefix" }, "election.shard_prefix"},
		{"identity missing", func(c *ShardConfig) { c.Identity = "" }, "election.identity"},
		{"identity not a name", func(c *ShardConfig) { c.Identity = "Pod 0" }, "election.identity"},
		{"namespace", func(c *ShardConfig) { c.Namespace = "" }, "election.namespace"},
		{"timings", func(c *ShardConfig) { c.Timings.RetryPeriod = time.Millisecond }, "election.retry_period"},
	})
	if _, err := NewSharder(nil, good); err == nil {
		t.Fatal("a sharder without a client was accepted")
	}
}

func TestShareSplitsEvenly(t *testing.T) {
	cases := []struct {
		buckets, replicas int
		want              []int
	}{
		{16, 3, []int{6, 5, 5}},
		{16, 2, []int{8, 8}},
		{16, 4, []int{4, 4, 4, 4}},
		{2, 3, []int{1, 1, 0}},
		{5, 1, []int{5}},
	}
	for _, tc := range cases {
		got := make([]int, tc.replicas)
		for i := range got {
			got[i] = shareOf(i, tc.replicas, tc.buckets)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%d buckets over %d replicas: %v, want %v", tc.buckets, tc.replicas, got, tc.want)
		}
	}
}
