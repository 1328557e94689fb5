package election

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// forgetMembersAfter is how many lease durations a member Lease may stay
// unchanged before a replica deletes it.
const forgetMembersAfter = 10

// groupLabel marks the member Leases of one set of shards; its value is the
// shard prefix.
const groupLabel = "prewarm.io/shard-group"

// addressAnnotation holds, on a member Lease, the URL at which the other
// replicas reach that replica's API (ShardConfig.Address).
const addressAnnotation = "prewarm.io/api-address"

// membership keeps this replica's member Lease (prefix-member-IDENTITY)
// renewed and reads the others', so that every replica knows how many are
// alive and can take its share of the buckets. A member is alive while its
// Lease has changed within its lease duration, as measured on this
// replica's clock, the way client-go judges bucket Leases, so clocks need
// not agree. A member Lease unchanged for forgetAfter is deleted, so that
// pods replaced under new names leave no Leases behind.
type membership struct {
	leases   coordinationv1client.LeaseInterface
	name     string // this replica's member Lease
	identity string
	group    string
	duration time.Duration
	// forgetAfter is how long a member Lease stays unchanged before it is
	// deleted.
	forgetAfter time.Duration

	// address is this replica's API URL, written on its member Lease.
	address string

	own  *coordinationv1.Lease     // last written, nil to read it again
	seen map[string]memberSighting // by Lease name

	mu        sync.Mutex
	addresses map[string]string // the live members' API URLs, by identity
}

// memberSighting is what this replica last saw of a member Lease.
type memberSighting struct {
	version  string    // resourceVersion, which every renewal changes
	at       time.Time // when this replica saw that version first
	holder   string
	duration time.Duration
	address  string
}

// newMembership prepares the member Lease of identity in group prefix.
func newMembership(leases coordinationv1client.LeaseInterface, prefix, identity, address string, duration time.Duration) *membership {
	return &membership{
		leases:      leases,
		name:        memberName(prefix, identity),
		identity:    identity,
		address:     address,
		group:       prefix,
		duration:    duration,
		forgetAfter: forgetMembersAfter * duration,
		seen:        map[string]memberSighting{},
	}
}

// memberName is the member Lease of a replica.
func memberName(prefix, identity string) string {
	return prefix + "-member-" + identity
}

// heartbeat renews this replica's member Lease, creating it when missing;
// holder "" marks a replica that left.
func (m *membership) heartbeat(ctx context.Context, holder string) error {
	if m.own == nil {
		got, err := m.leases.Get(ctx, m.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return m.create(ctx, holder)
		case err != nil:
			return fmt.Errorf("election: member lease %s: %w", m.name, err)
		}
		m.own = got
	}
	m.own.Spec = m.spec(holder)
	m.annotate(m.own)
	updated, err := m.leases.Update(ctx, m.own, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) { // forgotten by the others while away
		return m.create(ctx, holder)
	}
	if err != nil {
		m.own = nil
		return fmt.Errorf("election: member lease %s: %w", m.name, err)
	}
	m.own = updated
	return nil
}

// create writes this replica's member Lease for the first time.
func (m *membership) create(ctx context.Context, holder string) error {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: m.name, Labels: map[string]string{groupLabel: m.group}},
		Spec:       m.spec(holder),
	}
	m.annotate(lease)
	created, err := m.leases.Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("election: member lease %s: %w", m.name, err)
	}
	m.own = created
	return nil
}

// annotate writes this replica's API address on its member Lease.
func (m *membership) annotate(lease *coordinationv1.Lease) {
	if m.address == "" {
		return
	}
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[addressAnnotation] = m.address
}

// addressOf is the API URL of the live member identity, "" when it has
// none or is not known to be alive.
func (m *membership) addressOf(identity string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addresses[identity]
}

// spec is a member Lease renewed now.
func (m *membership) spec(holder string) coordinationv1.LeaseSpec {
	seconds := int32(m.duration / time.Second)
	now := metav1.NewMicroTime(time.Now())
	return coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now}
}

// alive lists the member Leases and returns the identities of the live
// members, this replica's included, sorted.
func (m *membership) alive(ctx context.Context) ([]string, error) {
	list, err := m.leases.List(ctx, metav1.ListOptions{LabelSelector: groupLabel + "=" + m.group})
	if err != nil {
		return nil, fmt.Errorf("election: listing member leases: %w", err)
	}
	now := time.Now()
	seen := make(map[string]memberSighting, len(list.Items))
	ids := map[string]bool{m.identity: true}
	addresses := map[string]string{}
	for i := range list.Items {
		lease := &list.Items[i]
		s := m.sighting(lease, now)
		seen[lease.Name] = s
		if s.holder != "" && now.Before(s.at.Add(s.duration)) {
			ids[s.holder] = true
			if s.address != "" {
				addresses[s.holder] = s.address
			}
		}
		if lease.Name != m.name && now.After(s.at.Add(m.forgetAfter)) {
			m.forget(ctx, lease.Name, s.version)
		}
	}
	m.seen = seen
	m.mu.Lock()
	m.addresses = addresses
	m.mu.Unlock()
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

// forget deletes a member Lease long left unchanged, unless it changed
// since it was read at version; a failure is tried again next round.
func (m *membership) forget(ctx context.Context, name, version string) {
	_ = m.leases.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &version}})
}

// sighting updates what this replica knows of one member Lease.
func (m *membership) sighting(lease *coordinationv1.Lease, now time.Time) memberSighting {
	s, ok := m.seen[lease.Name]
	if !ok || s.version != lease.ResourceVersion {
		s = memberSighting{version: lease.ResourceVersion, at: now}
	}
	s.holder, s.duration = "", 0
	if lease.Spec.HolderIdentity != nil {
		s.holder = *lease.Spec.HolderIdentity
	}
	s.address = lease.Annotations[addressAnnotation]
	if lease.Spec.LeaseDurationSeconds != nil {
		s.duration = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	}
	return s
}

// shareOf is how many of buckets the replica at place index of n live
// replicas (sorted by identity) holds: an even split, the first ones taking
// one more each when it does not divide.
func shareOf(index, n, buckets int) int {
	if n < 1 {
		return buckets
	}
	share := buckets / n
	if index < buckets%n {
		share++
	}
	return share
}
