package tune

import (
	"time"

	"github.com/prewarm/prewarm/planner"
)

// CheckRanges tells rc every numeric option with its range, each by its
// key in a pool's tune: block (tune.window): the one range table the
// pool's file (package poolspec) and Validate check, as the planner's
// settings have theirs (planner.Config.CheckRanges). Call it on options
// with their defaults (WithDefaults): a zero is a default, not a value.
func (o Options) CheckRanges(rc planner.RangeChecker) {
	const day = 24 * time.Hour
	rc.Duration(planner.Range[time.Duration]{Key: "tune.window", Value: o.Window, Lo: MinWindow, Hi: MaxWindow})
	rc.Duration(planner.Range[time.Duration]{Key: "tune.min_history", Value: o.MinHistory, Lo: day, Hi: o.Window, HiKey: "tune.window"})
	rc.Float(planner.Range[float64]{Key: "tune.margin", Value: o.Margin, Hi: 0.9})
	rc.Duration(planner.Range[time.Duration]{Key: "tune.half_life", Value: o.HalfLife, Lo: day, Hi: o.Window, HiKey: "tune.window",
		NegativeOff: true})
	rc.Duration(planner.Range[time.Duration]{Key: "tune.cost_half_life", Value: o.CostHalfLife, Lo: time.Hour, Hi: o.Window,
		HiKey: "tune.window", NegativeOff: true})
	rc.Int(planner.Range[int]{Key: "tune.trim", Value: o.Trim, Hi: maxTrim})
	rc.Float(planner.Range[float64]{Key: "tune.slack", Value: o.Slack, Hi: 2})
	rc.Float(planner.Range[float64]{Key: "tune.hysteresis", Value: o.Hysteresis, Hi: 0.5})
	rc.Duration(planner.Range[time.Duration]{Key: "tune.guard_window", Value: o.GuardWindow, Lo: 2 * time.Hour, Hi: 48 * time.Hour})
	rc.Float(planner.Range[float64]{Key: "tune.guard_burn", Value: o.GuardBurn, Lo: 1, Hi: 100})
}
