package election

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// errNoClient is returned for a nil Kubernetes client.
var errNoClient = errors.New("election: no Kubernetes client")

// Config names one Lease and the replica that campaigns for it.
type Config struct {
	// Namespace holds the Lease (election.namespace).
	Namespace string
	// LeaseName is the Lease's name (election.lease_name).
	LeaseName string
	// Identity is this replica's holder identity, unique among the
	// replicas: the pod name (election.identity).
	Identity string
	// Timings are the election's periods.
	Timings Timings
	// Logger gets client-go's election log; the zero value discards it.
	Logger logr.Logger
}

// validate checks the config, naming the YAML keys in its errors.
func (c Config) validate() error {
	if err := validName("election.namespace", c.Namespace, validation.IsDNS1123Label); err != nil {
		return err
	}
	if err := validName("election.lease_name", c.LeaseName, validation.IsDNS1123Subdomain); err != nil {
		return err
	}
	if c.Identity == "" {
		return fmt.Errorf("election.identity: must be set, unique per replica (the pod name)")
	}
	return c.Timings.Validate()
}

// validName checks an object name with one of apimachinery's validators.
func validName(yamlKey, name string, valid func(string) []string) error {
	if problems := valid(name); len(problems) > 0 {
		return fmt.Errorf("%s %q: %s", yamlKey, name, problems[0])
	}
	return nil
}

// Elector campaigns for one Lease with client-go's leader election and
// tells whether this replica leads. It releases the Lease when its Run
// context ends, so a standby takes over at once on a clean shutdown.
type Elector struct {
	cfg     Config
	guard   *guard
	changes chan struct{}
}

// NewElector checks cfg and prepares an election on the Lease it names;
// Run campaigns.
func NewElector(leases coordinationv1client.LeasesGetter, cfg Config) (*Elector, error) {
	if leases == nil {
		return nil, errNoClient
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newElector(leases, cfg, nil, make(chan struct{}, 1)), nil
}

// newElector builds an elector whose acquisitions q caps (nil: none) and
// whose changes are signalled on changes.
func newElector(leases coordinationv1client.LeasesGetter, cfg Config, q quota, changes chan struct{}) *Elector {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.LeaseName},
		Client:     leases,
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = logr.Discard()
	}
	return &Elector{cfg: cfg, guard: newGuard(lock, cfg.Timings.RenewDeadline, q, changes), changes: changes}
}

// Run campaigns until ctx ends, leading whenever it wins and campaigning
// again after it loses; it releases the Lease on the way out when it
// leads. It returns ctx's error.
func (e *Elector) Run(ctx context.Context) error {
	ctx = klog.NewContext(ctx, e.cfg.Logger)
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            e.guard,
			Name:            e.cfg.LeaseName,
			LeaseDuration:   e.cfg.Timings.LeaseDuration,
			RenewDeadline:   e.cfg.Timings.RenewDeadline,
			RetryPeriod:     e.cfg.Timings.RetryPeriod,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {},
				OnStoppedLeading: e.guard.stop,
			},
		})
		if err != nil {
			return fmt.Errorf("election: lease %s: %w", e.cfg.LeaseName, err)
		}
		le.Run(ctx)
	}
	return ctx.Err()
}

// IsLeader reports whether this replica leads and may act now. It turns
// false when the election stops or loses the Lease, and as soon as the last
// successful renewal is older than the renew deadline, before any other
// replica can take over.
func (e *Elector) IsLeader() bool { return e.guard.holds() }

// Leader is the identity of the leader as last read from the Lease, this
// replica's while IsLeader; "" when none is known or this replica's own
// claim has lapsed.
func (e *Elector) Leader() string {
	if e.IsLeader() {
		return e.cfg.Identity
	}
	holder := e.guard.lastHolder()
	if holder == e.cfg.Identity {
		return ""
	}
	return holder
}

// Changes is signalled, coalesced, whenever this replica starts or stops
// leading; read IsLeader after a signal.
func (e *Elector) Changes() <-chan struct{} { return e.changes }
