package alert

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/store"
)

// Rule is one threshold and how long it must hold before it fires.
type Rule struct {
	// Threshold is in percent (of the GPU, of its memory, of its power
	// limit, or of activity for Idle).
	Threshold float64 `yaml:"threshold"`
	// For is how long the condition must hold; zero fires at once.
	For time.Duration `yaml:"for"`
	// Disabled turns the rule off.
	Disabled bool `yaml:"disabled"`
}

// Rules configures the Engine. DefaultRules holds the field's defaults.
type Rules struct {
	UtilHigh  Rule `yaml:"util_high"`
	MemHigh   Rule `yaml:"mem_high"`
	PowerHigh Rule `yaml:"power_high"`
	Idle      Rule `yaml:"idle"`
	// StaleAfter forgets a GPU's pending conditions when it has not been
	// seen for this long (a host that stopped reporting is not idle).
	StaleAfter time.Duration `yaml:"stale_after"`
}

// DefaultRules are the thresholds operators use in the field.
func DefaultRules() Rules {
	return Rules{
		UtilHigh:   Rule{Threshold: 85, For: 5 * time.Minute},
		MemHigh:    Rule{Threshold: 90},
		PowerHigh:  Rule{Threshold: 95},
		Idle:       Rule{Threshold: 5, For: 30 * time.Minute},
		StaleAfter: 5 * time.Minute,
	}
}

// Validate reports a rule with an impossible threshold.
func (r Rules) Validate() error {
	for name, rule := range map[string]Rule{RuleUtilHigh: r.UtilHigh, RuleMemHigh: r.MemHigh, RulePowerHigh: r.PowerHigh, RuleIdle: r.Idle} {
		if rule.Disabled {
			continue
		}
		if !(rule.Threshold > 0 && rule.Threshold <= 100) {
			return fmt.Errorf("alerts.%s.threshold %v must be in (0, 100]", name, rule.Threshold)
		}
		if rule.For < 0 {
			return fmt.Errorf("alerts.%s.for %v must not be negative", name, rule.For)
		}
	}
	if r.StaleAfter < 0 {
		return fmt.Errorf("alerts.stale_after %v must not be negative", r.StaleAfter)
	}
	return nil
}

// Rule names, as in Event.Rule and the config file.
const (
	RuleUtilHigh  = "util_high"
	RuleMemHigh   = "mem_high"
	RulePowerHigh = "power_high"
	RuleIdle      = "idle"
)

// Event kinds.
const (
	KindAlert    = "alert"
	KindResolved = "resolved"
	KindIdle     = "idle"
)

// Event is an alert, its resolution, or an idle GPU. Its JSON form is the
// plain-JSON webhook body, and what the forecaster's POST /api/v1/release
// accepts for kind "idle".
type Event struct {
	Kind       string    `json:"kind"`
	Rule       string    `json:"rule"`
	InstanceID string    `json:"instance_id,omitempty"`
	Pool       string    `json:"pool,omitempty"`
	Host       string    `json:"host,omitempty"`
	GPU        string    `json:"gpu,omitempty"`
	UUID       string    `json:"uuid,omitempty"`
	Since      time.Time `json:"since"`
	At         time.Time `json:"at"`
	Value      float64   `json:"value"`
	Threshold  float64   `json:"threshold"`
	Reason     string    `json:"reason"`
}

// Sink receives events; notify.Dispatcher is one. Send must not block.
type Sink interface {
	Send(Event)
}

// Options are the Engine's non-rule settings.
type Options struct {
	// Instances maps a host to its cloud instance ID for Event.InstanceID.
	Instances map[string]string
	// InstanceID is used for hosts missing from Instances (the collector's
	// own host, typically).
	InstanceID string
	// Sinks receive every event Observe produces.
	Sinks []Sink
	// Registerer, if set, gets the event metrics.
	Registerer prometheus.Registerer
}

// Engine evaluates the rules per GPU. It is not safe for concurrent use; the
// collector calls Observe from one goroutine.
type Engine struct {
	rules  Rules
	opts   Options
	gpus   map[string]*gpuState
	events *prometheus.CounterVec
	firing *prometheus.GaugeVec
}

