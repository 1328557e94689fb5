package service

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// StartTimes is what a pool's decisions measured of its fleet's start
// times of one kind (control.StartTimes: from the size asked to an
// instance serving), beside the time the plan uses for them: cold boots
// against boot_delay, and, in Warm, warm starts of the warm tier's
// stopped instances against warm_start. With learn_boot_delay (the
// default) a measurement replaces its setting in the plan once enough
// starts disagree with it; Verdict says which is in force, and why.
type StartTimes struct {
	control.StartEstimate
	// Configured is the pool's boot_delay (warm_start in Warm).
	Configured time.Duration `json:"configured"`
	// LeadTime is what the plans use now: Configured, or the measured
	// starts' 90th percentile once they replaced it. Without a warm tier
	// the cold one is how far ahead the plans ask; with one, the warm
	// one is (planner.Fleet.Lead).
	LeadTime time.Duration `json:"lead_time"`
	// Enough is true once enough starts were seen to judge Configured.
	Enough bool `json:"enough"`
	// Verdict compares them, in words.
	Verdict string `json:"verdict"`
	// Warm is the same of the warm starts, for a pool with a warm tier
	// (nil without one).
	Warm *StartTimes `json:"warm,omitempty"`
}

// startsOff is how far the measured starts may be from boot_delay before
// the verdict says so: a P90 more than half as long again (the plan asks
// too late: requests wait), or a median under half of it (it asks
// earlier than it needs to: idle instances are paid for).
const startsOff = 1.5

// observeStarts feeds the pool's start-time learner with a decision: what
// the fleet showed before it and the size it is asked to reach now (what
// was applied, else what it was asked before). Back-ends that cannot
// tell booting from ready instances teach it nothing. With a warm tier
// whose stopped instances the back-end counts, the starts of an increase
// are split into warm starts and cold boots; otherwise all are cold.
func (p *pool) observeStarts(d decision) {
	if !d.known || !d.capa.ReadyKnown {
		return
	}
	p.startsSplit = p.plan.Fleet.WarmTier() && d.capa.StoppedKnown
	read := control.FleetRead{Asked: d.capa.Desired, Ready: d.capa.Ready}
	if p.startsSplit {
		read.Stopped, read.StoppedKnown = d.capa.Stopped, true
	}
	asked := d.capa.Desired
	if d.outcome == OutcomeApplied || d.outcome == OutcomeLimited {
		asked = d.res.To
	}
	p.starts.Observe(d.now, read, asked)
}

// startTimes is the pool's measured start times for its status: nil
// before any start was measured.
func (p *pool) startTimes() *StartTimes {
	cold, warm := p.startsOf(control.ColdBoot), p.startsOf(control.WarmStart)
	if cold.Starts == 0 && (warm == nil || warm.Starts == 0) {
		return nil
	}
	cold.Warm = warm
	return cold
}

// startsOf is the pool's measured start times of kind against the
// setting and the time in force for it; nil for warm starts without a
// warm tier.
func (p *pool) startsOf(kind control.StartKind) *StartTimes {
	configured, lead := p.spec.Fleet.BootDelay, p.plan.Fleet.BootDelay
	if kind == control.WarmStart {
		if !p.spec.Fleet.WarmTier() {
			return nil
		}
		configured, lead = p.spec.Fleet.WarmStart, p.plan.Fleet.WarmStart
	}
	est, enough := p.starts.Estimate(kind)
	st := &StartTimes{StartEstimate: est, Configured: configured, LeadTime: lead, Enough: enough,
		Verdict: startsVerdict(est, enough, configured, kind)}
	switch {
	case lead != configured:
		st.Verdict = learnedVerdict(est, configured, lead, kind)
	case p.spec.Fleet.WarmTier() && !p.startsSplit:
		st.Verdict += fmt.Sprintf("; the back-end does not count its stopped instances, so warm starts and cold boots are not told apart (all count as cold) and %s stays", kind)
	}
	return st
}

// measuredLead is the time a pool's plans should use for a kind of start
// after enough measured starts: their 90th percentile (to the second, at
// most the planner's longest delay) when they disagree with lead, the one
// in force, as startsVerdict judges it (startsOff). ok is false when lead
// fits.
func measuredLead(est control.StartEstimate, lead time.Duration) (time.Duration, bool) {
	off := float64(est.P90) > startsOff*float64(lead) || float64(est.Median) < float64(lead)/2
	if !off || est.P90 <= 0 {
		return lead, false
	}
	next := min(est.P90.Round(time.Second), planner.MaxDelay)
	return next, next != lead
}

