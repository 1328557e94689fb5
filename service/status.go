package service

import (
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/spec"
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
)

// PoolStatus is what /api/v1/pools reports about a pool: what the policy
// wished, what was (or, forecast-only, would be) applied within the
// actuator's limits, the last change made, and why.
type PoolStatus struct {
	Name    string `json:"name"`
	Backend string `json:"backend"`
	// Mode is the mode in force: forecast-only, active or paused.
	// ModeSource is "config" (the file) or "api" (set at ModeSetAt).
	Mode       spec.Mode `json:"mode"`
	ModeSource string    `json:"mode_source"`
	ModeSetAt  time.Time `json:"mode_set_at,omitzero"`
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
	// Wished is what the policy wants now, before the actuator's limits;
	// Desired what was (or would be) applied after min, max, max_step and
	// min_interval; LimitedBy the limit that made them differ.
	Wished    int    `json:"wished"`
	Desired   int    `json:"desired"`
	LimitedBy string `json:"limited_by,omitempty"`
	// Outcome is the decision's outcome (applied, unchanged, limited,
	// rate_limited, not_applied, failed); NextChangeAt, when rate limited,
	// is when min_interval allows the next change.
	Outcome      string    `json:"outcome"`
	NextChangeAt time.Time `json:"next_change_at,omitzero"`
	// Applied is the last change made to the pool (also before a restart).
	Applied *actuator.Change `json:"applied,omitempty"`
	// Reason explains Wished: the term that won, and any hold.
	Reason    string  `json:"reason"`
	DemandRPS float64 `json:"demand_rps"`

	// Gate is the level the last decision followed (model, profile or
	// reactive: also once a plan has run out without a fresh refit).
	Gate       string           `json:"gate"`
	GateReason string           `json:"gate_reason"`
	Model      string           `json:"model"`
	LastRefit  time.Time        `json:"last_refit,omitzero"`
	NextRefit  time.Time        `json:"next_refit,omitzero"`
	Plan       planner.Schedule `json:"plan"`
	// Error is the last decision's failure, secrets masked; "" after a
	// decision that succeeded.
	Error string `json:"error,omitempty"`
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
