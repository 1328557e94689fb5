package election

import (
	"context"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Members count the live ones, learn their API addresses and forget Leases
// left stale.
func TestMembershipCountsLiveMembersAndForgetsStaleOnes(t *testing.T) {
	leases := newReplica(t, newServer(t)).client.CoordinationV1().Leases("ns")
	ctx := context.Background()
	a := newMembership(leases, "prewarm-shard", "a", "", time.Second)
	b := newMembership(leases, "prewarm-shard", "b", "http://127.0.0.1:9109", time.Second)
	a.forgetAfter = 1500 * time.Millisecond
	for _, m := range []*membership{a, b} {
		if err := m.heartbeat(ctx, m.identity); err != nil {
			t.Fatal(err)
		}
	}
	// A Lease of another group does not count.
	other := "x"
	_, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "other-member-x", Labels: map[string]string{groupLabel: "other"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &other},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertAlive(t, a, "a", "b")
	// b's member Lease carries its API address; a wrote none.
	assertAlive(t, b, "a", "b")
	if got := a.addressOf("b"); got != "http://127.0.0.1:9109" {
		t.Errorf("b's address as a reads it: %q, want http://127.0.0.1:9109", got)
	}
	if got := b.addressOf("a"); got != "" {
		t.Errorf("a's address as b reads it: %q, want none", got)
	}

	// b stops renewing: a counts it out after a lease duration and
	// deletes its Lease after forgetAfter, while its own stays.
	waitFor(t, 2*time.Second, "b counted out", func() bool {
		if err := a.heartbeat(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		alive, err := a.alive(ctx)
		return err == nil && slices.Equal(alive, []string{"a"})
	})
	if got := a.addressOf("b"); got != "" {
		t.Errorf("a member counted out still has an address: %q", got)
	}
	waitFor(t, time.Second, "b's lease deleted", func() bool {
		_, _ = a.alive(ctx)
		_, err := leases.Get(ctx, b.name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := leases.Get(ctx, a.name, metav1.GetOptions{}); err != nil {
		t.Fatalf("a's own lease: %v", err)
	}

	// A member whose Lease was forgotten writes it again; one that leaves
	// (holder "") is out at once.
	if err := b.heartbeat(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	assertAlive(t, a, "a", "b")
	if err := b.heartbeat(ctx, ""); err != nil {
		t.Fatal(err)
	}
	assertAlive(t, a, "a")
}

// assertAlive checks the members m counts alive.
func assertAlive(t *testing.T, m *membership, want ...string) {
	t.Helper()
	alive, err := m.alive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alive, want) {
		t.Fatalf("alive %v, want %v", alive, want)
	}
}
