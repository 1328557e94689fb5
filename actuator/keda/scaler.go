package keda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	pb "github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// Name is the back-end's registered name.
const Name = "keda"

// PoolKey is the ScaledObject trigger metadata key naming the pool.
const PoolKey = "pool"

// Options configure a Scaler.
type Options struct {
	// Now is the clock deciding which scheduled step is in force. Nil:
	// time.Now.
	Now func() time.Time
	// After waits for the next scheduled step in StreamIsActive. Nil:
	// time.After. Tests inject a channel they control.
	After func(d time.Duration) <-chan time.Time
	// Logger. Nil: slog.Default().
	Logger *slog.Logger
}

// Scaler is a KEDA external scaler serving prewarm's plan, and the
// actuator.Actuator that receives it. It is safe for concurrent use.
type Scaler struct {
	pb.UnimplementedExternalScalerServer

	now   func() time.Time
	after func(time.Duration) <-chan time.Time
	log   *slog.Logger

	mu      sync.Mutex
	pools   map[string]*plan
	changed chan struct{} // closed and replaced whenever a plan changes
}

// plan is what the scaler knows about one pool: the last SetDesired, with
// its time, and the published schedule.
type plan struct {
	set      bool
	setAt    time.Time
	desired  int
	schedule planner.Schedule
}

var (
	_ actuator.Actuator       = (*Scaler)(nil)
	_ pb.ExternalScalerServer = (*Scaler)(nil)
)

// New returns a Scaler with no plans.
func New(opts Options) *Scaler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.After == nil {
		opts.After = time.After
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Scaler{now: opts.Now, after: opts.After, log: opts.Logger.With("backend", Name),
		pools: map[string]*plan{}, changed: make(chan struct{})}
}

// AddPool declares a pool, so KEDA asking for it before prewarm's first
// plan gets codes.Unavailable ("no plan yet") rather than codes.NotFound.
func (s *Scaler) AddPool(pool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pools[pool]; !ok {
		s.pools[pool] = &plan{}
	}
}

// PoolOptions are the pool options Factory reads: none, as the
// ScaledObject's trigger metadata names the pool and KEDA sizes the
// workload. Register them with it, so that any option is refused.
var PoolOptions = actuator.OptionSet{}

// Factory returns an actuator.Factory that declares each configured pool on
// this scaler and returns it: one gRPC server serves every pool.
func (s *Scaler) Factory() actuator.Factory {
	return func(ctx context.Context, cfg actuator.PoolConfig, _ actuator.OptionValues) (actuator.Actuator, error) {
		s.AddPool(cfg.Name)
		return s, nil
	}
}

// ---- actuator.Actuator ----

// Name returns "keda".
func (s *Scaler) Name() string { return Name }

// Capacity reports the plan in force as both Current and Desired (the
// scaler cannot see the Deployment; KEDA drives it there) with no bounds of
// its own (the ScaledObject's min/maxReplicaCount apply in the cluster). A
// pool without a plan yet returns actuator.ErrNotImplemented, so the safety
// layer applies the first plan without a step limit from a made-up size.
func (s *Scaler) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	desired, ok, known := s.inForce(pool)
	if !known {
		return actuator.Capacity{}, fmt.Errorf("keda: pool %q not configured: %w", pool, actuator.ErrRejected)
	}
	if !ok {
		return actuator.Capacity{}, fmt.Errorf("keda: pool %q has no plan yet: %w", pool, actuator.ErrNotImplemented)
	}
	return actuator.Capacity{Current: desired, Desired: desired}, nil
}

// SetDesired makes desired the plan for pool from now on (until a later
// scheduled step), and wakes StreamIsActive watchers.
func (s *Scaler) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	if desired < 0 {
		return fmt.Errorf("keda: pool %q: desired %d < 0: %w", pool, desired, actuator.ErrRejected)
	}
	s.mu.Lock()
	p := s.poolLocked(pool)
	p.set, p.setAt, p.desired = true, s.now(), desired
	s.notifyLocked()
	s.mu.Unlock()
	s.log.Info("plan set", "pool", pool, "desired", desired, "reason", reason)
	return nil
}

// PublishSchedule replaces the pool's future steps; each is served from its
// time on, unless a later SetDesired overrides it.
func (s *Scaler) PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error {
	for i, st := range steps {
		if st.Desired < 0 || (i > 0 && !st.At.After(steps[i-1].At)) {
			return fmt.Errorf("keda: pool %q: schedule step %d invalid (negative or out of order): %w", pool, i, actuator.ErrRejected)
		}
	}
	s.mu.Lock()
	s.poolLocked(pool).schedule = slices.Clone(steps)
	s.notifyLocked()
	s.mu.Unlock()
	s.log.Info("schedule published", "pool", pool, "steps", len(steps))
	return nil
}

