package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/election/kubetest"
	"github.com/prewarm/prewarm/service"
)

// The shard demonstration's size and timings: four replicas share 4,000
// pools in 64 buckets, deciding every shardInterval, on leases of
// shardLease.
const (
	shardReplicas = 4
	shardPools    = 4000
	shardBuckets  = 64
	shardInterval = 10 * time.Second
	shardLease    = 4 * time.Second
	shardRetry    = time.Second
)

// shardConfig writes a serve configuration of n dry-run pools with
// election on against the stand-in at kubeURL, and returns its path.
func shardConfig(t *testing.T, dir, kubeURL string, n int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "interval: %s\naudit_log: %s\n", shardInterval, filepath.Join(dir, "audit.jsonl"))
	fmt.Fprintf(&b, "election:\n  enabled: true\n  namespace: prewarm\n  buckets: %d\n  lease_duration: %s\n"+
		"  renew_deadline: 3s\n  retry_period: %s\n  api_server: %s\n", shardBuckets, shardLease, shardRetry, kubeURL)
	b.WriteString("pools:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: pool-%04d, backend: dryrun, mode: active, min: 1, max: 40, rps_per_instance: 10}\n", i)
	}
	path := filepath.Join(dir, "forecaster.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// allPools reads every pool's status from a replica's API.
func allPools(addr string) ([]service.PoolStatus, bool) {
	resp, err := http.Get("http://" + addr + "/api/v1/pools")
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var body struct{ Pools []service.PoolStatus }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return nil, false
	}
	return body.Pools, true
}

// decider is the replica that acted on a pool in a decision, and when.
type decider struct {
	replica string
	at      time.Time
}

// deciders reads every live replica and returns, per pool, the replicas
// whose last decision acted on it (any outcome but standby), and the
// owner each replica reports. ok is false while a replica has not yet
// decided every pool.
func deciders(addrs map[string]string) (acted map[string][]decider, owners map[string]map[string]bool, ok bool) {
	acted, owners = map[string][]decider{}, map[string]map[string]bool{}
	for name, addr := range addrs {
		pools, up := allPools(addr)
		if !up || len(pools) != shardPools {
			return nil, nil, false
		}
		for _, p := range pools {
			if p.At.IsZero() || p.Election == nil {
				return nil, nil, false
			}
			if p.Outcome != service.OutcomeStandby {
				acted[p.Name] = append(acted[p.Name], decider{name, p.At})
			}
			if owners[p.Name] == nil {
				owners[p.Name] = map[string]bool{}
			}
			owners[p.Name][p.Election.Owner] = true
		}
	}
	return acted, owners, true
}

// twice lists the pools on which two replicas acted within one interval.
func twice(acted map[string][]decider) []string {
	var both []string
	for pool, ds := range acted {
		for i := range ds {
			for j := i + 1; j < len(ds); j++ {
				if d := ds[i].at.Sub(ds[j].at); d < shardInterval && d > -shardInterval {
					both = append(both, fmt.Sprintf("%s (%s at %s, %s at %s)", pool, ds[i].replica,
						ds[i].at.Format(time.StampMilli), ds[j].replica, ds[j].at.Format(time.StampMilli)))
				}
			}
		}
	}
	slices.Sort(both)
	return both
}

