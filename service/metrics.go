package service

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/tune"
)

// Metrics are the service's Prometheus metrics, named as docs/metrics.md's
// contract says. A nil *Metrics records nothing, so tests need not build
// one.
type Metrics struct {
	modeVec, wished, desired, planned, current, ready, booting, demand, forecastRPS     *prometheus.GaugeVec
	gateLevel, maseVec, bootDelaySec, warmStartSec, capacityShort, policy, burn, saving *prometheus.GaugeVec
	decisions, failures, gpuHours, cost, staticCost                                     *prometheus.CounterVec
	refitSeconds                                                                        *prometheus.HistogramVec
	tickSeconds                                                                         prometheus.Histogram
	lastTick                                                                            prometheus.Gauge
	ownedBuckets                                                                        *prometheus.GaugeVec
	leaderChanges                                                                       *prometheus.CounterVec
}

// NewMetrics registers the service's metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "prewarm", Name: name, Help: help}, append([]string{"pool"}, labels...))
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "prewarm", Name: name, Help: help}, append([]string{"pool"}, labels...))
	}
	m := &Metrics{
		modeVec:      gauge("pool_mode", "1 for the pool's mode in force (forecast-only, active, paused).", "mode"),
		wished:       gauge("pool_wished_instances", "Instances the policy wants now, before the actuator's limits."),
		desired:      gauge("pool_desired_instances", "Instances applied (or, forecast-only, that would be) after min, max, max_step and min_interval."),
		planned:      gauge("pool_planned_instances", "The trusted forecast plan's step now (NaN when reactive only)."),
		current:      gauge("pool_current_instances", "Instances the back-end reports (booting or ready)."),
		ready:        gauge("pool_ready_instances", "Instances serving (all of current when the back-end cannot tell; NaN when it reports no size)."),
		booting:      gauge("pool_booting_instances", "Instances asked for, not yet serving (NaN when the back-end reports no size)."),
		demand:       gauge("pool_demand_rps", "Pool demand over the last tick, requests/s (NaN when it could not be read)."),
		forecastRPS:  gauge("pool_forecast_rps", "Demand forecast for the step in progress, requests/s.", "bound"),
		gateLevel:    gauge("pool_forecast_gate", "1 for the gate level in force (model, profile, reactive).", "level"),
		maseVec:      gauge("pool_forecast_mase", "The model's mean absolute error over the last day divided by seasonal naive's (below 1: it beats it; NaN until scored)."),
		bootDelaySec: gauge("pool_boot_delay_seconds", "The lead time the pool plans with: its boot_delay, or its measured start times once learn_boot_delay put them in force."),
		warmStartSec: gauge("pool_warm_start_seconds", "The warm start the pool plans with (its lead with a warm tier): its warm_start, or its measured warm starts once learn_boot_delay put them in force; 0 without a warm tier."),
		capacityShort: gauge("pool_capacity_short_seconds",
			"How long desired instances have exceeded ready ones without a break, at the last decision (0 when they do not)."),
		policy: gauge("pool_policy", "1 for the kind of candidate policy the tuner follows (hybrid, forecast-only, hybrid-additive, forecast-only-additive, reactive, reactive-surge, flat, schedule).", "candidate"),
		burn:   gauge("pool_slo_burn_rate", "The live estimate of the miss budget's burn over the tuner's guard window (1: as fast as the SLO allows)."),
		saving: gauge("pool_saving_ratio", "1 − the replayed cost of the candidate the tuner follows ÷ the baseline's, the cheaper of a reactive and a flat fleet "+
			"that met the SLO, both replayed on the pool's demand over tune.window (absent until such a baseline exists; a forecast-only pool applies nothing, so it would save this)."),
		decisions:  counter("pool_decisions_total", "Decisions by outcome: applied, unchanged, limited, rate_limited, not_applied, failed.", "outcome"),
		failures:   counter("pool_decision_failures_total", "Ticks whose decision or its application failed."),
		gpuHours:   counter("pool_gpu_hours_total", "Instance-hours billed (booting included), from the capacity read each tick."),
		cost:       counter("pool_cost_total", "pool_gpu_hours_total at the pool's prices by tier: the reserved base billed whether it runs or not, the rest on demand and on spot, and the warm tier's stopped instances."),
		staticCost: counter("pool_static_cost_total", "The same time billed for a static fleet at the pool's max: a reference, not the savings baseline (pool_saving_ratio)."),
		refitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "prewarm", Name: "refit_duration_seconds",
			Help: "Time one forecast refit took.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)}, []string{"pool"}),
		tickSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "prewarm", Name: "tick_duration_seconds",
			Help: "Time one whole tick over every pool took.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 8)}),
		lastTick: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "prewarm", Name: "last_successful_tick_timestamp_seconds",
			Help: "Unix time of the last tick in which every pool decided."}),
		ownedBuckets: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "prewarm", Name: "election_owned_buckets",
			Help: "Buckets of pools this replica owns and applies decisions for (election on only)."}, []string{"identity"}),
		leaderChanges: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "prewarm", Name: "election_leader_changes_total",
			Help: "Buckets this replica gained or lost (change: gained, lost), election on only."}, []string{"identity", "change"}),
	}
	for _, c := range []prometheus.Collector{m.modeVec, m.wished, m.desired, m.planned, m.current, m.ready, m.booting, m.demand, m.forecastRPS,
		m.gateLevel, m.maseVec, m.bootDelaySec, m.warmStartSec, m.capacityShort, m.policy, m.burn, m.saving, m.decisions, m.failures, m.gpuHours, m.cost, m.staticCost, m.refitSeconds, m.tickSeconds, m.lastTick,
		m.ownedBuckets, m.leaderChanges} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) decision(pool string, wished, desired, current int, demandRPS, planned float64, outcome string) {
	if m == nil {
		return
	}
	m.wished.WithLabelValues(pool).Set(float64(wished))
	m.desired.WithLabelValues(pool).Set(float64(desired))
	m.current.WithLabelValues(pool).Set(float64(current))
	m.demand.WithLabelValues(pool).Set(demandRPS)
	m.planned.WithLabelValues(pool).Set(planned)
	m.decisions.WithLabelValues(pool, outcome).Inc()
}