type condition struct {
	since  time.Time // zero while the condition does not hold
	firing bool
}

type gpuState struct {
	lastSeen time.Time
	conds    map[string]*condition
}

// NewEngine returns an Engine; rules are validated.
func NewEngine(rules Rules, opts Options) (*Engine, error) {
	if err := rules.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{rules: rules, opts: opts, gpus: map[string]*gpuState{},
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "prewarm_collector_events_total",
			Help: "Alert, resolved and idle events sent, by kind and rule."}, []string{"kind", "rule"}),
		firing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "prewarm_collector_alert_firing",
			Help: "1 while a rule holds for a GPU (idle included)."}, []string{"rule", "pool", "host", "gpu", "uuid"}),
	}
	if opts.Registerer != nil {
		for _, c := range []prometheus.Collector{e.events, e.firing} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

// Observe evaluates a cycle and sends its events to the sinks; it
// implements collector.Observer.
func (e *Engine) Observe(at time.Time, points []store.Point) {
	for _, ev := range e.Evaluate(at, points) {
		for _, s := range e.opts.Sinks {
			s.Send(ev)
		}
	}
}

// reading is one GPU's values in one cycle; the has* flags say which the
// sources reported.
type reading struct {
	pool, host, gpu, uuid                        string
	util, sm, engine, memUsed, memFree, memTotal float64
	power, powerLimit                            float64
	hasUtil, hasSM, hasEngine, hasMem, hasPower  bool
	hasMemFree, hasMemTotal, hasPowerLimit       bool
}

// Evaluate updates the GPUs' state with one cycle's points and returns the
// events it causes, in a stable order.
func (e *Engine) Evaluate(at time.Time, points []store.Point) []Event {
	readings := map[string]*reading{}
	for _, p := range points {
		host, gpu, uuid := p.Tags[collector.TagHost], p.Tags[collector.TagGPU], p.Tags[collector.TagUUID]
		if gpu == "" && uuid == "" || p.Tags[collector.TagPID] != "" {
			continue
		}
		id := uuid
		if id == "" {
			id = gpu
		}
		key := host + "/" + id
		r := readings[key]
		if r == nil {
			r = &reading{pool: p.Tags[collector.TagPool], host: host, gpu: gpu, uuid: uuid}
			readings[key] = r
		}
		switch p.Measurement {
		case collector.GPUUtil:
			r.util, r.hasUtil = max(r.util, p.Value), true
		case collector.GPUSMActive:
			r.sm, r.hasSM = max(r.sm, p.Value), true
		case collector.GPUEngineActive:
			r.engine, r.hasEngine = max(r.engine, p.Value), true
		case collector.GPUMemUsedBytes:
			r.memUsed, r.hasMem = p.Value, true
		case collector.GPUMemFreeBytes:
			r.memFree, r.hasMemFree = p.Value, true
		case collector.GPUMemTotalBytes:
			r.memTotal, r.hasMemTotal = p.Value, true
		case collector.GPUPowerWatts:
			r.power, r.hasPower = p.Value, true
		case collector.GPUPowerLimitWatts:
			r.powerLimit, r.hasPowerLimit = p.Value, true
		}
	}
	var events []Event
	for _, key := range slices.Sorted(maps.Keys(readings)) {
		events = append(events, e.evaluateGPU(at, key, readings[key])...)
	}
	return events
}

func (e *Engine) evaluateGPU(at time.Time, key string, r *reading) []Event {
	st := e.gpus[key]
	if st == nil || (e.rules.StaleAfter > 0 && at.Sub(st.lastSeen) > e.rules.StaleAfter) {
		if st != nil {
			e.clearFiring(r)
		}
		st = &gpuState{conds: map[string]*condition{}}
		e.gpus[key] = st
	}
	st.lastSeen = at
	var events []Event
	check := func(name string, rule Rule, value float64, holds bool, describe func() string) {
		if rule.Disabled {
			return
		}
		c := st.conds[name]
		if c == nil {
			c = &condition{}
			st.conds[name] = c
		}
		if !holds {
			if c.firing {
				events = append(events, e.event(KindResolved, name, r, c.since, at, value, rule.Threshold,
					fmt.Sprintf("%s no longer holds: %s", name, describe())))
				e.firing.DeleteLabelValues(name, r.pool, r.host, r.gpu, r.uuid)
			}
			*c = condition{}
			return
		}
		if c.since.IsZero() {
			c.since = at
		}
		if !c.firing && at.Sub(c.since) >= rule.For {
			c.firing = true
			kind := KindAlert
			if name == RuleIdle {
				kind = KindIdle
			}
			events = append(events, e.event(kind, name, r, c.since, at, value, rule.Threshold,
				fmt.Sprintf("%s for %s: %s", describe(), at.Sub(c.since).Round(time.Second), gpuName(r))))
			e.firing.WithLabelValues(name, r.pool, r.host, r.gpu, r.uuid).Set(1)
		}
	}

	if r.hasUtil {
		check(RuleUtilHigh, e.rules.UtilHigh, r.util, r.util > e.rules.UtilHigh.Threshold, func() string {
			return fmt.Sprintf("utilisation %.0f%% (threshold %.0f%%)", r.util, e.rules.UtilHigh.Threshold)
		})
	}
	if total := r.memTotal; r.hasMem && (r.hasMemTotal || r.hasMemFree) {
		if !r.hasMemTotal {
			total = r.memUsed + r.memFree
		}
		if total > 0 {
			pct := 100 * r.memUsed / total
			check(RuleMemHigh, e.rules.MemHigh, pct, pct > e.rules.MemHigh.Threshold, func() string {
				return fmt.Sprintf("memory %.1f%% used (threshold %.0f%%)", pct, e.rules.MemHigh.Threshold)
			})
		}
	}
	if r.hasPower && r.hasPowerLimit && r.powerLimit > 0 {
		pct := 100 * r.power / r.powerLimit
		check(RulePowerHigh, e.rules.PowerHigh, pct, pct > e.rules.PowerHigh.Threshold, func() string {
			return fmt.Sprintf("power %.0f W = %.1f%% of the %.0f W limit (threshold %.0f%%)", r.power, pct, r.powerLimit, e.rules.PowerHigh.Threshold)
		})
	}
	if activity, ok := r.activity(); ok {
		check(RuleIdle, e.rules.Idle, activity, activity < e.rules.Idle.Threshold, func() string {
			return fmt.Sprintf("compute activity %.1f%% < %.0f%% (%s)", activity, e.rules.Idle.Threshold, r.activityDetail())
		})
	}
	return events
}

// activity is the busiest of the compute signals, in percent.
func (r *reading) activity() (float64, bool) {
	a, ok := 0.0, false
	if r.hasUtil {
		a, ok = max(a, r.util), true
	}
	if r.hasSM {
		a, ok = max(a, 100*r.sm), true
	}
	if r.hasEngine {
		a, ok = max(a, 100*r.engine), true
	}
	return a, ok
}

func (r *reading) activityDetail() string {
	s := ""
	if r.hasUtil {
		s += fmt.Sprintf("util %.0f%%", r.util)
	}
	if r.hasSM {
		s += fmt.Sprintf(" SM %.1f%%", 100*r.sm)
	}
	if r.hasEngine {
		s += fmt.Sprintf(" engine %.1f%%", 100*r.engine)
	}
	return s
}

func gpuName(r *reading) string {
	return fmt.Sprintf("GPU %s (%s) on %s", r.gpu, r.uuid, r.host)
}

func (e *Engine) event(kind, rule string, r *reading, since, at time.Time, value, threshold float64, reason string) Event {
	id, ok := e.opts.Instances[r.host]
	if !ok {
		id = e.opts.InstanceID
	}
	e.events.WithLabelValues(kind, rule).Inc()
	return Event{Kind: kind, Rule: rule, InstanceID: id, Pool: r.pool, Host: r.host, GPU: r.gpu, UUID: r.uuid,
		Since: since.UTC(), At: at.UTC(), Value: value, Threshold: threshold, Reason: reason}
}

func (e *Engine) clearFiring(r *reading) {
	for _, name := range []string{RuleUtilHigh, RuleMemHigh, RulePowerHigh, RuleIdle} {
		e.firing.DeleteLabelValues(name, r.pool, r.host, r.gpu, r.uuid)
	}
}