// saveStartTimes writes the measured start times to the state file when
// a start was measured since they were last written, so that a restart
// keeps them (and, with learn_boot_delay, the times they put in force).
func (s *Service) saveStartTimes(p *pool) {
	db := s.deps.State
	if db == nil || s.deps.Preview || p.starts.Recorded() == p.startsSaved {
		return
	}
	if err := db.SaveStartTimes(p.spec.Name, p.starts.Measured(control.ColdBoot), p.starts.Measured(control.WarmStart)); err != nil {
		s.log.Error("pool's start times not saved; a restart measures them afresh", "pool", p.spec.Name, "err", err)
		return
	}
	p.startsSaved = p.starts.Recorded()
}

// learnedFleet is the pool's fleet with the measured start times that
// disagree with the times in force (measuredLead) put in their place:
// the cold boots' for BootDelay, unless a warm tier's starts are not told
// apart from them, and the warm starts' for WarmStart.
func (p *pool) learnedFleet() planner.Fleet {
	f := p.plan.Fleet
	if est, ok := p.starts.Estimate(control.ColdBoot); ok && (!f.WarmTier() || p.startsSplit) {
		f.BootDelay, _ = measuredLead(est, f.BootDelay)
	}
	if est, ok := p.starts.Estimate(control.WarmStart); ok && f.WarmTier() {
		f.WarmStart, _ = measuredLead(est, f.WarmStart)
	}
	return f
}

// learnStartTimes makes the pool plan with its measured start times when
// enough of them disagree with the times in force (learnedFleet): it
// rebuilds the controller and its tuner with them, carrying their memory,
// and refits at the next decision, so that the plans in force are made
// again. The configured boot_delay and warm_start stay the pool's
// settings; after a reload or a restart (the starts are in the state
// file) the next decision puts the measured times back in force.
func (s *Service) learnStartTimes(p *pool) {
	if !p.spec.LearnBootDelay {
		return
	}
	was, next := p.plan.Fleet, p.learnedFleet()
	if (next.BootDelay == was.BootDelay && next.WarmStart == was.WarmStart) || p.startsRefused == [2]time.Duration{next.BootDelay, next.WarmStart} {
		return
	}
	name := p.spec.Name
	ps := p.spec
	ps.Config.Fleet.BootDelay, ps.Config.Fleet.WarmStart = next.BootDelay, next.WarmStart
	plan, tuner, err := s.newController(ps)
	if err == nil {
		err = tuner.Restore(p.tuner.State())
	}
	if err != nil {
		p.startsRefused = [2]time.Duration{next.BootDelay, next.WarmStart}
		s.log.Warn("pool keeps its start times: the measured ones could not be put in force", "pool", name,
			"boot_delay", was.BootDelay, "measured_boot_delay", next.BootDelay, "warm_start", was.WarmStart, "measured_warm_start", next.WarmStart,
			"reason", err)
		return
	}
	cold, _ := p.starts.Estimate(control.ColdBoot)
	warm, _ := p.starts.Estimate(control.WarmStart)
	s.log.Info("pool plans with its measured start times", "pool", name,
		"boot_delay", p.spec.Fleet.BootDelay, "was", was.BootDelay, "now", next.BootDelay, "median", cold.Median, "p90", cold.P90, "starts", cold.Starts,
		"warm_start", p.spec.Fleet.WarmStart, "warm_was", was.WarmStart, "warm_now", next.WarmStart, "warm_median", warm.Median, "warm_p90", warm.P90,
		"warm_starts", warm.Starts)
	p.tuner, p.plan, p.saved, p.nextRefit = tuner, plan, controllerMark{}, time.Time{}
	s.deps.Metrics.startTimes(name, plan.Fleet)
}

// learnedVerdict words a start time learned from the measured starts.
func learnedVerdict(est control.StartEstimate, configured, lead time.Duration, kind control.StartKind) string {
	return fmt.Sprintf("median %v, 90th percentile %v over %d starts: %s %v is off, so the plans use %v, "+
		"the measured 90th percentile (learn_boot_delay)", est.Median, est.P90, est.Starts, kind, configured, lead)
}

// startsVerdict words how the measured starts compare with the setting
// of their kind (boot_delay or warm_start).
func startsVerdict(est control.StartEstimate, enough bool, configured time.Duration, kind control.StartKind) string {
	measured := fmt.Sprintf("median %v, 90th percentile %v over %d starts", est.Median, est.P90, est.Starts)
	switch {
	case est.Starts == 0:
		return fmt.Sprintf("no start measured yet: %s %v stands", kind, configured)
	case !enough:
		return measured + fmt.Sprintf(": too few to judge %s yet", kind)
	case float64(est.P90) > startsOff*float64(configured):
		return measured + fmt.Sprintf(": longer than %s %v, so instances are asked for too late; set %s near %v", kind, configured, kind, est.P90)
	case float64(est.Median) < float64(configured)/2:
		return measured + fmt.Sprintf(": much shorter than %s %v, so instances are asked for earlier than needed; set %s near %v", kind, configured, kind, est.P90)
	}
	return measured + fmt.Sprintf(": %s %v fits", kind, configured)
}