// capacity publishes the ready and booting instances (NaN when the
// back-end reports no size) and the shortfall's duration.
func (m *Metrics) capacity(pool string, ready, booting int, known bool, shortSeconds float64) {
	if m == nil {
		return
	}
	r, b := float64(ready), float64(booting)
	if !known {
		r, b = math.NaN(), math.NaN()
	}
	m.ready.WithLabelValues(pool).Set(r)
	m.booting.WithLabelValues(pool).Set(b)
	m.capacityShort.WithLabelValues(pool).Set(shortSeconds)
}

// forecast publishes the forecast for the step in progress (NaN bounds
// when there is none).
func (m *Metrics) forecast(pool string, f ForecastBounds) {
	if m == nil {
		return
	}
	m.forecastRPS.WithLabelValues(pool, "mean").Set(float64(f.Mean))
	m.forecastRPS.WithLabelValues(pool, "lower").Set(float64(f.Lower))
	m.forecastRPS.WithLabelValues(pool, "upper").Set(float64(f.Upper))
}

// mase publishes the model's MASE over the last day.
func (m *Metrics) mase(pool string, v float64) {
	if m != nil {
		m.maseVec.WithLabelValues(pool).Set(v)
	}
}

func (m *Metrics) gate(pool, level string) {
	if m == nil || level == "" {
		return
	}
	for _, l := range []string{planner.GateModel, planner.GateProfile, planner.GateReactive} {
		v := 0.0
		if l == level {
			v = 1
		}
		m.gateLevel.WithLabelValues(pool, l).Set(v)
	}
}