// The shard demonstration: four serve processes share 4,000 pools in 64
// buckets, each holding some of the buckets. No pool is acted on by two
// replicas in one interval; when one replica is killed with SIGKILL, every
// pool it owned is decided by a survivor in a round that begins within one
// lease duration, one retry period and one interval, still by one replica
// only.
func TestShardsSurviveAKilledReplica(t *testing.T) {
	if os.Getenv("PREWARM_SHARD_TEST") == "" {
		t.Skip("four replicas of 4,000 pools need the machine to themselves: make test runs this alone after the others (PREWARM_SHARD_TEST=1)")
	}
	forecaster, _ := binaries(t)
	kube := kubetest.NewServer()
	t.Cleanup(kube.Close)
	dir := t.TempDir()
	config := shardConfig(t, dir, kube.URL, shardPools)
	procs, addrs := map[string]*process{}, map[string]string{}
	for i := range shardReplicas {
		name := fmt.Sprintf("replica-%d", i)
		addrs[name] = freeAddr(t)
		procs[name] = start(t, forecaster, []string{"POD_NAME=" + name}, "serve", "--config", config,
			"--store", "embedded:"+filepath.Join(dir, name+"-store.db"), "--state", filepath.Join(dir, name+"-state.db"),
			"--listen", addrs[name], "--log-level", "error")
	}

	// Every pool decided by every replica, each naming one owner that
	// acted on it.
	var acted map[string][]decider
	ownerOf := map[string]string{}
	why := "no replica answered with every pool decided"
	defer func() {
		if t.Failed() {
			t.Logf("last seen: %s", why)
		}
	}()
	waitFor(t, 90*time.Second, "every replica's decisions on every pool, each with one owner", func() bool {
		var owners map[string]map[string]bool
		var ok bool
		if acted, owners, ok = deciders(addrs); !ok {
			return false
		}
		bad, unnamed, none, many := "", 0, 0, 0
		for pool, os := range owners {
			switch {
			case len(os) != 1 || os[""]:
				unnamed++
			case len(acted[pool]) == 0:
				none++
			case len(acted[pool]) > 1:
				many++
			default:
				ownerOf[pool] = acted[pool][0].replica
				continue
			}
			bad = fmt.Sprintf("pool %s: owners named %v, acted on by %v", pool, os, acted[pool])
		}
		why = fmt.Sprintf("%d pools without one owner named by all, %d acted on by none, %d by several; e.g. %s (%s)",
			unnamed, none, many, bad, time.Now().Format(time.StampMilli))
		return bad == ""
	})
	if both := twice(acted); len(both) > 0 {
		t.Errorf("pools acted on by two replicas in one interval: %d, first %s", len(both), both[0])
	}
	held := map[string]int{}
	for _, r := range ownerOf {
		held[r]++
	}
	t.Logf("pools per replica: %v; lease requests so far: %v", held, kube.Requests())
	for name := range addrs {
		if held[name] == 0 {
			t.Errorf("%s holds no pool: the buckets are not shared", name)
		}
	}

	victim := "replica-0"
	killed := time.Now()
	procs[victim].kill(t)
	delete(addrs, victim)
	var orphans []string
	for pool, r := range ownerOf {
		if r == victim {
			orphans = append(orphans, pool)
		}
	}
	// Each orphan's first decision after the kill that a poll saw: an
	// upper bound of its first decision (a poll may see its second). The
	// owner renewed at most a retry period before the kill, so its Lease
	// ends within lease_duration of it; a survivor, trying every retry
	// period, takes the bucket within one more; its next round begins
	// within one interval.
	limit := shardLease + shardRetry + shardInterval
	firstAfter := map[string]time.Time{}
	var seen time.Duration // when a poll had seen them all
	waitFor(t, limit+60*time.Second, "the survivors' decisions on the killed replica's pools", func() bool {
		var ok bool
		if acted, _, ok = deciders(addrs); !ok {
			return false
		}
		for _, pool := range orphans {
			for _, d := range acted[pool] {
				if first, seen := firstAfter[pool]; d.at.After(killed) && (!seen || d.at.Before(first)) {
					firstAfter[pool] = d.at
				}
			}
		}
		seen = time.Since(killed)
		return len(firstAfter) == len(orphans)
	})
	var last time.Duration
	first := time.Hour
	for _, at := range firstAfter {
		last, first = max(last, at.Sub(killed)), min(first, at.Sub(killed))
	}
	t.Logf("decision rounds that decided them began %v to %v after the kill; a poll had seen them all %v after it",
		first.Round(time.Millisecond), last.Round(time.Millisecond), seen.Round(time.Millisecond))
	t.Logf("%s killed: its %d pools decided again by the survivors (lease %v, interval %v); lease requests: %v",
		victim, len(orphans), shardLease, shardInterval, kube.Requests())
	// Each decision records when its round began: every orphan's round
	// must begin within the lease plus one interval. What a poll saw adds
	// the round's own length and the poll's, which a loaded machine
	// stretches; it is bounded by one interval more.
	if last > limit {
		t.Errorf("the killed replica's pools were decided again by rounds that began up to %v after the kill, want within %v", last, limit)
	}
	if seen > limit+shardInterval {
		t.Errorf("the killed replica's pools were seen decided again %v after the kill, want within %v", seen, limit+shardInterval)
	}
	if both := twice(acted); len(both) > 0 {
		t.Errorf("after the kill, pools acted on by two replicas in one interval: %d, first %s", len(both), both[0])
	}
}
