package tune

import (
	"testing"
	"time"
)

// Validate words an option out of its range with its key under tune: and
// the range its table (CheckRanges) gives, a bound set by another option
// named with it.
func TestValidateNamesTheRange(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Window = 3 * day }, "tune.window: 72h0m0s is out of range: want 168h0m0s to 672h0m0s"},
		{func(o *Options) { o.MinHistory = 20 * day }, "tune.min_history: 480h0m0s is out of range: want 24h0m0s to tune.window 336h0m0s"},
		{func(o *Options) { o.HalfLife = time.Hour }, "tune.half_life: 1h0m0s is out of range: want 24h0m0s to tune.window 336h0m0s, or negative for none"},
		{func(o *Options) { o.CostHalfLife = time.Minute }, "tune.cost_half_life: 1m0s is out of range: want 1h0m0s to tune.window 336h0m0s, or negative for none"},
		{func(o *Options) { o.Margin = 1 }, "tune.margin: 1 is out of range: want [0, 0.9]"},
		{func(o *Options) { o.Trim = -1 }, "tune.trim: -1 is out of range: want 0 to 3"},
		{func(o *Options) { o.GuardBurn = 0.5 }, "tune.guard_burn: 0.5 is out of range: want [1, 100]"},
		// The first option out of range is named.
		{func(o *Options) { o.Slack, o.Hysteresis = 3, 0.6 }, "tune.slack: 3 is out of range: want [0, 2]"},
	} {
		o := Options{}.WithDefaults()
		tc.edit(&o)
		if err := o.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
}
