package planner

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Sizing methods accepted by Config.Sizing.
const (
	// SizingUtilisation sizes the fleet so the forecast rate keeps each
	// instance at TargetUtilisation of Fleet.RPSPerInstance.
	SizingUtilisation = "utilisation"
	// SizingErlangC sizes the fleet as an M/M/c queue: the smallest fleet
	// whose SLO.Quantile wait stays within SLO.Latency, and no busier than
	// TargetUtilisation.
	SizingErlangC = "erlang-c"
)

// Config is everything the planner needs besides the forecast and the live
// signals. [DefaultConfig] returns field defaults, [Config.CheckRanges]
// the range of each number and [Config.Validate] names every bad setting.
//
// Its yaml tags are a pool's keys in the forecaster's configuration file
// (package poolspec), which embeds it: each setting is declared, defaulted,
// ranged and documented here once.
type Config struct {
	Fleet  Fleet  `yaml:",inline"`
	Prices Prices `yaml:"prices"`
	SLO    SLO    `yaml:",inline"`
	// Sizing is SizingUtilisation or SizingErlangC (default utilisation in
	// code; a pool in the configuration file, like the fleet flags, sizes
	// by erlang-c unless it says otherwise).
	Sizing string `yaml:"sizing"`
	// TargetUtilisation is the share of an instance's throughput the plan
	// aims to use, in (0, 1]. It leaves headroom for the reactive rules;
	// with Erlang-C sizing it caps what the queue alone would allow (1:
	// the queue decides).
	TargetUtilisation float64 `yaml:"target_utilisation"`
	// ForecastQuantile is the quantile of a forecast step's demand the plan
	// sizes for, in [0.5, 1). It is not the SLO's quantile: a request is
	// late only when the capacity of the minute it arrives in falls short,
	// and most minutes of a step are below the step's peak, so a per-step
	// P99 over-provisions a per-request 99%. With Calibration on (the
	// default) it is where the controller starts; it then moves the
	// quantile walk-forward until the plan's estimated per-request misses
	// match the SLO. A forecaster that gives its own interval is asked for
	// level ForecastLevel().
	ForecastQuantile float64 `yaml:"forecast_quantile"`
	// Calibration moves ForecastQuantile walk-forward; see Calibration.
	Calibration Calibration `yaml:",inline"`
	// Bounds say how a forecast's upper bound is built; see Bounds.
	Bounds   Bounds   `yaml:"-"`
	Reactive Reactive `yaml:"reactive"`
	Gating   Gating   `yaml:"gate"`
	// Windows are schedule floors; see ParseWindows.
	Windows []Window `yaml:"-"`
	// ScaleInOnForecast lets a forecast plan lower the pool on its own
	// (default true). False holds it: a decision below the current size
	// then needs the reactive rules' idle evidence (their scale-in at that
	// decision), and drops by Reactive.ScaleInStep only; for pools where a
	// wrong forecast of a quiet hour costs more than idle GPUs.
	ScaleInOnForecast bool `yaml:"scale_in_on_forecast"`
}

// Fleet describes the instances being scaled.
type Fleet struct {
	// RPSPerInstance is the request rate one instance serves while meeting
	// the latency SLO. Required for utilisation sizing; when zero it is
	// derived from ServiceTime and Slots.
	RPSPerInstance float64 `yaml:"rps_per_instance"`
	// ServiceTime is the mean time one request occupies a slot; required
	// for Erlang-C sizing (a pool in the configuration file derives it
	// from RPSPerInstance and Slots when it gives none).
	ServiceTime time.Duration `yaml:"service_time"`
	// Slots is how many requests one instance serves at once (batch or
	// concurrency); Erlang C treats each slot as a server. Default 1.
	Slots int `yaml:"slots"`
	// BootDelay is the lead time from asking for an instance to it serving:
	// boot plus model load. The plan asks this much ahead.
	BootDelay time.Duration `yaml:"boot_delay"`
	// WarmStart is the time from starting a stopped instance of the warm
	// tier to it serving: its disk keeps the image and the weights, so it
	// is a fraction of BootDelay. With a warm tier the plan asks for
	// running capacity WarmStart ahead and keeps stopped, a cold boot
	// ahead of that (WarmLead), what it will run and the recent peak's
	// need (the steps' Warm). 0: no warm tier; otherwise below BootDelay.
	WarmStart time.Duration `yaml:"warm_start"`
	// Spot is the share of the fleet that runs on interruptible spot
	// capacity; its zero value runs everything on demand.
	Spot Spot `yaml:"spot"`
	// Limits bound every plan (MinInstances, MaxInstances) and every
	// change made to the fleet (MaxStep, MinInterval).
	Limits `yaml:",inline"`
}

