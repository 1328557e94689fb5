package keda_test

import (
	"context"
	"errors"
	"testing"
	"time"

	pb "github.com/kedacore/keda/v2/pkg/scalers/externalscaler"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/planner"
)

// Follow serves another replica's decision as if it had been made here:
// its last change from its time, the steps it published from theirs, a
// change dated ahead of this clock at once; what it had before is
// replaced, and an invalid memory is refused, leaving the plan as it was.
func TestFollowServesAnotherReplicasDecision(t *testing.T) {
	schedule := planner.Schedule{{At: t0.Add(10 * time.Minute), Desired: 6}, {At: t0.Add(20 * time.Minute), Desired: 3}}
	tests := []struct {
		name    string
		m       actuator.Memory
		after   time.Duration // when GetMetrics is asked, from t0
		want    int64         // -1: no plan (Unavailable)
		refused bool
	}{
		{name: "last change", m: actuator.Memory{LastChange: actuator.Change{At: t0.Add(-time.Minute), From: 1, To: 5}}, want: 5},
		{name: "a change dated ahead counts from now", m: actuator.Memory{LastChange: actuator.Change{At: t0.Add(time.Hour), To: 7}}, want: 7},
		{name: "scheduled step in force", m: actuator.Memory{LastChange: actuator.Change{At: t0, To: 2}, Schedule: schedule, Published: true},
			after: 15 * time.Minute, want: 6},
		{name: "change before the first step", m: actuator.Memory{LastChange: actuator.Change{At: t0, To: 2}, Schedule: schedule, Published: true},
			after: 5 * time.Minute, want: 2},
		{name: "schedule without a change", m: actuator.Memory{Schedule: schedule, Published: true}, after: 25 * time.Minute, want: 3},
		{name: "nothing decided yet replaces the earlier plan", m: actuator.Memory{}, want: -1},
		{name: "negative change refused", m: actuator.Memory{LastChange: actuator.Change{At: t0, To: -1}}, want: 9, refused: true},
		{name: "steps out of order refused", m: actuator.Memory{Schedule: planner.Schedule{schedule[1], schedule[0]}, Published: true},
			want: 9, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := actuatortest.NewClock(t0)
			s := newScaler(clock)
			c := serve(t, s)
			if err := s.SetDesired(context.Background(), "sd-pool", 9, "this replica's own"); err != nil {
				t.Fatal(err)
			}
			err := s.Follow("sd-pool", tt.m)
			if tt.refused != errors.Is(err, actuator.ErrRejected) {
				t.Fatalf("Follow: %v, want refused %v", err, tt.refused)
			}
			clock.Advance(tt.after)
			got, active, failure := metric(t, c)
			switch {
			case tt.want < 0 && failure == "":
				t.Errorf("served %d, want no plan", got)
			case tt.want >= 0 && (failure != "" || got != tt.want || active != (tt.want > 0)):
				t.Errorf("served %d (active %v, %s), want %d", got, active, failure, tt.want)
			}
		})
	}
}

// metric is what KEDA reads of sd-pool over gRPC: the metric value and the
// active state, or the failure's text.
func metric(t *testing.T, c pb.ExternalScalerClient) (value int64, active bool, failure string) {
	t.Helper()
	ctx := callCtx(t)
	m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("sd-pool"), MetricName: "prewarm-sd-pool"})
	if err != nil {
		return 0, false, err.Error()
	}
	a, err := c.IsActive(ctx, ref("sd-pool"))
	if err != nil {
		return 0, false, err.Error()
	}
	return m.MetricValues[0].MetricValue, a.Result, ""
}
