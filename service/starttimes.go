package service

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/control"
)

// StartTimes is what a pool's decisions measured of its fleet's start
// times (control.StartTimes: from the size asked to an instance serving),
// beside the lead time the plan uses. The plan keeps the configured
// boot_delay; Verdict says when the measurement disagrees with it.
type StartTimes struct {
	control.StartEstimate
	// Configured is the pool's boot_delay, the plan's lead time.
	Configured time.Duration `json:"configured"`
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
	return &StartTimes{StartEstimate: est, Configured: p.plan.Fleet.BootDelay, Enough: enough,
		Verdict: startsVerdict(est, enough, p.plan.Fleet.BootDelay)}
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