// Follow puts in force on this scaler a decision another replica made:
// the memory of the pool's actuator.Safe there, its last change (made at
// LastChange.At, none when that is zero) and the schedule it published. It
// replaces what this scaler serves for the pool, exactly as if that
// replica's SetDesired and PublishSchedule had been made here, so that a
// standby replica answers KEDA with the owner's plan. It calls nothing
// outside this process.
func (s *Scaler) Follow(pool string, m actuator.Memory) error {
	change := m.LastChange
	set := !change.At.IsZero()
	if set && change.To < 0 {
		return fmt.Errorf("keda: pool %q: followed change to %d < 0: %w", pool, change.To, actuator.ErrRejected)
	}
	var steps planner.Schedule
	if m.Published {
		for i, st := range m.Schedule {
			if st.Desired < 0 || (i > 0 && !st.At.After(m.Schedule[i-1].At)) {
				return fmt.Errorf("keda: pool %q: followed schedule step %d invalid (negative or out of order): %w", pool, i, actuator.ErrRejected)
			}
		}
		steps = slices.Clone(m.Schedule)
	}
	s.mu.Lock()
	p := s.poolLocked(pool)
	at := change.At
	if now := s.now(); at.After(now) {
		at = now // the other replica's clock is ahead: the change is in force already
	}
	p.set, p.setAt, p.desired, p.schedule = set, at, change.To, steps
	s.notifyLocked()
	s.mu.Unlock()
	s.log.Debug("plan followed", "pool", pool, "desired", change.To, "set", set, "steps", len(steps))
	return nil
}

// Release is not supported: Kubernetes picks which pod to remove.
func (s *Scaler) Release(ctx context.Context, instanceID, reason string) error {
	return fmt.Errorf("keda: releasing %q: %w", instanceID, actuator.ErrNotImplemented)
}

// inForce returns the plan in force now: the latest of the last SetDesired
// and the scheduled steps whose time has come. ok is false when there is
// none; known is false for an undeclared pool.
func (s *Scaler) inForce(pool string) (desired int, ok, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, known := s.pools[pool]
	if !known {
		return 0, false, false
	}
	desired, ok, _ = p.at(s.now())
	return desired, ok, true
}

// at returns the plan in force at now and the time of the next scheduled
// step after now (zero if none).
func (p *plan) at(now time.Time) (desired int, ok bool, next time.Time) {
	var since time.Time // when the value in force took effect
	if p.set && !p.setAt.After(now) {
		desired, ok, since = p.desired, true, p.setAt
	}
	for _, st := range p.schedule {
		if st.At.After(now) {
			next = st.At
			break
		}
		if !ok || st.At.After(since) {
			desired, ok, since = st.Desired, true, st.At
		}
	}
	return desired, ok, next
}

// poolLocked returns the pool's plan, declaring it if needed. s.mu held.
func (s *Scaler) poolLocked(pool string) *plan {
	p, ok := s.pools[pool]
	if !ok {
		p = &plan{}
		s.pools[pool] = p
	}
	return p
}

// notifyLocked wakes every StreamIsActive watcher. s.mu held.
func (s *Scaler) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// ---- externalscaler.ExternalScalerServer ----

// poolOf reads the pool from the ScaledObject's trigger metadata.
func poolOf(ref *pb.ScaledObjectRef) (string, error) {
	if ref == nil {
		return "", status.Error(codes.InvalidArgument, "missing ScaledObjectRef")
	}
	pool := strings.TrimSpace(ref.GetScalerMetadata()[PoolKey])
	if pool == "" {
		return "", status.Errorf(codes.InvalidArgument,
			"ScaledObject %s/%s: trigger metadata %q is required (the prewarm pool to follow)",
			ref.GetNamespace(), ref.GetName(), PoolKey)
	}
	return pool, nil
}

// MetricName is the metric name the scaler reports for pool: "prewarm-"
// and the pool with characters outside [a-z0-9-] replaced by '-'.
func MetricName(pool string) string {
	b := []byte("prewarm-" + strings.ToLower(pool))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	return string(b)
}

// GetMetricSpec asks for one replica per planned instance: a target of 1
// (TargetSizeFloat for KEDA ≥ 2.15, TargetSize for older releases).
func (s *Scaler) GetMetricSpec(ctx context.Context, ref *pb.ScaledObjectRef) (*pb.GetMetricSpecResponse, error) {
	pool, err := poolOf(ref)
	if err != nil {
		return nil, err
	}
	return &pb.GetMetricSpecResponse{MetricSpecs: []*pb.MetricSpec{{
		MetricName: MetricName(pool), TargetSize: 1, TargetSizeFloat: 1,
	}}}, nil
}

