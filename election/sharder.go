package election

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// ShardConfig names a set of bucket Leases and the replica that campaigns
// for them.
type ShardConfig struct {
	// Namespace holds the Leases (election.namespace).
	Namespace string
	// Identity is this replica's holder identity, unique among the
	// replicas: the pod name (election.identity).
	Identity string
	// Prefix starts the Lease names: prefix-07 for bucket 7 and
	// prefix-member-IDENTITY for each replica (election.shard_prefix,
	// default prewarm-shard).
	Prefix string
	// Buckets is how many buckets the pools hash into (election.buckets).
	// Changing it moves pools between buckets: every replica must agree.
	Buckets int
	// Address is the URL at which the other replicas reach this one's API
	// (http://POD_IP:PORT), written on its member Lease so that a standby
	// can forward a request only the owner may serve; "" writes none.
	Address string
	// Timings are the periods of every Lease.
	Timings Timings
	// Logger gets the election log; the zero value discards it.
	Logger logr.Logger
}

// Bounds and defaults of the shard settings, which a pool file's
// election: block reads too: 1 to MaxBuckets buckets (DefaultBuckets
// unless set), Lease names starting DefaultPrefix unless set, a prefix of
// at most MaxPrefixLen characters leaving room for -member-IDENTITY and
// -state-07 in a Kubernetes name.
const (
	MaxBuckets     = 1000
	DefaultBuckets = 16
	DefaultPrefix  = "prewarm-shard"
	MaxPrefixLen   = 40
)

// validate checks the config, naming the YAML keys in its errors.
func (c ShardConfig) validate() error {
	if err := validName("election.namespace", c.Namespace, validation.IsDNS1123Label); err != nil {
		return err
	}
	if c.Buckets < 1 || c.Buckets > MaxBuckets {
		return fmt.Errorf("election.buckets %d: must be from 1 to %d", c.Buckets, MaxBuckets)
	}
	if err := validName("election.shard_prefix", c.Prefix, validation.IsDNS1123Label); err != nil {
		return err
	}
	if problems := validation.IsValidLabelValue(c.Prefix); len(problems) > 0 {
		return fmt.Errorf("election.shard_prefix %q: %s", c.Prefix, problems[0])
	}
	if c.Identity == "" {
		return fmt.Errorf("election.identity: must be set, unique per replica (the pod name)")
	}
	if err := validName("election.identity", memberName(c.Prefix, c.Identity), validation.IsDNS1123Subdomain); err != nil {
		return err
	}
	return c.Timings.Validate()
}

// Sharder spreads buckets of pools over the live replicas with one Lease
// per bucket. Every replica campaigns for every bucket, but declines to
// acquire one past its share (an even split of the buckets over the live
// replicas, known from their member Leases) and releases its surplus, one
// bucket a retry period, when more replicas appear; so N replicas end up
// holding buckets/N each, give or take one, and the buckets of a replica
// that dies are taken once its Leases expire.
type Sharder struct {
	cfg      ShardConfig
	electors []*Elector
	members  *membership
	changes  chan struct{}

	mu      sync.Mutex
	held    int                  // buckets held or being acquired
	share   int                  // how many this replica may hold; 0 until the members are known
	cancels []context.CancelFunc // each bucket's current campaign
}

// NewSharder checks cfg and prepares the bucket and member Leases; Run
// campaigns.
func NewSharder(leases coordinationv1client.LeasesGetter, cfg ShardConfig) (*Sharder, error) {
	if leases == nil {
		return nil, errNoClient
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = logr.Discard()
	}
	s := &Sharder{
		cfg:     cfg,
		members: newMembership(leases.Leases(cfg.Namespace), cfg.Prefix, cfg.Identity, cfg.Address, cfg.Timings.LeaseDuration),
		changes: make(chan struct{}, 1),
		cancels: make([]context.CancelFunc, cfg.Buckets),
	}
	for b := range cfg.Buckets {
		ec := Config{Namespace: cfg.Namespace, LeaseName: bucketName(cfg.Prefix, b), Identity: cfg.Identity,
			Timings: cfg.Timings, Logger: cfg.Logger}
		s.electors = append(s.electors, newElector(leases, ec, s, s.changes))
	}
	return s, nil
}

