package service

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// Metrics are the service's Prometheus metrics. A nil *Metrics records
// nothing, so tests need not build one.
type Metrics struct {
	desired, current, demand, forecastUpper *prometheus.GaugeVec
	gate                                    *prometheus.GaugeVec
	refitSeconds                            *prometheus.HistogramVec
	failures                                *prometheus.CounterVec
}

// NewMetrics registers the service's metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "prewarm", Name: name, Help: help}, labels)
	}
	m := &Metrics{
		desired:       gauge("pool_desired_instances", "Instances the policy wants for the pool now.", "pool"),
		current:       gauge("pool_current_instances", "Instances the back-end reports (booting or ready).", "pool"),
		demand:        gauge("pool_demand_rps", "Pool demand over the last tick, requests/s.", "pool"),
		forecastUpper: gauge("pool_forecast_upper_rps", "Upper bound of the demand forecast for the step in progress at the last refit, requests/s.", "pool"),
		gate:          gauge("pool_forecast_gate", "1 for the gate level in force (model, profile, reactive).", "pool", "level"),
		refitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "prewarm", Name: "refit_duration_seconds",
			Help: "Time one forecast refit took.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)}, []string{"pool"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "prewarm", Name: "pool_decision_failures_total",
			Help: "Ticks whose decision or its application failed."}, []string{"pool"}),
	}
	for _, c := range []prometheus.Collector{m.desired, m.current, m.demand, m.forecastUpper, m.gate, m.refitSeconds, m.failures} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) decision(pool string, desired, current int, demandRPS float64) {
	if m == nil {
		return
	}
	m.desired.WithLabelValues(pool).Set(float64(desired))
	m.current.WithLabelValues(pool).Set(float64(current))
	m.demand.WithLabelValues(pool).Set(demandRPS)
}

func (m *Metrics) refit(pool string, took time.Duration, r control.Refit) {
	if m == nil {
		return
	}
	m.refitSeconds.WithLabelValues(pool).Observe(took.Seconds())
	if up := r.Forecast.Forecast.Upper; len(up) > 0 {
		m.forecastUpper.WithLabelValues(pool).Set(up[0])
	}
	for _, level := range []string{planner.GateModel, planner.GateProfile, planner.GateReactive} {
		v := 0.0
		if level == r.Gate.Level {
			v = 1
		}
		m.gate.WithLabelValues(pool, level).Set(v)
	}
}

func (m *Metrics) failure(pool string) {
	if m == nil {
		return
	}
	m.failures.WithLabelValues(pool).Inc()
}
