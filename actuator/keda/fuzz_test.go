package keda_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	pb "github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/prewarm/prewarm/actuator/actuatortest"
)

// metricNameRE is what KEDA and the HPA accept as a metric name.
var metricNameRE = regexp.MustCompile(`^[a-z0-9-]+$`)

// FuzzScalerMetadata decodes any GetMetricsRequest the way KEDA's gRPC
// call arrives (protobuf wire bytes: the ScaledObject's trigger metadata
// and the metric name) and asks every method of the scaler: nothing
// panics; a refusal is InvalidArgument (no pool), NotFound (a pool prewarm
// does not know) or Unavailable (no plan yet); an answer is the plan in
// force for the pool the metadata names, under a valid metric name.
func FuzzScalerMetadata(f *testing.F) {
	for _, req := range []*pb.GetMetricsRequest{
		{ScaledObjectRef: ref("sd"), MetricName: "s0-prewarm-sd"},
		{ScaledObjectRef: ref(" idle "), MetricName: ""},
		{ScaledObjectRef: ref("noplan")},
		{ScaledObjectRef: ref("")},
		{ScaledObjectRef: ref("SD/Ünïcode pool")},
		{},
	} {
		b, err := proto.Marshal(req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	plans := map[string]int{"sd": 3, "idle": 0}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var req pb.GetMetricsRequest
		if proto.Unmarshal(raw, &req) != nil {
			return
		}
		clock := actuatortest.NewClock(t0)
		s := newScaler(clock)
		ctx := context.Background()
		for pool, n := range plans {
			s.AddPool(pool)
			if err := s.SetDesired(ctx, pool, n, "fuzz"); err != nil {
				t.Fatal(err)
			}
		}
		s.AddPool("noplan")
		refused := func(op string, err error) bool {
			if err == nil {
				return false
			}
			switch status.Code(err) {
			case codes.InvalidArgument, codes.NotFound, codes.Unavailable:
				return true
			}
			t.Fatalf("%s: %v, want InvalidArgument, NotFound or Unavailable", op, err)
			return true
		}
		ref := req.GetScaledObjectRef()
		spec, err := s.GetMetricSpec(ctx, ref)
		if !refused("GetMetricSpec", err) {
			if len(spec.MetricSpecs) != 1 || !metricNameRE.MatchString(spec.MetricSpecs[0].MetricName) || spec.MetricSpecs[0].TargetSize != 1 {
				t.Fatalf("GetMetricSpec = %v", spec)
			}
		}
		metrics, err := s.GetMetrics(ctx, &req)
		if !refused("GetMetrics", err) {
			pool := poolIn(ref)
			want, known := plans[pool]
			if !known || len(metrics.MetricValues) != 1 || metrics.MetricValues[0].MetricValue != int64(want) {
				t.Fatalf("GetMetrics for pool %q = %v, want %d", pool, metrics, want)
			}
		}
		active, err := s.IsActive(ctx, ref)
		if !refused("IsActive", err) && active.Result != (plans[poolIn(ref)] > 0) {
			t.Fatalf("IsActive for pool %q = %v", poolIn(ref), active.Result)
		}
	})
}

// poolIn is the pool a ScaledObject names: the metadata's pool, white
// space around it ignored.
func poolIn(ref *pb.ScaledObjectRef) string {
	return strings.TrimSpace(ref.GetScalerMetadata()["pool"])
}
