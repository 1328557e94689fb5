package election

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/go-logr/logr"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// JoinConfig is what a replica needs to share pools with the others: the
// election: block of the forecaster's configuration.
type JoinConfig struct {
	// Namespace holds the Leases and ConfigMaps (election.namespace); ""
	// means $POD_NAMESPACE, else the service account's namespace.
	Namespace string
	// Identity names this replica (election.identity); "" means
	// $POD_NAME, else the host name.
	Identity string
	// Prefix starts the Lease and ConfigMap names (election.shard_prefix).
	Prefix string
	// Buckets is how many buckets the pools hash into (election.buckets).
	Buckets int
	// Timings are the Leases' periods.
	Timings Timings
	// Address is where the other replicas reach this one's API; ""
	// means http://$POD_IP:PORT with Port, and none without $POD_IP.
	Address string
	// Port is the API's port, for the default Address.
	Port string
	// APIServer is the Kubernetes API's URL (election.api_server, a
	// test's loopback stand-in, without credentials); "" uses the pod's
	// service account.
	APIServer string
}

// Joined is a running Sharder with this replica's identity and its bucket
// count, and the shard store: the forecaster service's Shards and
// ShardStore.
type Joined struct {
	*Sharder
	// Store keeps each shard's state.
	Store    *Store
	identity string
	buckets  int
	stop     func()
}

// Identity is this replica's name among the replicas.
func (j *Joined) Identity() string { return j.identity }

// Bucket is the bucket pool hashes into.
func (j *Joined) Bucket(pool string) int { return Bucket(pool, j.buckets) }

// Stop releases every bucket and waits for that.
func (j *Joined) Stop() { j.stop() }

// Join connects to the Kubernetes API (the pod's service account, or
// cfg.APIServer) and campaigns for the buckets until Stop. getenv reads
// $POD_NAMESPACE and $POD_NAME.
func Join(cfg JoinConfig, getenv func(string) string, log *slog.Logger) (*Joined, error) {
	namespace, identity, err := ResolveNames(cfg.Namespace, cfg.Identity, getenv, serviceAccountNamespace)
	if err != nil {
		return nil, err
	}
	rc, err := RESTConfig(cfg)
	if err != nil {
		return nil, err
	}
	coord, err := coordinationv1client.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("election: Kubernetes client: %w", err)
	}
	core, err := corev1client.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("election: Kubernetes client: %w", err)
	}
	sharder, err := NewSharder(coord, ShardConfig{Namespace: namespace, Identity: identity, Prefix: cfg.Prefix,
		Address: advertised(cfg, getenv), Buckets: cfg.Buckets, Timings: cfg.Timings, Logger: logr.FromSlogHandler(log.Handler()).WithValues("component", "election")})
	if err != nil {
		return nil, err
	}
	store, err := NewStore(core, namespace, cfg.Prefix)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sharder.Run(ctx)
	}()
	log.Info("election on: pools shared with the other replicas", "identity", identity, "namespace", namespace,
		"buckets", cfg.Buckets, "lease_duration", cfg.Timings.LeaseDuration)
	stop := func() {
		cancel()
		<-done
	}
	return &Joined{Sharder: sharder, Store: store, identity: identity, buckets: cfg.Buckets, stop: stop}, nil
}

// advertised is this replica's API URL for the others: cfg.Address, else
// http://$POD_IP:Port (the downward API's pod IP), else none.
func advertised(cfg JoinConfig, getenv func(string) string) string {
	if cfg.Address != "" {
		return cfg.Address
	}
	ip := getenv("POD_IP")
	if ip == "" || cfg.Port == "" {
		return ""
	}
	return "http://" + net.JoinHostPort(ip, cfg.Port)
}

// serviceAccountNamespace is where a pod's service account names its
// namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ResolveNames resolves the namespace (namespace, else $POD_NAMESPACE,
// else the one in the file saNamespace, a pod's service account's) and
// the identity (identity, else $POD_NAME, else the host name in lower
// case). Its errors name the election.* keys to set.
func ResolveNames(namespace, identity string, getenv func(string) string, saNamespace string) (string, string, error) {
	namespace = cmp.Or(namespace, getenv("POD_NAMESPACE"))
	if namespace == "" {
		if b, err := os.ReadFile(saNamespace); err == nil {
			namespace = strings.TrimSpace(string(b))
		}
	}
	if namespace == "" {
		return "", "", errors.New("election.namespace: not set, and neither $POD_NAMESPACE nor a service account namespace is there")
	}
	identity = cmp.Or(identity, getenv("POD_NAME"))
	if identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return "", "", fmt.Errorf("election.identity: not set, no $POD_NAME, and no host name: %w", err)
		}
		identity = strings.ToLower(host)
	}
	return namespace, identity, nil
}

// RESTConfig is the election's API client: the pod's service account, or
// cfg.APIServer. Its rate limit follows the election's own calls: a
// replica makes at most one call per bucket and two for its membership
// each retry period, which client-go's default limit (5 a second) would
// throttle past the renew deadline; it allows 1.5 times that, and never
// less than 20 a second.
func RESTConfig(cfg JoinConfig) (*rest.Config, error) {
	var rc *rest.Config
	if cfg.APIServer != "" {
		rc = &rest.Config{Host: cfg.APIServer}
	} else {
		var err error
		if rc, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("election: not running in a Kubernetes pod (election.api_server is for a test's stand-in): %w", err)
		}
	}
	perSecond := 1.5 * float64(cfg.Buckets+2) / max(cfg.Timings.RetryPeriod.Seconds(), 0.001)
	rc.QPS = float32(max(20, perSecond))
	rc.Burst, rc.UserAgent = int(2*rc.QPS), "prewarm-forecaster"
	return rc, nil
}
