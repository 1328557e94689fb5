package actuator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

func TestSafeMetrics(t *testing.T) {
	h := newHarness(t, actuator.PoolConfig{Limits: planner.Limits{MaxInstances: 10}}, 2, 0, 0, func(o *actuator.SafetyOptions) {
		o.Retry.MaxAttempts = 2
	})
	throttled := true
	h.fake.OnScale = func(string, int, int) error {
		if throttled {
			throttled = false
			return actuator.ErrThrottled
		}
		return nil
	}
	ctx := context.Background()
	_ = h.safe.SetDesired(ctx, "p", 5, "up")   // ok after one retry
	_ = h.safe.SetDesired(ctx, "p", 5, "same") // noop
	_ = h.safe.SetDesired(ctx, "p", -3, "bad") // refused

	want := `
# HELP prewarm_actuator_calls_total Calls through the actuator safety layer by back-end, operation and outcome.
# TYPE prewarm_actuator_calls_total counter
prewarm_actuator_calls_total{backend="fake",op="set_desired",outcome="noop"} 1
prewarm_actuator_calls_total{backend="fake",op="set_desired",outcome="ok"} 1
prewarm_actuator_calls_total{backend="fake",op="set_desired",outcome="refused"} 1
# HELP prewarm_actuator_retries_total Retries after throttling, transient errors or timeouts.
# TYPE prewarm_actuator_retries_total counter
prewarm_actuator_retries_total{backend="fake",op="set_desired"} 1
# HELP prewarm_actuator_desired_instances Desired size of the pool as last applied or read.
# TYPE prewarm_actuator_desired_instances gauge
prewarm_actuator_desired_instances{backend="fake",pool="p"} 5
# HELP prewarm_actuator_current_instances Current size of the pool as last read from the back-end.
# TYPE prewarm_actuator_current_instances gauge
prewarm_actuator_current_instances{backend="fake",pool="p"} 5
# HELP prewarm_actuator_circuit_state Circuit breaker state per pool: 0 closed, 1 half-open, 2 open.
# TYPE prewarm_actuator_circuit_state gauge
prewarm_actuator_circuit_state{backend="fake",pool="p"} 0
`
	if err := testutil.GatherAndCompare(h.reg, strings.NewReader(want),
		"prewarm_actuator_calls_total", "prewarm_actuator_retries_total", "prewarm_actuator_desired_instances",
		"prewarm_actuator_current_instances", "prewarm_actuator_circuit_state"); err != nil {
		t.Error(err)
	}
	// Latency: one observation per back-end attempt: 2 capacity reads + 2
	// SetDesired attempts (the refused call never reached the back-end).
	if n := histogramCount(t, h.reg, "prewarm_actuator_call_duration_seconds"); n != 4 {
		t.Errorf("latency observations = %d, want 4", n)
	}
	if _, err := actuator.NewMetrics(h.reg); err == nil {
		t.Error("registering the metrics twice on one registry: no error")
	}
}

func histogramCount(t *testing.T, g prometheus.Gatherer, name string) uint64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}
