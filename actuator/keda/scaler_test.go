package keda_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net"
	"testing"
	"time"

	pb "github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/keda"
	"github.com/prewarm/prewarm/planner"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// serve starts the scaler on a loopback TCP port and returns a real gRPC
// client connected to it.
func serve(t *testing.T, s *keda.Scaler) pb.ExternalScalerClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return pb.NewExternalScalerClient(conn)
}

func ref(pool string) *pb.ScaledObjectRef {
	md := map[string]string{"scalerAddress": "prewarm:9090"}
	if pool != "" {
		md["pool"] = pool
	}
	return &pb.ScaledObjectRef{Name: "sd", Namespace: "inference", ScalerMetadata: md}
}

func newScaler(clock *actuatortest.Clock) *keda.Scaler {
	return keda.New(keda.Options{Now: clock.Now, Logger: slog.New(slog.DiscardHandler)})
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestGetMetricSpec(t *testing.T) {
	s := newScaler(actuatortest.NewClock(t0))
	s.AddPool("sd-pool")
	c := serve(t, s)
	resp, err := c.GetMetricSpec(callCtx(t), ref("sd-pool"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.MetricSpecs) != 1 {
		t.Fatalf("specs = %v", resp.MetricSpecs)
	}
	spec := resp.MetricSpecs[0]
	if spec.MetricName != "prewarm-sd-pool" || spec.TargetSize != 1 || spec.TargetSizeFloat != 1 {
		t.Errorf("spec = %v, want prewarm-sd-pool with target 1", spec)
	}
	_, err = c.GetMetricSpec(callCtx(t), ref(""))
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("missing pool metadata: %v, want InvalidArgument", err)
	}
}

func TestGetMetricsAndIsActive(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	s := newScaler(clock)
	s.AddPool("sd-pool")
	c := serve(t, s)
	ctx := callCtx(t)

	// Before any plan: Unavailable, so KEDA keeps the Deployment as is.
	if _, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("sd-pool"), MetricName: "prewarm-sd-pool"}); status.Code(err) != codes.Unavailable {
		t.Errorf("no plan: GetMetrics error %v, want Unavailable", err)
	}
	if _, err := c.IsActive(ctx, ref("other")); status.Code(err) != codes.NotFound {
		t.Errorf("unknown pool: IsActive error %v, want NotFound", err)
	}

	tests := []struct {
		desired    int
		wantActive bool
	}{{5, true}, {0, false}, {12, true}}
	for _, tt := range tests {
		if err := s.SetDesired(ctx, "sd-pool", tt.desired, "forecast"); err != nil {
			t.Fatal(err)
		}
		m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("sd-pool"), MetricName: "prewarm-sd-pool"})
		if err != nil {
			t.Fatal(err)
		}
		v := m.MetricValues[0]
		if v.MetricName != "prewarm-sd-pool" || v.MetricValue != int64(tt.desired) || v.MetricValueFloat != float64(tt.desired) {
			t.Errorf("desired %d: metric = %v", tt.desired, v)
		}
		a, err := c.IsActive(ctx, ref("sd-pool"))
		if err != nil || a.Result != tt.wantActive {
			t.Errorf("desired %d: IsActive = %v, %v; want %v", tt.desired, a.GetResult(), err, tt.wantActive)
		}
	}
}

func TestScheduleServedAtRequestTime(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	s := newScaler(clock)
	c := serve(t, s)
	ctx := callCtx(t)
	if err := s.SetDesired(ctx, "sd-pool", 2, "now"); err != nil {
		t.Fatal(err)
	}
	steps := planner.Schedule{
		{At: t0.Add(10 * time.Minute), Desired: 6, Reason: "pre-warm for 10:15"},
		{At: t0.Add(60 * time.Minute), Desired: 3, Reason: "after peak"},
	}
	if err := s.PublishSchedule(ctx, "sd-pool", steps); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at   time.Duration // after t0
		set  int           // SetDesired at that time first, if > 0
		want int
	}{
		{at: 0, want: 2},
		{at: 9*time.Minute + 59*time.Second, want: 2},
		{at: 10 * time.Minute, want: 6},
		{at: 30 * time.Minute, set: 8, want: 8}, // a reactive override wins over the earlier step
		{at: 59 * time.Minute, want: 8},
		{at: 60 * time.Minute, want: 3}, // until the next step
		{at: 24 * time.Hour, want: 3},
	}
	for _, tt := range tests {
		clock.Advance(t0.Add(tt.at).Sub(clock.Now()))
		if tt.set > 0 {
			if err := s.SetDesired(ctx, "sd-pool", tt.set, "reactive"); err != nil {
				t.Fatal(err)
			}
		}
		m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("sd-pool")})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.MetricValues[0].MetricValueFloat; got != float64(tt.want) {
			t.Errorf("at t0+%v: plan = %v, want %d", tt.at, got, tt.want)
		}
		if cap, err := s.Capacity(ctx, "sd-pool"); err != nil || cap.Desired != tt.want {
			t.Errorf("at t0+%v: Capacity = %+v, %v", tt.at, cap, err)
		}
	}
	if err := s.PublishSchedule(ctx, "sd-pool", planner.Schedule{{At: t0, Desired: 1}, {At: t0, Desired: 2}}); !errors.Is(err, actuator.ErrRejected) {
		t.Errorf("out-of-order schedule: %v, want ErrRejected", err)
	}
}

