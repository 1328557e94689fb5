package service

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// StartTimes is what a pool's decisions measured of its fleet's start
// times (control.StartTimes: from the size asked to an instance serving),
// beside the lead time the plan uses. With learn_boot_delay (the default)
// the measurement replaces boot_delay as the plan's lead time once enough
// starts disagree with it; Verdict says which is in force, and why.
type StartTimes struct {
	control.StartEstimate
	// Configured is the pool's boot_delay.
	Configured time.Duration `json:"configured"`
	// LeadTime is what the plans ask ahead by now: Configured, or the
	// measured starts' 90th percentile once they replaced it.
	LeadTime time.Duration `json:"lead_time"`
	// Enough is true once enough starts were seen to judge boot_delay.
	Enough bool `json:"enough"`
	// Verdict compares them, in words.
	Verdict string `json:"verdict"`
}

// startsOff is how far the measured starts may be from boot_delay before
// the verdict says so: a P90 more than half as long again (the plan asks
// too late: requests wait), or a median under half of it (it asks
// earlier than it needs to: idle instances are paid for).
const startsOff = 1.5

// observeStarts feeds the pool's start-time learner with a decision: the
// size the fleet is asked to reach now (what was applied, else what it
// was asked before) and how many instances serve. Back-ends that cannot
// tell booting from ready instances teach it nothing.
func (p *pool) observeStarts(d decision) *StartTimes {
	if d.known && d.capa.ReadyKnown {
		// What the fleet showed before the decision, then what it was
		// asked for by it: a request is dated when it was made.
		p.starts.Observe(d.now, d.capa.Desired, d.capa.Ready)
		if d.outcome == OutcomeApplied || d.outcome == OutcomeLimited {
			p.starts.Observe(d.now, d.res.To, d.capa.Ready)
		}
	}
	est, enough := p.starts.Estimate()
	if est.Starts == 0 {
		return nil
	}
	configured, lead := p.spec.Fleet.BootDelay, p.plan.Fleet.BootDelay
	st := &StartTimes{StartEstimate: est, Configured: configured, LeadTime: lead, Enough: enough,
		Verdict: startsVerdict(est, enough, configured)}
	if lead != configured {
		st.Verdict = learnedVerdict(est, configured, lead)
	}
	return st
}

// measuredLead is the lead time a pool's plans should use after enough
// measured starts: their 90th percentile (to the second, at most the
// planner's longest delay) when they disagree with lead, the one in force,
// as startsVerdict judges it (startsOff). ok is false when lead fits.
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
// keeps them (and, with learn_boot_delay, the lead time they put in force).
func (s *Service) saveStartTimes(p *pool) {
	db := s.deps.State
	if db == nil || s.deps.Preview || p.starts.Recorded() == p.startsSaved {
		return
	}
	if err := db.SaveStartTimes(p.spec.Name, p.starts.Measured()); err != nil {
		s.log.Error("pool's start times not saved; a restart measures them afresh", "pool", p.spec.Name, "err", err)
		return
	}
	p.startsSaved = p.starts.Recorded()
}

// learnStartTimes makes the pool plan with its measured start times when
// enough of them disagree with the lead time in force (measuredLead): it
// rebuilds the controller and its tuner with that lead, carrying their
// memory, and refits at the next decision, so that the plans in force are
// made again. The configured boot_delay stays the pool's setting; after
// a reload or a restart (the starts are in the state file) the next
// decision puts the measured lead back in force.
//
// A pool with a warm tier (warm_start) keeps boot_delay: its starts mix
// warm and cold ones, which the measurement does not tell apart.
func (s *Service) learnStartTimes(p *pool, st *StartTimes) {
	if st == nil || !st.Enough || !p.spec.LearnBootDelay || p.plan.Fleet.WarmTier() {
		return
	}
	lead, ok := measuredLead(st.StartEstimate, p.plan.Fleet.BootDelay)
	if !ok {
		return
	}
	name := p.spec.Name
	ps := p.spec
	ps.Config.Fleet.BootDelay = lead
	plan, tuner, err := s.newController(ps)
	if err == nil {
		err = tuner.Restore(p.tuner.State())
	}
	if err != nil {
		s.log.Warn("pool keeps its lead time: the measured start times could not be put in force", "pool", name,
			"lead_time", p.plan.Fleet.BootDelay, "measured_p90", st.P90, "reason", err)
		return
	}
	s.log.Info("pool plans with its measured start times", "pool", name, "boot_delay", p.spec.Fleet.BootDelay,
		"was", p.plan.Fleet.BootDelay, "lead_time", lead, "median", st.Median, "p90", st.P90, "starts", st.Starts)
	p.tuner, p.plan, p.saved, p.nextRefit = tuner, plan, controllerMark{}, time.Time{}
	s.deps.Metrics.bootDelay(name, lead)
	st.LeadTime = lead
	st.Verdict = learnedVerdict(st.StartEstimate, p.spec.Fleet.BootDelay, lead)
}

// learnedVerdict words a lead time learned from the measured starts.
func learnedVerdict(est control.StartEstimate, configured, lead time.Duration) string {
	return fmt.Sprintf("median %v, 90th percentile %v over %d starts: boot_delay %v is off, so the plans ask %v ahead, "+
		"the measured 90th percentile (learn_boot_delay)", est.Median, est.P90, est.Starts, configured, lead)
}

// startsVerdict words how the measured starts compare with boot_delay.
func startsVerdict(est control.StartEstimate, enough bool, bootDelay time.Duration) string {
	measured := fmt.Sprintf("median %v, 90th percentile %v over %d starts", est.Median, est.P90, est.Starts)
	switch {
	case !enough:
		return measured + ": too few to judge boot_delay yet"
	case float64(est.P90) > startsOff*float64(bootDelay):
		return measured + fmt.Sprintf(": longer than boot_delay %v, so instances are asked for too late; set boot_delay near %v", bootDelay, est.P90)
	case float64(est.Median) < float64(bootDelay)/2:
		return measured + fmt.Sprintf(": much shorter than boot_delay %v, so instances are asked for earlier than needed; set boot_delay near %v", bootDelay, est.P90)
	}
	return measured + fmt.Sprintf(": boot_delay %v fits", bootDelay)
}
