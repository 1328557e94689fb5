package alert

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prewarm/prewarm/store"
)

// LatencyQuantile is the quantile tag of the service_latency_seconds series
// LatencyHigh watches (P99, collector/service's default). A service scraped
// with another quantile gets no latency alerts.
const LatencyQuantile = 0.99

// serviceReading is one service's values in one cycle.
type serviceReading struct {
	subject
	queue, latency       float64
	hasQueue, hasLatency bool
}

// addServicePoint files a service point under its pool and service name.
// Latency points of quantiles other than LatencyQuantile are skipped.
func addServicePoint(readings map[string]*serviceReading, p store.Point) {
	name := p.Tags[store.TagService]
	if name == "" {
		return
	}
	if p.Measurement == store.ServiceLatencySeconds {
		q, err := strconv.ParseFloat(p.Tags[store.TagQuantile], 64)
		if err != nil || q != LatencyQuantile {
			return
		}
	}
	pool := p.Tags[store.TagPool]
	key := pool + "/" + name
	r := readings[key]
	if r == nil {
		r = &serviceReading{subject: subject{pool: pool, service: name}}
		readings[key] = r
	}
	switch p.Measurement {
	case store.ServiceQueueLength:
		r.queue, r.hasQueue = max(r.queue, p.Value), true
	case store.ServiceLatencySeconds:
		r.latency, r.hasLatency = max(r.latency, p.Value), true
	}
}

// serviceSignals names what each service rule reads, for messages.
var serviceSignals = map[string]string{RuleLatencyHigh: "P99 latency", RuleQueueHigh: "queue length"}

// evaluateService checks one service's rules; r is nil when the service
// reported nothing this cycle. A rule whose signal has been missing for
// StaleAfter is forgotten, with a resolved event if it was firing: a
// service with no requests has no latency to be high, and a target that
// stopped answering has no queue we know of.
func (e *Engine) evaluateService(at time.Time, key string, r *serviceReading) []Event {
	st := e.services[key]
	if st == nil {
		if r == nil {
			return nil
		}
		st = newState(r.subject)
		e.services[key] = st
	}
	var events []Event
	if r != nil {
		st.lastSeen = at
		if r.hasLatency {
			rule := e.rules.LatencyHigh
			e.check(&events, st, RuleLatencyHigh, rule, at, r.latency, r.latency > rule.Threshold, func() string {
				return fmt.Sprintf("P99 latency %.3g s (threshold %g s)", r.latency, rule.Threshold)
			})
		}
		if r.hasQueue {
			rule := e.rules.QueueHigh
			e.check(&events, st, RuleQueueHigh, rule, at, r.queue, r.queue > rule.Threshold, func() string {
				return fmt.Sprintf("queue length %g (threshold %g)", r.queue, rule.Threshold)
			})
		}
	}
	if e.rules.StaleAfter <= 0 {
		return events
	}
	for _, name := range []string{RuleLatencyHigh, RuleQueueHigh} {
		c := st.conds[name]
		if c == nil || at.Sub(c.lastSeen) <= e.rules.StaleAfter {
			continue
		}
		if c.firing {
			gap := at.Sub(c.lastSeen).Round(time.Second)
			events = append(events, e.event(KindResolved, name, st.subject, c.since, at, c.lastValue,
				c.threshold, fmt.Sprintf("%s no longer known: no %s reported for %s: %s", name, serviceSignals[name], gap, st.subject)))
			e.firing.DeleteLabelValues(st.labels(name)...)
		}
		delete(st.conds, name)
	}
	if len(st.conds) == 0 && at.Sub(st.lastSeen) > e.rules.StaleAfter {
		delete(e.services, key)
	}
	return events
}
