package service

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	pb "github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/keda"
	"github.com/prewarm/prewarm/election"
	"github.com/prewarm/prewarm/election/kubetest"
	"github.com/prewarm/prewarm/poolspec"
)

// sharderShards is package election's Sharder with the identity and
// bucket count the service asks of Shards (as serve wires it).
type sharderShards struct {
	*election.Sharder
	identity string
}

func (s sharderShards) Identity() string       { return s.identity }
func (s sharderShards) Bucket(pool string) int { return election.Bucket(pool, 1) }

// kedaReplica is one serve replica with election on over the Kubernetes
// stand-in (one bucket, a 1s lease) and a KEDA scaler served on loopback.
type kedaReplica struct {
	*rig
	identity string
	scaler   pb.ExternalScalerClient
	shards   sharderShards
	stop     func() // ends the election, releasing the bucket
}

func newKedaReplica(t *testing.T, kube *kubetest.Server, identity string) *kedaReplica {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: kube.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	sharder, err := election.NewSharder(cs.CoordinationV1(), election.ShardConfig{Namespace: "prewarm", Identity: identity,
		Buckets: 1, Timings: election.Timings{LeaseDuration: time.Second, RenewDeadline: 600 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	store, err := election.NewStore(cs.CoreV1(), "prewarm", "prewarm-shard")
	if err != nil {
		t.Fatal(err)
	}
	shards := sharderShards{Sharder: sharder, identity: identity}
	r := &kedaReplica{identity: identity, shards: shards}
	scaler := keda.New(keda.Options{Logger: slog.New(slog.DiscardHandler)})
	factory := scaler.Factory()
	r.rig = newRigWith(t, 1, func(p *poolspec.Pool) {
		p.Backend, p.Mode, p.Fleet.MaxStep, p.Fleet.MinInterval = keda.Name, poolspec.ModeActive, 4, 10*time.Minute
		p.Windows = "daily 00:00-24:00 at least 30"
	}, func(d *Deps) {
		d.Shards, d.ShardStore = shards, store
		d.Backend = func(ctx context.Context, cfg actuator.PoolConfig) (actuator.Actuator, error) {
			return factory(ctx, cfg, actuator.OptionValues{})
		}
	})
	r.writeDemand(t, r.clock.Now().Add(-10*time.Minute), r.clock.Now().Add(time.Hour), func(time.Time) float64 { return 5 })

	ctx, cancel := context.WithCancel(context.Background())
	elected := make(chan struct{})
	go func() {
		defer close(elected)
		_ = sharder.Run(ctx)
	}()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- scaler.Serve(ctx, lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	r.scaler = pb.NewExternalScalerClient(conn)
	r.stop = func() {
		cancel()
		<-elected
	}
	t.Cleanup(func() {
		conn.Close()
		r.stop()
		if err := <-served; err != nil {
			t.Errorf("%s's scaler: %v", identity, err)
		}
	})
	return r
}

// served asks the replica's scaler over gRPC what KEDA would read: the
// metric value and the active state ("" error text when both answered).
func (r *kedaReplica) served(t *testing.T) (value int64, active bool, failure string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ref := &pb.ScaledObjectRef{Name: "sd", Namespace: "inference", ScalerMetadata: map[string]string{keda.PoolKey: testPool}}
	m, err := r.scaler.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref, MetricName: keda.MetricName(testPool)})
	if err != nil {
		return 0, false, "GetMetrics: " + err.Error()
	}
	a, err := r.scaler.IsActive(ctx, ref)
	if err != nil {
		return 0, false, "IsActive: " + err.Error()
	}
	if len(m.MetricValues) != 1 {
		return 0, false, "GetMetrics: no single value"
	}
	return m.MetricValues[0].MetricValue, a.Result, ""
}

// ownerOf waits (at most 10s) until exactly one of the replicas owns the
// pool's bucket and returns it first.
func ownerOf(t *testing.T, a, b *kedaReplica) (owner, standby *kedaReplica) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		switch oa, ob := a.shards.Owns(testPool), b.shards.Owns(testPool); {
		case oa && !ob:
			return a, b
		case ob && !oa:
			return b, a
		}
	}
	t.Fatal("no single owner of the pool within 10s")
	return nil, nil
}

// KEDA's operator reaches either replica through the scaler's Service, so
// every replica's scaler answers with the owner's decision: the standby
// follows the change the owner made, read from the shared state, by its
// next decision, without applying anything itself; after the owner goes,
// the new owner serves the same plan and makes no change of its own.
func TestStandbyScalerServesTheOwnersPlan(t *testing.T) {
	kube := kubetest.NewServer()
	t.Cleanup(kube.Close)
	owner, standby := ownerOf(t, newKedaReplica(t, kube, "replica-a"), newKedaReplica(t, kube, "replica-b"))

	if _, _, failure := standby.served(t); failure == "" {
		t.Fatalf("the standby serves a plan before any decision")
	}
	if st := tick(t, owner.rig); st.Outcome != OutcomeApplied || st.Desired != 30 {
		t.Fatalf("owner %s: outcome %s (%s), desired %d; want applied, 30", owner.identity, st.Outcome, st.Reason, st.Desired)
	}
	if v, active, failure := owner.served(t); failure != "" || v != 30 || !active {
		t.Fatalf("owner's scaler: %d, active %v, %s; want 30, active", v, active, failure)
	}
	decided := time.Now()
	st := tick(t, standby.rig)
	v, active, failure := standby.served(t)
	t.Logf("standby %s answered %v after the owner's decision (one decision of its own between)", standby.identity, time.Since(decided))
	if failure != "" || v != 30 || !active {
		t.Errorf("standby's scaler after its next decision: %d, active %v, %s; want the owner's 30, active", v, active, failure)
	}
	if st.Outcome != OutcomeStandby || st.Current != 30 {
		t.Errorf("standby: outcome %s (%s), current %d; want standby at the owner's 30", st.Outcome, st.Reason, st.Current)
	}

	owner.stop() // a clean shutdown releases the bucket
	for deadline := time.Now().Add(5 * time.Second); !standby.shards.Owns(testPool); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not take the pool over within 5s", standby.identity)
		}
	}
	standby.clock.Advance(time.Minute)
	if st := tick(t, standby.rig); st.Outcome != OutcomeUnchanged || st.Desired != 30 {
		t.Errorf("new owner: outcome %s (%s), desired %d; want unchanged at 30", st.Outcome, st.Reason, st.Desired)
	}
	if v, active, failure := standby.served(t); failure != "" || v != 30 || !active {
		t.Errorf("new owner's scaler: %d, active %v, %s; want 30, active", v, active, failure)
	}
}
