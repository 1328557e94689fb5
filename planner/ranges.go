package planner

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// The ranges of the settings, beyond MaxFleet and MaxMinInterval. The
// lower ends keep a pool from spinning, the upper ends catch a unit typed
// wrong.
const (
	// MaxRate is the highest request rate a setting may give (requests/s).
	MaxRate = 1e9
	// MaxPrice is the highest price per instance-hour.
	MaxPrice = 1e6
	// MaxDelay is the longest boot delay, reactive hold or cooldown.
	MaxDelay = 24 * time.Hour
	// MaxLatency is the longest service time and SLO latency.
	MaxLatency = time.Hour
	// MaxMinSeasons is the most seasons the gate may wait for.
	MaxMinSeasons = 10
	// MaxTolerance is the largest factor the gate may tolerate.
	MaxTolerance = 100
)

// Range is the range a setting's Value must lie in: [Lo, Hi], open at Lo
// with LoOpen and at Hi with HiOpen. Key is the setting's YAML key below
// a pool (reactive.max_step, tune.window); HiKey, when set, is the key
// whose value Hi is, for messages: a sibling's, or one of a pool's top
// level (max). With NegativeOff any negative Value is in range too: it
// switches the setting off (tune.half_life).
type Range[T int | time.Duration | float64] struct {
	Key            string
	Value, Lo, Hi  T
	LoOpen, HiOpen bool
	HiKey          string
	NegativeOff    bool
}

// Contains reports whether Value lies in the range (a NaN never does).
func (r Range[T]) Contains() bool {
	v := float64(r.Value)
	lo, hi := float64(r.Lo), float64(r.Hi)
	if r.NegativeOff && v < 0 {
		return true
	}
	return !math.IsNaN(v) && v >= lo && v <= hi && !(r.LoOpen && v == lo) && !(r.HiOpen && v == hi)
}

// RangeChecker is told every numeric setting of a type with its range:
// the one table of ranges, which each layer checks and words in its own
// terms (a file's line, a flag's name).
type RangeChecker interface {
	Int(r Range[int])
	Duration(r Range[time.Duration])
	Float(r Range[float64])
}

// CheckRanges tells rc every numeric setting a pool's configuration file
// gives the planner, with its range: the limits (Limits.CheckRanges), the
// fleet and its spot tier, sizing and SLO, the prices, the reactive rules
// and the gate's seasons and tolerance. The gate's window is measured in
// forecast steps, which the controller's settings hold; the calibration
// and the bounds are not a file's.
func (c Config) CheckRanges(rc RangeChecker) {
	f := c.Fleet
	f.Limits.CheckRanges(rc)
	rc.Float(Range[float64]{Key: "rps_per_instance", Value: f.RPSPerInstance, Hi: MaxRate})
	rc.Duration(Range[time.Duration]{Key: "service_time", Value: f.ServiceTime, Hi: MaxLatency})
	rc.Int(Range[int]{Key: "slots", Value: f.Slots, Lo: 1, Hi: MaxFleet})
	rc.Float(Range[float64]{Key: "target_utilisation", Value: c.TargetUtilisation, Hi: 1, LoOpen: true})
	rc.Duration(Range[time.Duration]{Key: "boot_delay", Value: f.BootDelay, Hi: MaxDelay})
	rc.Duration(Range[time.Duration]{Key: "warm_start", Value: f.WarmStart, Hi: f.BootDelay, HiOpen: f.WarmStart != 0, HiKey: "boot_delay"})
	rc.Float(Range[float64]{Key: "spot.share", Value: f.Spot.Share, Hi: 1})
	rc.Int(Range[int]{Key: "spot.base_on_demand", Value: f.Spot.BaseOnDemand, Hi: max(f.MaxInstances, 0), HiKey: "max"})
	rc.Duration(Range[time.Duration]{Key: "slo_latency", Value: c.SLO.Latency, Hi: MaxLatency})
	rc.Float(Range[float64]{Key: "slo_quantile", Value: c.SLO.Quantile, Lo: 0.5, Hi: 1, HiOpen: true})
	rc.Float(Range[float64]{Key: "forecast_quantile", Value: c.ForecastQuantile, Lo: DefaultMinQuantile, Hi: DefaultMaxQuantile})
	c.Prices.checkRanges(rc, f.MaxInstances)
	c.Reactive.checkRanges(rc)
	g := c.Gating
	rc.Int(Range[int]{Key: "gate.min_seasons", Value: g.MinSeasons, Lo: 1, Hi: MaxMinSeasons})
	rc.Float(Range[float64]{Key: "gate.tolerance", Value: g.Tolerance, Lo: 1, Hi: MaxTolerance})
}