// Lead is how far ahead the plan asks for running capacity: WarmStart with
// a warm tier (its stopped instances start that fast), else BootDelay.
func (f Fleet) Lead() time.Duration {
	if f.WarmTier() {
		return f.WarmStart
	}
	return f.BootDelay
}

// WarmLead is how far ahead a warm tier keeps stopped what the plan will
// run: a cold boot to fill it, and the warm start the plan asks ahead.
func (f Fleet) WarmLead() time.Duration { return f.BootDelay + f.WarmStart }

// WarmTier reports whether the fleet keeps a warm tier of stopped
// instances (WarmStart set).
func (f Fleet) WarmTier() bool { return f.WarmStart > 0 }

// Spot is a fleet's spot tier: interruptible instances billed at
// Prices.SpotPerHour, above a floor that always runs on demand so that the
// SLO holds when spot disappears at once. A cloud group runs it as a spot
// mix (Volcengine's InstancesDistribution); the simulator draws its
// interruptions and stock-outs.
type Spot struct {
	// Share is the share of the instances above BaseOnDemand that run on
	// spot, in [0, 1]; 0: no spot tier.
	Share float64 `yaml:"share" json:"share"`
	// BaseOnDemand instances always run on demand, whatever Share says,
	// 0 to the pool's max.
	BaseOnDemand int `yaml:"base_on_demand" json:"base_on_demand"`
	// Fallback says what replaces a spot instance that is interrupted or
	// out of stock: SpotFallbackOnDemand (the default) launches on demand
	// in the same tick, SpotFallbackNone waits for spot to return.
	Fallback string `yaml:"fallback" json:"fallback"`
}

// The values of Spot.Fallback.
const (
	// SpotFallbackOnDemand replaces lost spot capacity on demand at once
	// (Volcengine's CompensateWithOnDemand, SkyServe's
	// dynamic_ondemand_fallback).
	SpotFallbackOnDemand = "on_demand"
	// SpotFallbackNone leaves lost spot capacity to return on spot.
	SpotFallbackNone = "none"
)

// Tier reports whether the fleet runs part of itself on spot.
func (s Spot) Tier() bool { return s.Share > 0 }

// OnDemandFallback reports whether lost spot capacity is replaced on
// demand (Fallback unset or SpotFallbackOnDemand).
func (s Spot) OnDemandFallback() bool { return s.Fallback != SpotFallbackNone }

// Normal is s with Fallback spelt out (SpotFallbackOnDemand when unset),
// so that two mixes that act alike compare equal.
func (s Spot) Normal() Spot {
	if s.Fallback == "" {
		s.Fallback = SpotFallbackOnDemand
	}
	return s
}

// CheckSpotFallback reports whether fallback is a value spot.fallback
// accepts: SpotFallbackOnDemand or SpotFallbackNone. The message names no
// key, so that the caller can prefix the one its user typed.
func CheckSpotFallback(fallback string) error {
	if fallback != SpotFallbackOnDemand && fallback != SpotFallbackNone {
		return fmt.Errorf("%q is not a fallback: want %s or %s", fallback, SpotFallbackOnDemand, SpotFallbackNone)
	}
	return nil
}

// Check reports the first setting of s outside its range, naming its key:
// share in [0, 1], base_on_demand from 0 to maxInstances, fallback
// SpotFallbackOnDemand or SpotFallbackNone (unset: on demand). The
// message names no pool, so that the caller can prefix it.
func (s Spot) Check(maxInstances int) error {
	switch {
	case !(s.Share >= 0 && s.Share <= 1):
		return fmt.Errorf("spot.share %v is outside [0, 1]", s.Share)
	case s.BaseOnDemand < 0 || s.BaseOnDemand > max(maxInstances, 0):
		return fmt.Errorf("spot.base_on_demand %d is outside [0, max %d]", s.BaseOnDemand, maxInstances)
	}
	if err := CheckSpotFallback(s.Normal().Fallback); err != nil {
		return fmt.Errorf("spot.fallback: %w", err)
	}
	return nil
}

