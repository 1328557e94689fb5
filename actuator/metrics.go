package actuator

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus collectors the safety layer updates. Create
// one set per process with NewMetrics and pass it to every Safe wrapper;
// the back-end name is a label.
type Metrics struct {
	calls        *prometheus.CounterVec   // backend, op, outcome
	latency      *prometheus.HistogramVec // backend, op: one observation per back-end attempt
	retries      *prometheus.CounterVec   // backend, op
	desired      *prometheus.GaugeVec     // backend, pool
	current      *prometheus.GaugeVec     // backend, pool
	circuitState *prometheus.GaugeVec     // backend, pool: 0 closed, 1 half-open, 2 open
	circuitOpens *prometheus.CounterVec   // backend, pool
}

// NewMetrics creates the actuator metrics and registers them on reg (a
// prometheus.NewRegistry() in tests, prometheus.DefaultRegisterer or the
// service's registry in production).
//
//	prewarm_actuator_calls_total{backend,op,outcome}         calls through the safety layer
//	prewarm_actuator_call_duration_seconds{backend,op}       latency of each back-end attempt (retries and the
//	                                                         capacity read before applying a decision included, so its
//	                                                         count exceeds calls_total)
//	prewarm_actuator_retries_total{backend,op}               retries after throttling/transient errors
//	prewarm_actuator_desired_instances{backend,pool}         last desired size applied
//	prewarm_actuator_current_instances{backend,pool}         current size last read
//	prewarm_actuator_circuit_state{backend,pool}             0 closed, 1 half-open, 2 open
//	prewarm_actuator_circuit_opened_total{backend,pool}      breaker trips (alert on increase)
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prewarm_actuator_calls_total",
			Help: "Calls through the actuator safety layer by back-end, operation and outcome.",
		}, []string{"backend", "op", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "prewarm_actuator_call_duration_seconds",
			Help:    "Latency of each back-end attempt, in seconds: retries and the capacity read the safety layer makes before applying each decision count too, so the count exceeds prewarm_actuator_calls_total.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 10), // 10ms .. ~38s
		}, []string{"backend", "op"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prewarm_actuator_retries_total",
			Help: "Retries after throttling, transient errors or timeouts.",
		}, []string{"backend", "op"}),
		desired: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "prewarm_actuator_desired_instances",
			Help: "Desired size of the pool as last applied or read.",
		}, []string{"backend", "pool"}),
		current: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "prewarm_actuator_current_instances",
			Help: "Current size of the pool as last read from the back-end.",
		}, []string{"backend", "pool"}),
		circuitState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "prewarm_actuator_circuit_state",
			Help: "Circuit breaker state per pool: 0 closed, 1 half-open, 2 open.",
		}, []string{"backend", "pool"}),
		circuitOpens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prewarm_actuator_circuit_opened_total",
			Help: "Times the circuit breaker opened after repeated failures; alert on any increase.",
		}, []string{"backend", "pool"}),
	}
	for _, c := range []prometheus.Collector{m.calls, m.latency, m.retries, m.desired, m.current, m.circuitState, m.circuitOpens} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering actuator metrics: %w", err)
		}
	}
	return m, nil
}
