package poolspec

import (
	"errors"
	"net"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/prewarm/prewarm/election"
)

// Election is the election: block: several serve replicas sharing the
// pools through Kubernetes Leases (docs/high-availability.md). Every
// replica decides every pool; only the one holding a pool's bucket applies
// its decisions. Off by default: one process decides and applies alone.
type Election struct {
	// Enabled turns sharing on.
	Enabled bool `yaml:"enabled"`
	// Namespace holds the Leases and the shard state ConfigMaps; "" means
	// $POD_NAMESPACE, else the service account's namespace.
	Namespace string `yaml:"namespace"`
	// Identity names this replica, unique among them; "" means $POD_NAME,
	// else the host name.
	Identity string `yaml:"identity"`
	// ShardPrefix starts the names of the Leases and ConfigMaps
	// (prewarm-shard-07, prewarm-shard-state-07).
	ShardPrefix string `yaml:"shard_prefix"`
	// Buckets is how many buckets the pools hash into; every replica must
	// agree.
	Buckets int `yaml:"buckets"`
	// Timings are the Leases' periods: lease_duration, renew_deadline
	// and retry_period.
	election.Timings `yaml:",inline"`
	// APIServer is the Kubernetes API's URL, for tests against a loopback
	// stand-in; "" (in a cluster) uses the pod's service account.
	APIServer string `yaml:"api_server"`
}

// DefaultElection returns the election: block's defaults, package
// election's: off, 16 buckets, client-go's usual 15s, 10s and 2s.
func DefaultElection() Election {
	return Election{ShardPrefix: election.DefaultPrefix, Buckets: election.DefaultBuckets, Timings: election.DefaultTimings()}
}

// JoinConfig is the block as package election joins it, reaching the
// other replicas on the port of listen (the API's address).
func (e Election) JoinConfig(listen string) election.JoinConfig {
	_, port, _ := net.SplitHostPort(listen) // checked when the server listens
	return election.JoinConfig{Namespace: e.Namespace, Identity: e.Identity, Prefix: e.ShardPrefix, Buckets: e.Buckets,
		Port: port, Timings: e.Timings, APIServer: e.APIServer}
}

// check adds the problems of the election: block, each at its key.
func (e Election) check(c *checker) {
	c.ints("election.buckets", e.Buckets, 1, election.MaxBuckets)
	if e.Namespace != "" {
		if p := validation.IsDNS1123Label(e.Namespace); len(p) > 0 {
			c.add("election.namespace", "%q: %s", e.Namespace, p[0])
		}
	}
	if p := validation.IsDNS1123Label(e.ShardPrefix); len(p) > 0 {
		c.add("election.shard_prefix", "%q: %s", e.ShardPrefix, p[0])
	} else if len(e.ShardPrefix) > election.MaxPrefixLen {
		c.add("election.shard_prefix", "%q is %d characters: at most %d", e.ShardPrefix, len(e.ShardPrefix), election.MaxPrefixLen)
	}
	if e.Identity != "" {
		if p := validation.IsDNS1123Subdomain(e.ShardPrefix + "-member-" + e.Identity); len(p) > 0 {
			c.add("election.identity", "%q: must be a lower-case name (a pod name): %s", e.Identity, p[0])
		}
	}
	e.checkTimings(c)
	if e.APIServer != "" {
		if err := loopbackURL(e.APIServer); err != "" {
			c.add("election.api_server", "%q: %s", e.APIServer, err)
		}
	}
}

// checkTimings adds the first of the periods' problems, as package
// election checks them (election.Timings.Validate), at its key.
func (e Election) checkTimings(c *checker) {
	var te *election.TimingError
	if err := e.Timings.Validate(); errors.As(err, &te) {
		c.add("election."+te.Key, "%s", te.Msg)
	}
}

// loopbackURL returns what is wrong with an api_server URL, "" when it is
// an http(s) URL of a loopback host: the stand-in of tests. A real cluster
// is reached with the pod's service account, not through this key.
func loopbackURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "not an http:// or https:// URL"
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || strings.EqualFold(host, "localhost") {
		return ""
	}
	return "only a loopback address is accepted (a test's stand-in); in a cluster leave it unset to use the pod's service account"
}
