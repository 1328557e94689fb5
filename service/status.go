package service

import (
	"math"
	"strconv"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/tune"
)

// Outcomes of a decision, in PoolStatus.Outcome and the outcome label of
// prewarm_pool_decisions_total.
const (
	OutcomeApplied     = "applied"      // the change was made
	OutcomeUnchanged   = "unchanged"    // the pool already had the desired size
	OutcomeLimited     = "limited"      // made, but max_step cut it
	OutcomeRateLimited = "rate_limited" // min_interval is not over: nothing applied yet
	OutcomeNotApplied  = "not_applied"  // forecast-only or paused: computed, not applied
	OutcomeFailed      = "failed"       // the decision or its application failed
	OutcomeStandby     = "standby"      // active, but another replica owns the pool: computed, not applied
)

// PoolStatus is what /api/v1/pools reports about a pool: what the policy
// wished, what was (or, forecast-only, would be) applied within the
// actuator's limits, the last change made, and why.
type PoolStatus struct {
	Name    string `json:"name"`
	Backend string `json:"backend"`
	// Limits are the pool's min, max, max_step and min_interval (max is
	// also the static fleet the cost is compared with).
	planner.Limits
	// Mode is the mode in force: forecast-only, active or paused.
	// ModeSource is "config" (the file) or "api" (set at ModeSetAt).
	Mode       poolspec.Mode `json:"mode"`
	ModeSource string        `json:"mode_source"`
	ModeSetAt  time.Time     `json:"mode_set_at,omitzero"`
	// At is the time of the last decision.
	At time.Time `json:"at"`
	// DecidedIn is how long the last decision took.
	DecidedIn Duration `json:"decided_in"`
	// DecidingSince is set while a decision is in flight past its tick.
	DecidingSince time.Time `json:"deciding_since,omitzero"`

	// Current is the instances the back-end reports (booting or ready);
	// CurrentKnown is false for a back-end that cannot report them.
	Current      int  `json:"current"`
	CurrentKnown bool `json:"current_known"`
	// Ready of them serve and Booting do not yet; ReadyKnown is false for
	// a back-end that cannot tell them apart (all count as ready).
	Ready      int  `json:"ready"`
	Booting    int  `json:"booting"`
	ReadyKnown bool `json:"ready_known"`
	// CapacityShortSince is when Desired began to exceed Ready without a
	// break (zero when it does not); CapacityShortSeconds how long that is
	// at the last decision.
	CapacityShortSince   time.Time `json:"capacity_short_since,omitzero"`
	CapacityShortSeconds float64   `json:"capacity_short_seconds"`
	// Wished is what the policy wants now, before the actuator's limits;
	// Desired what was (or would be) applied after min, max, max_step and
	// min_interval; LimitedBy the limit that made them differ.
	Wished    int    `json:"wished"`
	Desired   int    `json:"desired"`
	LimitedBy string `json:"limited_by,omitempty"`
	// Warm is, with a warm tier (WarmStart, the pool's warm_start), how
	// many stopped instances the decision keeps ready to start beside
	// Desired.
	Warm      int           `json:"warm,omitempty"`
	WarmStart time.Duration `json:"warm_start,omitempty"`
	// Spot is the pool's spot tier (its spot: block), absent without one.
	Spot *planner.Spot `json:"spot,omitempty"`
	// Tiers split the decision's Desired and Warm into the tiers that buy
	// them: the reserved base (prices.reserved_instances), on demand, on
	// spot and warm (planner.Config.Tiers, as the schedule's steps).
	Tiers planner.Tiers `json:"tiers"`
	// Outcome is the decision's outcome (applied, unchanged, limited,
	// rate_limited, not_applied, failed); NextChangeAt, when rate limited,
	// is when min_interval allows the next change.
	Outcome      string    `json:"outcome"`
	NextChangeAt time.Time `json:"next_change_at,omitzero"`
	// Applied is the last change made to the pool (also before a restart).
	Applied *actuator.Change `json:"applied,omitempty"`
	// Reason explains Wished: the term that won, and any hold.
	Reason string `json:"reason"`
	// DemandRPS is the demand of the last interval, null when it could
	// not be read (the pool was held).
	DemandRPS Number `json:"demand_rps"`
	// Planned is the trusted forecast plan's step now (null when the pool
	// follows the reactive rules alone); Forecast the demand forecast for
	// the step in progress.
	Planned  Number         `json:"planned"`
	Forecast ForecastBounds `json:"forecast_rps"`

	// Gate is the level the last decision followed (model, profile or
	// reactive: also once a plan has run out without a fresh refit).
	Gate       string    `json:"gate"`
	GateSince  time.Time `json:"gate_since,omitzero"`
	GateReason string    `json:"gate_reason"`
	// InCharge is the rule that sizes the pool (control.Charge): a
	// "cold-start" until the model has the history the gate needs and its
	// first forecasts are scored (the reactive rules and the peak seen so
	// far are then in charge, and the forecast is an unchecked guess),
	// else "model", "profile" or "reactive"; InChargeReason says so in a
	// sentence, with until when.
	InCharge       string `json:"in_charge"`
	InChargeReason string `json:"in_charge_reason"`
	// Model is the forecasting method that ran at the last refit;
	// FallbackReason, when it is not the one asked for, says why.
	Model          string               `json:"model"`
	FallbackReason string               `json:"fallback_reason,omitempty"`
	LastRefit      time.Time            `json:"last_refit,omitzero"`
	NextRefit      time.Time            `json:"next_refit,omitzero"`
	Plan           []planner.TieredStep `json:"plan"`
	// StartTimes are the fleet's start times as the decisions saw them,
	// beside the configured boot_delay; absent before the first start.
	StartTimes *StartTimes `json:"start_times,omitempty"`
	// ForecastMASE is the model's mean absolute error over the last day
	// divided by seasonal naive's (below 1: it beats it); null until a
	// day's forecasts can be scored.
	ForecastMASE Number `json:"forecast_mase"`
	// Tuning is the candidate policy the pool follows, why it was
	// chosen, the live burn of the SLO's miss budget, and every
	// candidate's replayed cost and SLO over the tuning window.
	Tuning tune.Choice `json:"tuning"`
	// Cost is what the pool has cost since the service started.
	Cost Cost `json:"cost"`
	// Alerts are the conditions of deploy/prometheus/rules.yml that hold
	// for the pool now, firing once they have held for the rule's `for`.
	Alerts []Alert `json:"alerts"`
	// Error is the last decision's failure, secrets masked; "" after a
	// decision that succeeded.
	Error string `json:"error,omitempty"`
	// FailingSince is when decisions began to fail without a success;
	// LastSuccess is the last decision that succeeded.
	FailingSince time.Time `json:"failing_since,omitzero"`
	LastSuccess  time.Time `json:"last_success,omitzero"`
	// Election is the pool's owner among the replicas; absent when
	// election is off.
	Election *ElectionStatus `json:"election,omitempty"`
}