// GetMetrics returns the planned capacity in force now. A pool prewarm has
// no plan for yet is codes.Unavailable (KEDA then keeps the current size or
// applies its fallback); an unknown pool is codes.NotFound.
func (s *Scaler) GetMetrics(ctx context.Context, req *pb.GetMetricsRequest) (*pb.GetMetricsResponse, error) {
	pool, err := poolOf(req.GetScaledObjectRef())
	if err != nil {
		return nil, err
	}
	desired, err := s.served(pool)
	if err != nil {
		return nil, err
	}
	name := req.GetMetricName()
	if name == "" {
		name = MetricName(pool)
	}
	return &pb.GetMetricsResponse{MetricValues: []*pb.MetricValue{{
		MetricName: name, MetricValue: int64(desired), MetricValueFloat: float64(desired),
	}}}, nil
}

// IsActive is true when the plan in force is above zero.
func (s *Scaler) IsActive(ctx context.Context, ref *pb.ScaledObjectRef) (*pb.IsActiveResponse, error) {
	pool, err := poolOf(ref)
	if err != nil {
		return nil, err
	}
	desired, err := s.served(pool)
	if err != nil {
		return nil, err
	}
	return &pb.IsActiveResponse{Result: desired > 0}, nil
}

// served is the plan in force for pool, or a gRPC status error.
func (s *Scaler) served(pool string) (int, error) {
	desired, ok, known := s.inForce(pool)
	switch {
	case !known:
		return 0, status.Errorf(codes.NotFound, "pool %q is not configured in prewarm (known: %s)", pool, strings.Join(s.poolNames(), ", "))
	case !ok:
		return 0, status.Errorf(codes.Unavailable, "pool %q: prewarm has no plan yet", pool)
	}
	return desired, nil
}

func (s *Scaler) poolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.pools))
	for n := range s.pools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// StreamIsActive sends the pool's active state at once, then again each
// time the plan in force changes: when prewarm sets or publishes a new plan
// or when a scheduled step's time comes. It ends when the client goes away
// or the server stops.
func (s *Scaler) StreamIsActive(ref *pb.ScaledObjectRef, stream grpc.ServerStreamingServer[pb.IsActiveResponse]) error {
	pool, err := poolOf(ref)
	if err != nil {
		return err
	}
	lastSent := -1 // the plan value last reported; -1: nothing sent yet
	for {
		s.mu.Lock()
		p, known := s.pools[pool]
		if !known {
			s.mu.Unlock()
			return status.Errorf(codes.NotFound, "pool %q is not configured in prewarm", pool)
		}
		desired, ok, next := p.at(s.now())
		changed := s.changed
		s.mu.Unlock()

		if ok && desired != lastSent {
			if err := stream.Send(&pb.IsActiveResponse{Result: desired > 0}); err != nil {
				return err
			}
			lastSent = desired
		}
		var stepDue <-chan time.Time
		if !next.IsZero() {
			stepDue = s.after(next.Sub(s.now()))
		}
		select {
		case <-stream.Context().Done():
			return nil // the client went away, or Serve is stopping
		case <-changed:
		case <-stepDue:
		}
	}
}

// Register adds the scaler to a gRPC server, for callers that run their
// own (with TLS, interceptors, health checks). StreamIsActive streams end
// when their client goes away; such a server's GracefulStop waits for them,
// so stop it with Stop (or GracefulStop with a deadline, then Stop).
func (s *Scaler) Register(srv grpc.ServiceRegistrar) {
	pb.RegisterExternalScalerServer(srv, s)
}

// Serve runs a gRPC server for the scaler on lis until ctx ends, then stops
// it gracefully (open streams end at once). opts are passed to
// grpc.NewServer (add credentials for TLS).
//
// Serve may be called again after it returns, or concurrently on several
// listeners: each call ends only its own streams.
func (s *Scaler) Serve(ctx context.Context, lis net.Listener, opts ...grpc.ServerOption) error {
	stopping, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	opts = append(slices.Clip(opts), grpc.ChainStreamInterceptor(endWith(stopping)))
	srv := grpc.NewServer(opts...)
	s.Register(srv)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return fmt.Errorf("keda scaler on %s: %w", lis.Addr(), err)
	case <-ctx.Done():
	}
	endStreams() // StreamIsActive never ends by itself: end it for GracefulStop
	srv.GracefulStop()
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("keda scaler on %s: %w", lis.Addr(), err)
	}
	return nil
}

// endWith returns a stream interceptor whose streams' contexts also end
// when stopping does.
func endWith(stopping context.Context) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, cancel := context.WithCancel(ss.Context())
		defer cancel()
		defer context.AfterFunc(stopping, cancel)()
		return handler(srv, &stoppableStream{ServerStream: ss, ctx: ctx})
	}
}

// stoppableStream is a server stream with a context Serve can end.
type stoppableStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *stoppableStream) Context() context.Context { return s.ctx }

// ListenAndServe listens on addr (":9090") and calls Serve.
func (s *Scaler) ListenAndServe(ctx context.Context, addr string, opts ...grpc.ServerOption) error {
	var lc net.ListenConfig
	lis, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("keda scaler: %w", err)
	}
	s.log.Info("KEDA external scaler listening", "addr", lis.Addr().String())
	return s.Serve(ctx, lis, opts...)
}