func (p Prices) checkRanges(rc RangeChecker, instances int) {
	for _, x := range []struct {
		key   string
		price float64
	}{{"prices.on_demand_per_hour", p.OnDemandPerHour}, {"prices.reserved_per_hour", p.ReservedPerHour},
		{"prices.spot_per_hour", p.SpotPerHour}, {"prices.stopped_per_hour", p.StoppedPerHour}} {
		rc.Float(Range[float64]{Key: x.key, Value: x.price, Hi: MaxPrice})
	}
	rc.Int(Range[int]{Key: "prices.reserved_instances", Value: p.ReservedInstances, Hi: max(instances, 0), HiKey: "max"})
}

func (r Reactive) checkRanges(rc RangeChecker) {
	rc.Float(Range[float64]{Key: "reactive.scale_out_utilisation", Value: r.ScaleOutUtilisation, Hi: 1, LoOpen: true})
	rc.Float(Range[float64]{Key: "reactive.scale_in_utilisation", Value: r.ScaleInUtilisation, Hi: r.ScaleOutUtilisation,
		HiOpen: true, HiKey: "scale_out_utilisation"})
	rc.Float(Range[float64]{Key: "reactive.scale_out_queue", Value: r.ScaleOutQueue, Hi: MaxRate})
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{"reactive.scale_out_for", r.ScaleOutFor}, {"reactive.scale_out_queue_for", r.ScaleOutQueueFor},
		{"reactive.scale_in_for", r.ScaleInFor}, {"reactive.scale_out_cooldown", r.ScaleOutCooldown},
		{"reactive.scale_in_cooldown", r.ScaleInCooldown}, {"reactive.return_to_plan_after", r.ReturnToPlanAfter}} {
		rc.Duration(Range[time.Duration]{Key: d.key, Value: d.d, Hi: MaxDelay})
	}
	rc.Int(Range[int]{Key: "reactive.scale_out_step", Value: r.ScaleOutStep, Lo: 1, Hi: MaxFleet})
	rc.Int(Range[int]{Key: "reactive.scale_in_step", Value: r.ScaleInStep, Lo: 1, Hi: MaxFleet})
	rc.Int(Range[int]{Key: "reactive.max_step", Value: r.MaxStep, Lo: max(r.ScaleOutStep, 1), Hi: MaxFleet})
}

// RangeError is a setting outside its range.
type RangeError struct {
	// Key is the setting's YAML key; Value its value and Want its range,
	// rendered as they are typed.
	Key, Value, Want string
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("%s %s is out of range: want %s", e.Key, e.Value, e.Want)
}

// Want renders the range as a message states it: "0 to 4" for whole
// numbers and durations, "[0.5, 1)" for fractions, naming HiKey's setting
// when Hi is its value ("0 to max 4"), and saying when a negative value
// switches the setting off ("24h0m0s to tune.window 336h0m0s, or
// negative for none").
func (r Range[T]) Want() string {
	if r.NegativeOff {
		s := r
		s.NegativeOff = false
		return s.Want() + ", or negative for none"
	}
	render := func(v T) string {
		if d, ok := any(v).(time.Duration); ok {
			return d.String()
		}
		return fmt.Sprint(v)
	}
	lo, hi := render(r.Lo), render(r.Hi)
	if r.HiKey != "" {
		hi = r.HiKey + " " + hi
	}
	if _, ok := any(r.Value).(float64); !ok {
		return lo + " to " + hi
	}
	l, h := "[", "]"
	if r.LoOpen {
		l = "("
	}
	if r.HiOpen {
		h = ")"
	}
	return l + lo + ", " + hi + h
}

// rangeErrors collects a RangeError for each setting out of its range.
type rangeErrors []error

func (e *rangeErrors) Int(r Range[int]) { e.check(r.Contains(), r.Key, fmt.Sprint(r.Value), r.Want()) }
func (e *rangeErrors) Duration(r Range[time.Duration]) {
	e.check(r.Contains(), r.Key, r.Value.String(), r.Want())
}
func (e *rangeErrors) Float(r Range[float64]) {
	e.check(r.Contains(), r.Key, fmt.Sprint(r.Value), r.Want())
}

func (e *rangeErrors) check(in bool, key, value, want string) {
	if !in {
		*e = append(*e, &RangeError{Key: key, Value: value, Want: want})
	}
}

// RangeErrors checks a range table (a type's CheckRanges) and returns a
// *RangeError for each setting out of its range, joined in the table's
// order; nil when none is. It is how a type validates itself against its
// own table (Config.Validate, Limits.Validate, tune.Options.Validate).
func RangeErrors(table func(RangeChecker)) error {
	var e rangeErrors
	table(&e)
	return errors.Join(e...)
}