func TestStreamIsActivePushesOnChange(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	stepDue := make(chan time.Time, 1)
	waits := make(chan time.Duration, 10) // what the stream is waiting for
	s := keda.New(keda.Options{Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
		After: func(d time.Duration) <-chan time.Time { waits <- d; return stepDue }})
	c := serve(t, s)
	ctx := callCtx(t)
	if err := s.SetDesired(ctx, "sd-pool", 0, "night"); err != nil {
		t.Fatal(err)
	}
	stream, err := c.StreamIsActive(ctx, ref("sd-pool"))
	if err != nil {
		t.Fatal(err)
	}
	recv := func(step string, want bool) {
		t.Helper()
		r, err := stream.Recv()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if r.Result != want {
			t.Errorf("%s: pushed %v, want %v", step, r.Result, want)
		}
	}
	recv("initial state", false)
	if err := s.SetDesired(ctx, "sd-pool", 4, "morning"); err != nil {
		t.Fatal(err)
	}
	recv("after SetDesired 4", true)
	if err := s.PublishSchedule(ctx, "sd-pool", planner.Schedule{{At: t0.Add(time.Hour), Desired: 0}}); err != nil {
		t.Fatal(err)
	}
	// The schedule changed but the plan in force did not: nothing is sent;
	// the stream waits for the step's time.
	select {
	case d := <-waits:
		if d != time.Hour {
			t.Errorf("stream waits %v for the step, want 1h", d)
		}
	case <-ctx.Done():
		t.Fatal("the stream never waited for the scheduled step")
	}
	clock.Advance(time.Hour)
	stepDue <- t0.Add(time.Hour)
	recv("scheduled step in force", false)
}

func TestScalerBehindSafe(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	s := newScaler(clock)
	r := actuator.NewRegistry()
	if err := r.Register(keda.Name, s.Factory(), keda.PoolOptions); err != nil {
		t.Fatal(err)
	}
	cfg := actuator.PoolConfig{Name: "sd-pool", Backend: keda.Name, Limits: planner.Limits{MinInstances: 1, MaxInstances: 10, MaxStep: 4}}
	a, err := r.New(context.Background(), keda.Name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	safe := actuator.NewSafe(a, actuator.SafetyOptions{Pools: []actuator.PoolConfig{cfg}, Now: clock.Now,
		Logger: slog.New(slog.DiscardHandler)})
	c := serve(t, s)
	ctx := callCtx(t)
	get := func() float64 {
		m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("sd-pool")})
		if err != nil {
			t.Fatal(err)
		}
		return m.MetricValues[0].MetricValueFloat
	}
	steps := []struct {
		desired float64
		wantErr error
		want    float64
	}{
		{desired: 30, want: 10}, // first plan: no step limit from an unknown size, clamped to max
		{desired: 2.5, want: 6}, // max_step 4 down from 10
		{desired: math.NaN(), wantErr: actuator.ErrInvalidDesired, want: 6},
		{desired: -1, wantErr: actuator.ErrInvalidDesired, want: 6},
	}
	for _, st := range steps {
		err := safe.Apply(ctx, "sd-pool", st.desired, "planner")
		if !errors.Is(err, st.wantErr) || (err != nil) != (st.wantErr != nil) {
			t.Fatalf("Apply(%v) = %v, want %v", st.desired, err, st.wantErr)
		}
		if got := get(); got != st.want {
			t.Errorf("Apply(%v): served %v, want %v", st.desired, got, st.want)
		}
	}
	if err := safe.Release(ctx, "pod-1", "x"); !errors.Is(err, actuator.ErrNotImplemented) {
		t.Errorf("Release: %v, want ErrNotImplemented", err)
	}
}