// OnSpot is how many of desired running instances the tier puts on spot:
// Share of those above BaseOnDemand, rounded to the nearest instance.
func (s Spot) OnSpot(desired int) int {
	if !s.Tier() {
		return 0
	}
	return int(math.Round(s.Share * float64(max(desired-s.BaseOnDemand, 0))))
}

// Prices are per instance-hour, billed per second.
type Prices struct {
	// OnDemandPerHour is the price of an instance started on demand.
	OnDemandPerHour float64 `yaml:"on_demand_per_hour"`
	// ReservedPerHour is the price of a reserved (committed) instance, paid
	// whether used or not, for the first ReservedInstances of the fleet.
	ReservedPerHour float64 `yaml:"reserved_per_hour"`
	// ReservedInstances is the committed baseline; 0 buys all on demand.
	ReservedInstances int `yaml:"reserved_instances"`
	// SpotPerHour is the price of a spot (interruptible) instance.
	SpotPerHour float64 `yaml:"spot_per_hour"`
	// StoppedPerHour is the price of a stopped instance of the warm tier:
	// its disks.
	StoppedPerHour float64 `yaml:"stopped_per_hour"`
	// Currency is the code the prices are in, three capital letters as
	// ISO 4217 writes them (USD, EUR, CNY). Reports show it beside every
	// cost; no arithmetic depends on it.
	Currency string `yaml:"currency"`
}

// DefaultCurrency is the prices' currency when none is set.
const DefaultCurrency = "USD"

// CheckCurrency reports whether code is a currency code prices.currency
// (or a --currency flag) accepts: three capital letters. The message names
// no key, so that the caller can prefix the one its user typed.
func CheckCurrency(code string) error {
	ok := len(code) == 3
	for _, r := range code {
		ok = ok && r >= 'A' && r <= 'Z'
	}
	if !ok {
		return fmt.Errorf("%q is not a currency code: want three capital letters, e.g. USD, EUR, CNY", code)
	}
	return nil
}

// SLO is the latency objective the fleet is sized for.
type SLO struct {
	// Latency is the longest a request may wait for a free instance.
	Latency time.Duration `yaml:"slo_latency"`
	// Quantile is the share of requests that must meet Latency, e.g. 0.99.
	Quantile float64 `yaml:"slo_quantile"`
}

// Gating sets when the forecast term is trusted; see Gate.
type Gating struct {
	// MinSeasons is how many whole seasons of history the model needs
	// before it is trusted (default 2). The seasonal profile needs one.
	MinSeasons int `yaml:"min_seasons"`
	// Tolerance lets the model's recent error exceed seasonal naive's by
	// this factor before it steps back (default 1.5). A week's MAE is noisy on bursty or
	// sparse demand, and stepping back to a weaker plan, or to the
	// reactive rules alone, on a small difference costs more SLO than it
	// saves; 1.0 is the strict reading.
	Tolerance float64 `yaml:"tolerance"`
	// Window is how much recent history the accuracy is measured on.
	Window time.Duration `yaml:"window"`
}

