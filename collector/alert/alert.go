package alert

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/prewarm/prewarm/store"
)

// Rule is one threshold and how long it must hold before it fires.
type Rule struct {
	// Threshold is in the rule's unit: percent for the GPU rules (of the
	// GPU, of its memory, of its power limit, of activity for Idle),
	// seconds for LatencyHigh, queued requests for QueueHigh.
	Threshold float64 `yaml:"threshold"`
	// For is how long the condition must hold; zero fires at once.
	For time.Duration `yaml:"for"`
	// Enabled turns the rule on (true in DefaultRules); a file may still
	// write the older disabled: true, read as enabled: false.
	Enabled bool `yaml:"enabled"`
}

// UnmarshalYAML reads a rule's keys over its defaults: threshold, for,
// enabled, or the older disabled (its inverse; not both). An unknown key
// is an error naming the known ones, as the rest of the file's are.
func (r *Rule) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a rule is a mapping of threshold, for and enabled", n.Line)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i]
		switch key.Value {
		case "threshold", "for", "enabled", "disabled":
		default:
			return fmt.Errorf("line %d: field %s not found in a rule (known: threshold, for, enabled)", key.Line, key.Value)
		}
		seen[key.Value] = true
	}
	if seen["enabled"] && seen["disabled"] {
		return fmt.Errorf("line %d: give enabled or the older disabled, not both", n.Line)
	}
	var keys struct {
		Threshold *float64       `yaml:"threshold"`
		For       *time.Duration `yaml:"for"`
		Enabled   *bool          `yaml:"enabled"`
		Disabled  *bool          `yaml:"disabled"`
	}
	if err := n.Decode(&keys); err != nil {
		return err
	}
	if keys.Threshold != nil {
		r.Threshold = *keys.Threshold
	}
	if keys.For != nil {
		r.For = *keys.For
	}
	if keys.Enabled != nil {
		r.Enabled = *keys.Enabled
	}
	if keys.Disabled != nil {
		r.Enabled = !*keys.Disabled
	}
	return nil
}

// Rules configures the Engine. DefaultRules holds the field's defaults.
type Rules struct {
	UtilHigh  Rule `yaml:"util_high"`
	MemHigh   Rule `yaml:"mem_high"`
	PowerHigh Rule `yaml:"power_high"`
	Idle      Rule `yaml:"idle"`
	// LatencyHigh fires when a service's P99 latency (seconds) stays above
	// the threshold.
	LatencyHigh Rule `yaml:"latency_high"`
	// QueueHigh fires when a service's queue length stays above the
	// threshold.
	QueueHigh Rule `yaml:"queue_high"`
	// StaleAfter forgets a GPU's conditions when it has not been seen for
	// this long (a host that stopped reporting is not idle), resolving
	// those that were firing, and
	// resolves a service condition whose signal has been missing this long
	// (no requests means no latency to be high).
	StaleAfter time.Duration `yaml:"stale_after"`
}

// DefaultRules are the thresholds operators use in the field. QueueHigh
// matches the planner's reactive scale-out rule (queue above 50 for 2
// minutes).
func DefaultRules() Rules {
	return Rules{
		UtilHigh:    Rule{Threshold: 85, For: 5 * time.Minute, Enabled: true},
		MemHigh:     Rule{Threshold: 90, Enabled: true},
		PowerHigh:   Rule{Threshold: 95, Enabled: true},
		Idle:        Rule{Threshold: 5, For: 30 * time.Minute, Enabled: true},
		LatencyHigh: Rule{Threshold: 2, For: 5 * time.Minute, Enabled: true},
		QueueHigh:   Rule{Threshold: 50, For: 2 * time.Minute, Enabled: true},
		StaleAfter:  5 * time.Minute,
	}
}

// FieldError is one impossible setting. Field is its path below the
// alerts block, e.g. "latency_high.threshold"; config turns it into a
// file line.
type FieldError struct {
	Field string
	Msg   string
}

// Error names the setting, e.g. "alerts.idle.threshold 150 must be in (0, 100]".
func (e *FieldError) Error() string { return "alerts." + e.Field + " " + e.Msg }