// tuning records the candidate in force (by kind: a flat size is
// "flat", a reactive setting "reactive") and the burn rate.
func (m *Metrics) tuning(pool string, ch tune.Choice) {
	if m == nil || ch.Candidate == "" {
		return
	}
	m.policy.DeletePartialMatch(prometheus.Labels{"pool": pool})
	m.policy.WithLabelValues(pool, tune.Kind(ch.Candidate)).Set(1)
	m.burn.WithLabelValues(pool).Set(ch.Burn)
	if ch.Saving.Baseline == "" {
		m.saving.DeleteLabelValues(pool)
	} else {
		m.saving.WithLabelValues(pool).Set(ch.Saving.Share)
	}
}

func (m *Metrics) mode(pool string, mode poolspec.Mode) {
	if m == nil {
		return
	}
	for _, md := range poolspec.Modes() {
		v := 0.0
		if md == mode {
			v = 1
		}
		m.modeVec.WithLabelValues(pool, string(md)).Set(v)
	}
}

// startTimes publishes the start times the pool plans with: its boot
// delay and its warm start (0 without a warm tier), each configured or
// measured (learn_boot_delay).
func (m *Metrics) startTimes(pool string, f planner.Fleet) {
	if m != nil {
		m.bootDelaySec.WithLabelValues(pool).Set(f.BootDelay.Seconds())
		m.warmStartSec.WithLabelValues(pool).Set(f.WarmStart.Seconds())
	}
}

// bill adds an interval's GPU-hours, their cost at the pool's prices by
// tier, and a static fleet's cost at max for reference.
func (m *Metrics) bill(pool string, hours, cost, staticCost float64) {
	if m == nil {
		return
	}
	// Add(0) creates the series, so they exist from the first decision.
	m.gpuHours.WithLabelValues(pool).Add(hours)
	m.cost.WithLabelValues(pool).Add(cost)
	m.staticCost.WithLabelValues(pool).Add(staticCost)
}

func (m *Metrics) refit(pool string, took time.Duration) {
	if m != nil {
		m.refitSeconds.WithLabelValues(pool).Observe(took.Seconds())
	}
}

// failure counts a failed tick; undecided adds the decision's outcome
// "failed" (a decision that got to apply was counted by its outcome).
func (m *Metrics) failure(pool string, undecided bool) {
	if m == nil {
		return
	}
	m.failures.WithLabelValues(pool).Inc()
	if undecided {
		m.decisions.WithLabelValues(pool, OutcomeFailed).Inc()
	}
}

func (m *Metrics) tick(took time.Duration) {
	if m != nil {
		m.tickSeconds.Observe(took.Seconds())
	}
}

func (m *Metrics) tickSucceeded(at time.Time) {
	if m != nil {
		m.lastTick.Set(float64(at.UnixNano()) / 1e9)
	}
}

// forget drops a removed pool's series.
func (m *Metrics) forget(pool string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{"pool": pool}
	for _, v := range []*prometheus.GaugeVec{m.modeVec, m.wished, m.desired, m.planned, m.current, m.ready, m.booting, m.demand,
		m.forecastRPS, m.gateLevel, m.maseVec, m.bootDelaySec, m.warmStartSec, m.capacityShort, m.policy, m.burn, m.saving} {
		v.DeletePartialMatch(l)
	}
	for _, v := range []*prometheus.CounterVec{m.decisions, m.failures, m.gpuHours, m.cost, m.staticCost} {
		v.DeletePartialMatch(l)
	}
	m.refitSeconds.DeletePartialMatch(l)
}

// election publishes the buckets this replica owns and counts those it
// gained and lost.
func (m *Metrics) election(identity string, owned, gained, lost int) {
	if m == nil {
		return
	}
	m.ownedBuckets.WithLabelValues(identity).Set(float64(owned))
	m.leaderChanges.WithLabelValues(identity, "gained").Add(float64(gained))
	m.leaderChanges.WithLabelValues(identity, "lost").Add(float64(lost))
}