// setSpot shows the pool's spot tier of plan (none: nil). s.mu held (or
// the pool not yet shared).
func (st *PoolStatus) setSpot(plan planner.Config) {
	st.Spot = nil
	if spot := plan.Fleet.Spot.Normal(); spot.Tier() {
		st.Spot = &spot
	}
}

// ForecastBounds are a forecast's mean and the bounds of its band,
// requests/s; null when there is no forecast for the step.
type ForecastBounds struct {
	Mean  Number `json:"mean"`
	Lower Number `json:"lower"`
	Upper Number `json:"upper"`
}

// Cost is a pool's spend since Since, from the capacity read at each
// decision (booting instances are billed), beside a static fleet at the
// pool's max over the same time.
type Cost struct {
	Since          time.Time `json:"since,omitzero"`
	GPUHours       float64   `json:"gpu_hours"`
	Cost           float64   `json:"cost"`
	StaticGPUHours float64   `json:"static_gpu_hours"`
	StaticCost     float64   `json:"static_cost"`
	// PricePerHour is the on-demand price per instance-hour. Cost prices
	// the reserved base, spot and the warm tier's stopped instances at
	// their own prices (planner.Config.CostPerHour) where the pool has
	// them: ByTier says so.
	PricePerHour float64 `json:"price_per_hour"`
	ByTier       bool    `json:"priced_by_tier,omitempty"`
}

// Alert is one alert condition holding for a pool (the alert rules of
// deploy/prometheus/rules.yml, evaluated by the service on its own state).
type Alert struct {
	// Name is the rule's alert name, e.g. PrewarmCapacityShort.
	Name     string `json:"name"`
	Severity string `json:"severity"`
	// Since is when the condition began; Firing says it has held for the
	// rule's `for` (otherwise it is pending).
	Since   time.Time `json:"since"`
	Firing  bool      `json:"firing"`
	Summary string    `json:"summary"`
}

// Number is a float64 that encodes NaN and infinities as JSON null (JSON
// has no NaN), and decodes null as NaN.
type Number float64

// NaN is the Number for "unknown".
func NaN() Number { return Number(math.NaN()) }

// Known reports whether n is a finite value.
func (n Number) Known() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// MarshalJSON implements json.Marshaler.
func (n Number) MarshalJSON() ([]byte, error) {
	if !n.Known() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = NaN()
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*n = Number(v)
	return err
}

// Duration is a time.Duration that encodes as text ("1.2s") in JSON.
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}