// Problems lists the impossible settings, in a stable order: percent
// thresholds outside (0, 100], latency thresholds not a positive number of
// seconds, queue thresholds negative, negative durations.
func (r Rules) Problems() []FieldError {
	var out []FieldError
	rules := []struct {
		name string
		rule Rule
		ok   func(float64) bool
		want string
	}{
		{RuleUtilHigh, r.UtilHigh, isPercent, "must be in (0, 100]"},
		{RuleMemHigh, r.MemHigh, isPercent, "must be in (0, 100]"},
		{RulePowerHigh, r.PowerHigh, isPercent, "must be in (0, 100]"},
		{RuleIdle, r.Idle, isPercent, "must be in (0, 100]"},
		{RuleLatencyHigh, r.LatencyHigh, func(v float64) bool { return v > 0 && !math.IsInf(v, 0) },
			"must be a positive number of seconds"},
		{RuleQueueHigh, r.QueueHigh, func(v float64) bool { return v >= 0 && !math.IsInf(v, 0) },
			"must be a queue length of 0 or more"},
	}
	for _, x := range rules {
		if !x.rule.Enabled {
			continue
		}
		if !x.ok(x.rule.Threshold) { // NaN fails every check
			out = append(out, FieldError{x.name + ".threshold", fmt.Sprintf("%v %s", x.rule.Threshold, x.want)})
		}
		if x.rule.For < 0 {
			out = append(out, FieldError{x.name + ".for", fmt.Sprintf("%v must not be negative", x.rule.For)})
		}
	}
	if r.StaleAfter < 0 {
		out = append(out, FieldError{"stale_after", fmt.Sprintf("%v must not be negative", r.StaleAfter)})
	}
	return out
}

func isPercent(v float64) bool { return v > 0 && v <= 100 }

// Validate reports the rules' impossible settings (see Problems), joined.
func (r Rules) Validate() error {
	var errs []error
	for _, p := range r.Problems() {
		errs = append(errs, &p)
	}
	return errors.Join(errs...)
}

// Rule names, as in Event.Rule and the config file.
const (
	RuleUtilHigh    = "util_high"
	RuleMemHigh     = "mem_high"
	RulePowerHigh   = "power_high"
	RuleIdle        = "idle"
	RuleLatencyHigh = "latency_high"
	RuleQueueHigh   = "queue_high"
)

// Event kinds.
const (
	KindAlert    = "alert"
	KindResolved = "resolved"
	KindIdle     = "idle"
)

// Event is an alert, its resolution, or an idle GPU. Its JSON form is the
// plain-JSON webhook body, and what the forecaster's POST /api/v1/release
// accepts for kind "idle". GPU events carry Host, GPU and UUID (and the
// host's InstanceID); service events carry Service instead.
type Event struct {
	Kind       string    `json:"kind"`
	Rule       string    `json:"rule"`
	InstanceID string    `json:"instance_id,omitempty"`
	Pool       string    `json:"pool,omitempty"`
	Service    string    `json:"service,omitempty"`
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

// Engine evaluates the rules per GPU and per service. It is not safe for
// concurrent use; the collector calls Observe from one goroutine.
type Engine struct {
	rules    Rules
	opts     Options
	gpus     map[string]*state // by host/uuid
	services map[string]*state // by pool/service
	events   *prometheus.CounterVec
	firing   *prometheus.GaugeVec
}

// subject is what an event is about: one GPU, or one service.
type subject struct {
	pool, host, gpu, uuid, service string
}

func (s subject) labels(rule string) []string {
	return []string{rule, s.pool, s.host, s.gpu, s.uuid, s.service}
}

func (s subject) String() string {
	if s.service != "" {
		if s.pool != "" {
			return fmt.Sprintf("service %s in pool %s", s.service, s.pool)
		}
		return "service " + s.service
	}
	return fmt.Sprintf("GPU %s (%s) on %s", s.gpu, s.uuid, s.host)
}

type condition struct {
	since     time.Time // zero while the condition does not hold
	firing    bool
	lastSeen  time.Time // last cycle with a reading for the rule
	lastValue float64
	threshold float64 // the rule's, for events about a stale condition
}

// state is one subject's conditions, by rule name.
type state struct {
	subject
	lastSeen time.Time
	conds    map[string]*condition
}

func newState(s subject) *state { return &state{subject: s, conds: map[string]*condition{}} }

// NewEngine returns an Engine; rules are validated.
func NewEngine(rules Rules, opts Options) (*Engine, error) {
	if err := rules.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{rules: rules, opts: opts, gpus: map[string]*state{}, services: map[string]*state{},
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "prewarm_collector_events_total",
			Help: "Alert, resolved and idle events sent, by kind and rule."}, []string{"kind", "rule"}),
		firing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "prewarm_collector_alert_firing",
			Help: "1 while a rule holds for a GPU (idle included) or a service."},
			[]string{"rule", "pool", "host", "gpu", "uuid", "service"}),
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