// Run campaigns until ctx ends, then releases every bucket and this
// replica's membership so that the others take over at once. It returns
// ctx's error. Call it once per Sharder.
func (s *Sharder) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for b := range s.electors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.campaign(ctx, b)
		}()
	}
	s.keepMembership(ctx)
	wg.Wait()
	s.leave()
	return ctx.Err()
}

// campaign runs one bucket's elector until ctx ends, starting it again
// whenever the bucket is shed.
func (s *Sharder) campaign(ctx context.Context, bucket int) {
	for ctx.Err() == nil {
		term, cancel := context.WithCancel(ctx)
		s.mu.Lock()
		s.cancels[bucket] = cancel
		s.mu.Unlock()
		_ = s.electors[bucket].Run(term)
		cancel()
	}
}

// keepMembership renews this replica's member Lease every retry period,
// updates its share from the live members and sheds a surplus bucket. The
// share stays 0 for the first period, so replicas started together see
// each other before they acquire.
func (s *Sharder) keepMembership(ctx context.Context) {
	tick := time.NewTicker(s.cfg.Timings.RetryPeriod)
	defer tick.Stop()
	for round := 0; ; round++ {
		if err := s.members.heartbeat(ctx, s.cfg.Identity); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error(err, "renewing the member lease")
		}
		if round > 0 {
			s.reshare(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// reshare sets this replica's share from the live members and sheds one
// bucket past it.
func (s *Sharder) reshare(ctx context.Context) {
	alive, err := s.members.alive(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Logger.Error(err, "reading the member leases")
		}
		return
	}
	share := shareOf(sort.SearchStrings(alive, s.cfg.Identity), len(alive), s.cfg.Buckets)
	s.mu.Lock()
	s.share = share
	s.mu.Unlock()
	owned := s.Owned()
	if len(owned) > share {
		s.shed(owned[len(owned)-1])
	}
}

// shed releases a bucket and campaigns for it again, now declining it
// while this replica holds its share.
func (s *Sharder) shed(bucket int) {
	s.mu.Lock()
	cancel := s.cancels[bucket]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// leave marks this replica's member Lease as released, so that the others
// count it out without waiting for it to expire.
func (s *Sharder) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timings.RenewDeadline)
	defer cancel()
	if err := s.members.heartbeat(ctx, ""); err != nil {
		s.cfg.Logger.Error(err, "releasing the member lease")
	}
}

// take reserves a bucket for an acquisition, false at this replica's share.
func (s *Sharder) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held >= s.share {
		return false
	}
	s.held++
	return true
}

// give returns a reservation when an acquisition fails or a hold ends.
func (s *Sharder) give() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held--
}

// Owns reports whether this replica holds the bucket of pool now and may
// act for it; it turns false before another replica can take the bucket.
func (s *Sharder) Owns(pool string) bool {
	return s.electors[Bucket(pool, s.cfg.Buckets)].IsLeader()
}

// Owner is the identity of the replica holding pool's bucket as last read
// from its Lease (at most a retry period old), "" when none is known.
func (s *Sharder) Owner(pool string) string {
	return s.electors[Bucket(pool, s.cfg.Buckets)].Leader()
}

// Address is the API URL the live replica identity wrote on its member
// Lease, as last read (at most a retry period old); "" when none is known.
func (s *Sharder) Address(identity string) string { return s.members.addressOf(identity) }

// Owned lists the buckets this replica holds now, in order.
func (s *Sharder) Owned() []int {
	var owned []int
	for b, e := range s.electors {
		if e.IsLeader() {
			owned = append(owned, b)
		}
	}
	return owned
}

// Changes is signalled, coalesced, whenever this replica gains or loses a
// bucket; read Owned or Owns after a signal.
func (s *Sharder) Changes() <-chan struct{} { return s.changes }