// Calibration is an online miss-rate controller for the forecast
// quantile. After each observed interval served under a plan the
// controller estimates the share of that interval's requests that waited
// longer than the SLO (Config.MissShare of the observed demand on the
// instances that were ready: the fewest it had asked for over the boot
// delay before), and moves the quantile's tail p = 1 − q
// multiplicatively:
//
//	ln p ← ln p − Rate · m · w · (miss − (1 − Target)) / (1 − Target)
//
// where m is the interval's length in minutes and w its demand over the
// recent mean, so every request weighs the same. A run of intervals without
// misses widens p (a cheaper plan), a miss narrows it (a wider bound), and
// the long-run request-weighted miss share settles at 1 − Target: realised
// attainment, reactive term included, tracks the target. The estimate uses
// only what the service sees (the observed demand and its own decisions),
// so the backtest calibrates exactly as `forecaster serve` would.
//
// The quantile plans use stays within [MinQuantile, MaxQuantile], but the
// controller's memory ln p may run Carry further past MaxQuantile: a lump
// of misses (a burst the plan did not cover) that would push the quantile
// beyond its top is remembered and paid back by a proportionally longer
// time at the top, instead of being forgotten at the clamp. Without it the
// quantile saturates at MaxQuantile after every missed burst, decays at a
// rate that does not depend on Target and meets the next burst at the same
// low quantile: the long-run miss share is then set by the decay, not by
// the target.
//
// Every field but On has a default for its zero value.
type Calibration struct {
	// On moves ForecastQuantile walk-forward (default true); false keeps
	// it fixed.
	On bool `yaml:"calibrate"`
	// Target is the share of requests the plans aim to serve within the
	// SLO; 0 means SLO.Quantile.
	Target float64 `yaml:"-"`
	// Rate is the step size per minute of mean demand (0: 0.0002, where a
	// day without a miss widens p by a third and a fully missed quarter of
	// an hour narrows it about 1.8-fold at a 99.5% target).
	Rate float64 `yaml:"-"`
	// MinQuantile and MaxQuantile bound the quantile (0: 0.5 and 0.9999).
	MinQuantile float64 `yaml:"-"`
	MaxQuantile float64 `yaml:"-"`
	// Carry is how far, in natural-log units of the tail 1 − q, the
	// calibration's memory may run past MaxQuantile (0: DefaultCarry;
	// negative: none, the memory stops at MaxQuantile), in [0, 20].
	Carry float64 `yaml:"-"`
}

// Calibration defaults, for the zero fields.
const (
	DefaultCalibrationRate = 0.0002
	DefaultMinQuantile     = 0.5
	DefaultMaxQuantile     = 0.9999
	// DefaultCarry lets the memory run tenfold (ln 10) past
	// MaxQuantile's tail: after a long missed burst the plans stay at the
	// top quantile for up to about eight miss-free days (the tail a third
	// wider a day), where a hundredfold would hold them sixteen
	// (docs/scaling.md says how it was chosen).
	DefaultCarry = 2.3
)

// StepRate is Rate, or its default.
func (c Calibration) StepRate() float64 { return orDefault(c.Rate, DefaultCalibrationRate) }

// CarryLog is Carry with its default (0 for none).
func (c Calibration) CarryLog() float64 { return offOrDefault(c.Carry, DefaultCarry) }

// Range is [MinQuantile, MaxQuantile], with their defaults.
func (c Calibration) Range() (lo, hi float64) {
	lo, hi = c.MinQuantile, c.MaxQuantile
	if lo == 0 {
		lo = DefaultMinQuantile
	}
	if hi == 0 {
		hi = DefaultMaxQuantile
	}
	return lo, hi
}

// Bounds say how the plan's upper bound on a forecast step's demand is
// built: the point forecast plus the ForecastQuantile of the controller's
// own recent errors at the same time of day (actual − forecast, pooled
// over the step's slot of the day and its neighbours over ErrorWindow).
// Widths that follow the time of day are narrow on quiet nights and wide
// around recurring bursts; widths that scale with the level would blow up
// on near-zero nights. Until a slot has MinErrors errors, the forecaster's
// own interval stands in, widened by WarmUpWidening. Every plan is capped
// at the need of the recent peak.
//
// The zero value is the default; each field says what its zero means.
type Bounds struct {
	// FromInterval turns the per-slot error bounds off: the forecaster's
	// own interval, rescaled to ForecastQuantile, is the bound.
	FromInterval bool
	// ErrorWindow is how far back errors are pooled (0: 14 days).
	ErrorWindow time.Duration
	// SlotSpread is how many neighbouring steps each side of a step's slot
	// of the day share its errors (0: 2; negative: none): a burst whose
	// time jitters by half an hour lands in a neighbouring slot.
	SlotSpread int
	// MinErrors is how many errors a slot needs before they set its bound
	// (0: 6).
	MinErrors int
	// WarmUpWidening multiplies the forecaster's own interval while it
	// stands in (0: 1.5; 1: no widening).
	WarmUpWidening float64
	// PeakHeadroom caps every step's need at that of the observed peak
	// demand over PeakWindow times PeakHeadroom (0: 1, the peak itself;
	// negative: no cap): a forecast echoing a burst never asks for more
	// than the peak has needed; demand growing past it is the reactive
	// rules' to follow.
	PeakHeadroom float64
	// PeakWindow is how far back the peak is taken (0: 7 days).
	PeakWindow time.Duration
	// AdditiveBursts sizes for the demand's variation inside a step as a
	// height of its own, learned over the whole day in units of the
	// recent mean demand, instead of as a share of the step's level
	// learned per slot of the day: for bursts whose size does not follow
	// the daily rhythm and whose time cannot be told.
	AdditiveBursts bool
	// NoWarmUpPeak leaves warming up to the plans and the reactive rules.
	// By default, while the history is shorter than the Gating.MinSeasons
	// seasons the model needs, the plan also holds the peak observed so
	// far times the headroom: on the first day no forecast can be made and
	// the reactive rules are too late for a rise, on the second the
	// seasonal profile has seen one day only.
	NoWarmUpPeak bool
}