// Evaluate updates the GPUs' and services' state with one cycle's points
// and returns the events it causes, in a stable order: GPUs by host/UUID,
// then services by pool/service. NaN, infinite and negative values are
// ignored, as if the point were absent.
func (e *Engine) Evaluate(at time.Time, points []store.Point) []Event {
	gpus := map[string]*reading{}
	services := map[string]*serviceReading{}
	for _, p := range points {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) || p.Value < 0 {
			continue
		}
		switch p.Measurement {
		case store.ServiceQueueLength, store.ServiceLatencySeconds:
			addServicePoint(services, p)
		default:
			addGPUPoint(gpus, p)
		}
	}
	var events []Event
	for _, key := range slices.Sorted(maps.Keys(gpus)) {
		events = append(events, e.evaluateGPU(at, key, gpus[key])...)
	}
	events = append(events, e.forgetStaleGPUs(at, gpus)...)
	// Services are visited even without points this cycle, so a signal
	// that stopped resolves after StaleAfter.
	keys := slices.Collect(maps.Keys(services))
	for key := range e.services {
		if services[key] == nil {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		events = append(events, e.evaluateService(at, key, services[key])...)
	}
	return events
}

// check advances one rule's condition with this cycle's value and appends
// the event it causes, if any: an alert (or idle) event once the condition
// has held for rule.For, a resolved event when a firing condition stops
// holding.
func (e *Engine) check(events *[]Event, st *state, name string, rule Rule, at time.Time, value float64, holds bool, describe func() string) {
	if !rule.Enabled {
		return
	}
	c := st.conds[name]
	if c == nil {
		c = &condition{}
		st.conds[name] = c
	}
	c.lastSeen, c.lastValue, c.threshold = at, value, rule.Threshold
	if !holds {
		if c.firing {
			*events = append(*events, e.event(KindResolved, name, st.subject, c.since, at, value, rule.Threshold,
				fmt.Sprintf("%s no longer holds: %s: %s", name, describe(), st.subject)))
			e.firing.DeleteLabelValues(st.labels(name)...)
		}
		c.since, c.firing = time.Time{}, false
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
		*events = append(*events, e.event(kind, name, st.subject, c.since, at, value, rule.Threshold,
			fmt.Sprintf("%s for %s: %s", describe(), at.Sub(c.since).Round(time.Second), st.subject)))
		e.firing.WithLabelValues(st.labels(name)...).Set(1)
	}
}

func (e *Engine) event(kind, rule string, s subject, since, at time.Time, value, threshold float64, reason string) Event {
	var id string
	if s.service == "" { // a service is not one instance
		var ok bool
		if id, ok = e.opts.Instances[s.host]; !ok {
			id = e.opts.InstanceID
		}
	}
	e.events.WithLabelValues(kind, rule).Inc()
	return Event{Kind: kind, Rule: rule, InstanceID: id, Pool: s.pool, Service: s.service, Host: s.host, GPU: s.gpu,
		UUID: s.uuid, Since: since.UTC(), At: at.UTC(), Value: value, Threshold: threshold, Reason: strings.TrimSpace(reason)}
}

// forgetStaleGPUs drops the GPUs not seen for StaleAfter (a host that
// stopped reporting, a GPU removed), with a resolved event for each rule
// that was firing, so that neither its alerts nor its firing gauges stay up
// forever.
func (e *Engine) forgetStaleGPUs(at time.Time, seen map[string]*reading) []Event {
	if e.rules.StaleAfter <= 0 {
		return nil
	}
	var events []Event
	for _, key := range slices.Sorted(maps.Keys(e.gpus)) {
		st := e.gpus[key]
		if seen[key] != nil || at.Sub(st.lastSeen) <= e.rules.StaleAfter {
			continue
		}
		gap := at.Sub(st.lastSeen).Round(time.Second)
		for _, name := range slices.Sorted(maps.Keys(st.conds)) {
			if c := st.conds[name]; c.firing {
				events = append(events, e.event(KindResolved, name, st.subject, c.since, at, c.lastValue, c.threshold,
					fmt.Sprintf("%s no longer known: GPU not reported for %s: %s", name, gap, st.subject)))
			}
		}
		e.clearFiring(st)
		delete(e.gpus, key)
	}
	return events
}

// clearFiring drops the firing gauges of every rule of st.
func (e *Engine) clearFiring(st *state) {
	for name := range st.conds {
		e.firing.DeleteLabelValues(st.labels(name)...)
	}
}
