package service

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// The alert rules of deploy/prometheus/rules.yml that concern one pool,
// evaluated by the service on its own state for the status page and the
// API: each condition as the rule's expression has it, firing once it has
// held for the rule's `for`. Prometheus stays the place that notifies; this
// only shows an operator who opens the page what it would say.
const (
	AlertDecisionsFailing    = "PrewarmDecisionsFailing"
	AlertForecastSteppedBack = "PrewarmForecastSteppedBack"
	AlertCapacityShort       = "PrewarmCapacityShort"
)

// The rules' `for` durations.
const (
	decisionsFailingFor = 10 * time.Minute
	steppedBackFor      = 2 * time.Hour
	capacityShortFor    = time.Minute
)

// alerts returns the pool's alert conditions at now. s.mu held.
func (p *pool) alerts(now time.Time) []Alert {
	st := &p.status
	out := []Alert{}
	add := func(name, severity string, since time.Time, hold time.Duration, summary string) {
		out = append(out, Alert{Name: name, Severity: severity, Since: since, Firing: !now.Before(since.Add(hold)), Summary: summary})
	}
	if st.Error != "" && !st.FailingSince.IsZero() {
		add(AlertDecisionsFailing, "warning", st.FailingSince, decisionsFailingFor,
			"decisions fail: capacity is held where it is ("+shorten(st.Error, 120)+")")
	}
	if st.Gate != "" && st.Gate != planner.GateModel && !st.GateSince.IsZero() {
		add(AlertForecastSteppedBack, "info", st.GateSince, steppedBackFor,
			fmt.Sprintf("capacity follows the %s level, not the forecast model", st.Gate))
	}
	boot := p.plan.Fleet.BootDelay
	if st.CapacityShortSeconds > boot.Seconds() {
		// The rule's expression holds once the shortfall outlasts boot_delay.
		add(AlertCapacityShort, "critical", st.CapacityShortSince.Add(boot), capacityShortFor,
			fmt.Sprintf("%d desired, %d ready for %v, longer than boot_delay %v", st.Desired, st.Ready,
				(time.Duration(st.CapacityShortSeconds)*time.Second).Round(time.Second), boot))
	}
	return out
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