// Spread is SlotSpread with its default (0 for none).
func (b Bounds) Spread() int { return offOrDefault(b.SlotSpread, 2) }

// Window is ErrorWindow with its default.
func (b Bounds) Window() time.Duration { return orDefault(b.ErrorWindow, 14*24*time.Hour) }

// Enough is MinErrors with its default.
func (b Bounds) Enough() int { return orDefault(b.MinErrors, 6) }

// Widening is WarmUpWidening with its default.
func (b Bounds) Widening() float64 { return orDefault(b.WarmUpWidening, 1.5) }

// Headroom is PeakHeadroom with its default; 0 means no cap.
func (b Bounds) Headroom() float64 { return offOrDefault(b.PeakHeadroom, 1) }

// PeakSpan is PeakWindow with its default.
func (b Bounds) PeakSpan() time.Duration { return orDefault(b.PeakWindow, 7*24*time.Hour) }

// setting is the type of a numeric setting with a default.
type setting interface{ ~int | ~int64 | ~float64 }

// orDefault is v when it is set (positive), else def.
func orDefault[T setting](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// offOrDefault is a setting a user can switch off: 0 (off) when v is
// negative, def when v is 0 (unset), v otherwise.
func offOrDefault[T setting](v, def T) T {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

// Reactive holds the threshold rules. The defaults are the common ones from
// cloud autoscalers: scale out on sustained high utilisation or a long
// queue, scale in slowly when idle.
type Reactive struct {
	// ScaleOutUtilisation: scale out when utilisation stays above it for
	// ScaleOutFor (default 0.85 for 5m).
	ScaleOutUtilisation float64       `yaml:"scale_out_utilisation"`
	ScaleOutFor         time.Duration `yaml:"scale_out_for"`
	// ScaleOutQueue: scale out when more requests than this wait for
	// ScaleOutQueueFor (default 50 for 2m).
	ScaleOutQueue    float64       `yaml:"scale_out_queue"`
	ScaleOutQueueFor time.Duration `yaml:"scale_out_queue_for"`
	// ScaleInUtilisation: scale in when utilisation stays below it, with an
	// empty queue, for ScaleInFor (default 0.30 for 20m).
	ScaleInUtilisation float64       `yaml:"scale_in_utilisation"`
	ScaleInFor         time.Duration `yaml:"scale_in_for"`
	// ScaleOutStep and ScaleInStep are the instances one action adds or
	// removes (default 1 each).
	ScaleOutStep int `yaml:"scale_out_step"`
	ScaleInStep  int `yaml:"scale_in_step"`
	// MaxStep caps how many instances one reactive action may add: a
	// scale-out adds at least ScaleOutStep and, like the HPA, as many as
	// the observed load needs, up to MaxStep. Default 4, the HPA's default
	// scale-up limit (4 pods per period); 1 gives plain +1 steps.
	MaxStep int `yaml:"max_step"`
	// ScaleOutCooldown is the wait after a scale-out before the next
	// (default 5m); ScaleInCooldown the wait after any action before a
	// scale-in (default 15m).
	ScaleOutCooldown time.Duration `yaml:"scale_out_cooldown"`
	ScaleInCooldown  time.Duration `yaml:"scale_in_cooldown"`
	// SLORule makes the latency SLO a trigger of its own (default true):
	// the rules scale out when the observed demand would keep more
	// requests than the SLO allows waiting past it on the current
	// instances, and never scale in below what the SLO needs (see
	// ReactiveNext).
	SLORule bool `yaml:"slo_rule"`
	// PanicThreshold turns on the surge rule, Knative's panic mode: when
	// the observed demand needs at least this many times the current
	// instances, the rules scale out at once, without waiting for a
	// condition to hold or a cooldown to pass, to the need of the
	// observed demand times PanicHeadroom (room for the surge to grow
	// while the new instances boot). 0: off; Knative's default is 2.
	PanicThreshold float64 `yaml:"-"`
	// PanicHeadroom multiplies the observed demand a surge scales out for
	// (0: 2).
	PanicHeadroom float64 `yaml:"-"`
	// ReturnToPlanAfter: while a forecast plan is in force, a reactive
	// scale-out above it is given back once the observed load has fitted
	// the plan's instances for this long (default 2m; 0: never, the term
	// then holds until the scale-in rule lets go).
	ReturnToPlanAfter time.Duration `yaml:"return_to_plan_after"`
}

// SurgeHeadroom is PanicHeadroom with its default.
func (r Reactive) SurgeHeadroom() float64 { return orDefault(r.PanicHeadroom, 2) }

// DefaultConfig returns the defaults: utilisation sizing at 80%, an SLO of
// 99.5% of requests waiting at most 10 seconds, the forecast quantile
// calibrated walk-forward from 0.9 with per-slot error bounds and the
// peak cap, a 10-minute boot, no warm tier, no spot tier (lost spot
// capacity replaced on demand once one is set), 1 to 100 instances at 2.50
// an hour on demand (0.075 stopped, 3% of it: disks), and the reactive
// rules documented on Reactive. Fleet.RPSPerInstance has no sensible default and
// must be set.
func DefaultConfig() Config {
	return Config{
		Fleet: Fleet{
			Slots:     1,
			BootDelay: 10 * time.Minute,
			Spot:      Spot{Fallback: SpotFallbackOnDemand},
			Limits:    DefaultLimits(),
		},
		Prices: Prices{OnDemandPerHour: 2.5, ReservedPerHour: 1.6, SpotPerHour: 1.0, StoppedPerHour: 0.075, Currency: DefaultCurrency},
		SLO:    SLO{Latency: 10 * time.Second, Quantile: 0.995},
		Sizing: SizingUtilisation,

		TargetUtilisation: 0.8,
		ForecastQuantile:  0.9,
		Calibration:       Calibration{On: true},
		ScaleInOnForecast: true,
		Reactive: Reactive{
			ScaleOutUtilisation: 0.85,
			ScaleOutFor:         5 * time.Minute,
			ScaleOutQueue:       50,
			ScaleOutQueueFor:    2 * time.Minute,
			ScaleInUtilisation:  0.30,
			ScaleInFor:          20 * time.Minute,
			ScaleOutStep:        1,
			ScaleInStep:         1,
			MaxStep:             4,
			ScaleOutCooldown:    5 * time.Minute,
			ScaleInCooldown:     15 * time.Minute,
			SLORule:             true,
			ReturnToPlanAfter:   2 * time.Minute,
		},
		Gating: Gating{MinSeasons: 2, Tolerance: 1.5, Window: 7 * 24 * time.Hour},
	}
}

// ForecastLevel is the central interval level whose upper bound is the
// ForecastQuantile: 2q−1.
func (c Config) ForecastLevel() float64 { return 2*c.ForecastQuantile - 1 }

// rps returns the instance throughput used for utilisation arithmetic.
func (f Fleet) rps() float64 {
	if f.RPSPerInstance > 0 {
		return f.RPSPerInstance
	}
	if f.ServiceTime > 0 {
		return float64(max(f.Slots, 1)) / f.ServiceTime.Seconds()
	}
	return 0
}

// RPS returns the requests/s one instance serves: RPSPerInstance, or
// Slots/ServiceTime when only a service time is given.
func (f Fleet) RPS() float64 { return f.rps() }

// MeanServiceTime is the mean time one request occupies a slot:
// ServiceTime, or Slots/RPSPerInstance when that is not set (0: neither).
func (f Fleet) MeanServiceTime() time.Duration {
	if f.ServiceTime > 0 {
		return f.ServiceTime
	}
	if f.RPSPerInstance > 0 {
		return time.Duration(float64(max(f.Slots, 1)) / f.RPSPerInstance * float64(time.Second))
	}
	return 0
}

// Validate reports every setting out of its range (CheckRanges, the one
// table the configuration file checks too) and every combination that
// cannot work, each naming its YAML key, e.g. "planner:
// reactive.scale_in_utilisation 0.9 is out of range: want [0,
// reactive.scale_out_utilisation 0.85)".
func (c Config) Validate() error {
	errs := []error{RangeErrors(c.CheckRanges)}
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	f := c.Fleet
	switch c.Sizing {
	case SizingUtilisation:
		if f.rps() <= 0 {
			bad("rps_per_instance must be > 0 (or service_time set) for %s sizing", c.Sizing)
		}
	case SizingErlangC:
		if f.ServiceTime <= 0 {
			bad("service_time must be > 0 for %s sizing", c.Sizing)
		}
	default:
		bad("sizing %q: want %q or %q", c.Sizing, SizingUtilisation, SizingErlangC)
	}
	if err := CheckCurrency(c.Prices.Currency); err != nil {
		bad("prices.currency: %v", err)
	}
	if fb := f.Spot.Fallback; fb != "" { // unset in code: on demand
		if err := CheckSpotFallback(fb); err != nil {
			bad("spot.fallback: %v", err)
		}
	}
	errs = append(errs, c.Calibration.validate(), c.Bounds.validate(), c.Reactive.validate())
	if c.Gating.Window < 0 {
		bad("gate.window %v must not be negative", c.Gating.Window)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("planner: %w", err)
	}
	return nil
}

func (c Calibration) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !(c.Target == 0 || (c.Target > 0 && c.Target < 1)) {
		bad("Calibration.Target %v must be in (0, 1), or 0 for the SLO's quantile", c.Target)
	}
	if !(c.Rate >= 0 && c.Rate <= 1) {
		bad("Calibration.Rate %v must be in [0, 1] (0: the default)", c.Rate)
	}
	if !(c.Carry <= 20) {
		bad("Calibration.Carry %v must be at most 20 (0: the default; negative: none)", c.Carry)
	}
	if lo, hi := c.Range(); !(lo >= 0.5 && lo <= hi && hi < 1) {
		bad("Calibration.MinQuantile %v and MaxQuantile %v must satisfy 0.5 <= min <= max < 1", lo, hi)
	}
	return errors.Join(errs...)
}

func (b Bounds) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if b.ErrorWindow < 0 || b.PeakWindow < 0 {
		bad("Bounds.ErrorWindow %v and Bounds.PeakWindow %v must not be negative", b.ErrorWindow, b.PeakWindow)
	}
	if b.SlotSpread > 12 {
		bad("Bounds.SlotSpread %d must be at most 12", b.SlotSpread)
	}
	if b.MinErrors < 0 {
		bad("Bounds.MinErrors %d must not be negative", b.MinErrors)
	}
	if !(b.WarmUpWidening == 0 || (b.WarmUpWidening >= 1 && b.WarmUpWidening <= 100)) {
		bad("Bounds.WarmUpWidening %v must be in [1, 100] (0: the default)", b.WarmUpWidening)
	}
	if !(b.PeakHeadroom <= 0 || (b.PeakHeadroom >= 1 && b.PeakHeadroom <= 100)) {
		bad("Bounds.PeakHeadroom %v must be in [1, 100] (0: the default; negative: no cap)", b.PeakHeadroom)
	}
	return errors.Join(errs...)
}

// CalibrationTarget is the share of requests the calibrated plan aims to
// serve within the SLO.
func (c Config) CalibrationTarget() float64 { return orDefault(c.Calibration.Target, c.SLO.Quantile) }

// validate checks the surge rule's settings, which no file sets (the
// others are CheckRanges').
func (r Reactive) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !(r.PanicThreshold == 0 || (r.PanicThreshold >= 1.1 && r.PanicThreshold <= 100)) {
		bad("reactive.panic_threshold %v must be 0 (off) or in [1.1, 100]", r.PanicThreshold)
	}
	if !(r.PanicHeadroom == 0 || (r.PanicHeadroom >= 1 && r.PanicHeadroom <= 10)) {
		bad("reactive.panic_headroom %v must be in [1, 10] (0: the default, 2)", r.PanicHeadroom)
	}
	return errors.Join(errs...)
}
