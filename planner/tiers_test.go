package planner

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// A step's running instances split into reserved, on demand and spot that
// add up to what it desires; the warm tier stands beside them.
func TestTiers(t *testing.T) {
	tests := []struct {
		name          string
		desired, warm int
		reserved      int
		spot          Spot
		want          Tiers
	}{
		{"all on demand", 7, 0, 0, Spot{}, Tiers{OnDemand: 7}},
		{"reserved base first", 7, 0, 3, Spot{}, Tiers{Reserved: 3, OnDemand: 4}},
		{"fewer than the reserved base", 2, 0, 3, Spot{}, Tiers{Reserved: 2}},
		{"spot above the on-demand base", 10, 0, 2, Spot{Share: 0.5, BaseOnDemand: 2}, Tiers{Reserved: 2, OnDemand: 4, Spot: 4}},
		{"spot rounds to the nearest instance", 7, 0, 0, Spot{Share: 0.5, BaseOnDemand: 2}, Tiers{OnDemand: 4, Spot: 3}},
		{"all above the base on spot", 6, 0, 1, Spot{Share: 1, BaseOnDemand: 1}, Tiers{Reserved: 1, Spot: 5}},
		{"nothing above the base", 2, 0, 0, Spot{Share: 1, BaseOnDemand: 4}, Tiers{OnDemand: 2}},
		{"spot displaces a reserved base larger than the on-demand base", 10, 0, 8, Spot{Share: 0.5}, Tiers{Reserved: 5, Spot: 5}},
		{"warm beside the running", 4, 3, 1, Spot{Share: 0.5}, Tiers{Reserved: 1, OnDemand: 1, Spot: 2, Warm: 3}},
		{"none desired", 0, 2, 3, Spot{Share: 1}, Tiers{Warm: 2}},
		{"negative counts as none", -3, -1, 2, Spot{Share: 1}, Tiers{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Prices.ReservedInstances, c.Fleet.Spot = tt.reserved, tt.spot
			got := c.Tiers(tt.desired, tt.warm)
			if got != tt.want {
				t.Errorf("Tiers(%d, %d) = %+v, want %+v", tt.desired, tt.warm, got, tt.want)
			}
			if got.Running() != max(tt.desired, 0) {
				t.Errorf("running tiers add up to %d, want the %d desired", got.Running(), tt.desired)
			}
			if want := tt.spot.OnSpot(max(tt.desired, 0)); got.Spot != want {
				t.Errorf("spot %d, want Spot.OnSpot's %d", got.Spot, want)
			}
		})
	}
}

// WithTiers fills every step's tiers from its own Desired and Warm and
// leaves the schedule it was given alone; the tiers are in the step's
// JSON beside the step's own fields, and absent from the plan's steps.
func TestScheduleWithTiers(t *testing.T) {
	c := DefaultConfig()
	c.Prices.ReservedInstances, c.Fleet.Spot = 2, Spot{Share: 0.5, BaseOnDemand: 2}
	at := time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
	plan := Schedule{{At: at, Desired: 2, Warm: 1}, {At: at.Add(time.Hour), Desired: 12, Warm: 3}}
	got := plan.WithTiers(c)
	want := []Tiers{{Reserved: 2, Warm: 1}, {Reserved: 2, OnDemand: 5, Spot: 5, Warm: 3}}
	for i := range plan {
		if got[i].Tiers != want[i] || got[i].Step != plan[i] {
			t.Errorf("step %d: %+v with tiers %+v, want %+v with %+v", i, got[i].Step, got[i].Tiers, plan[i], want[i])
		}
	}
	if Schedule(nil).WithTiers(c) != nil {
		t.Error("a nil schedule gained steps")
	}
	before, _ := json.Marshal(plan[1])
	after, _ := json.Marshal(got[1])
	if strings.Contains(string(before), "tiers") {
		t.Errorf("a plan's step shows tiers: %s", before)
	}
	if want := strings.TrimSuffix(string(before), "}") + `,"tiers":{"reserved":2,"on_demand":5,"spot":5,"warm":3}}`; string(after) != want {
		t.Errorf("a step's JSON with its tiers is %s, want the step's own fields and its tiers: %s", after, want)
	}
}

// The spot block's settings are checked by the one range table and by
// Validate, each problem naming its YAML key.
func TestSpotSettings(t *testing.T) {
	tests := []struct {
		name    string
		spot    Spot
		wantErr string // "" for valid
	}{
		{"default", DefaultConfig().Fleet.Spot, ""},
		{"unset in code", Spot{}, ""},
		{"a tier", Spot{Share: 0.7, BaseOnDemand: 2, Fallback: SpotFallbackNone}, ""},
		{"all on spot up to max", Spot{Share: 1, BaseOnDemand: 100}, ""},
		{"share above 1", Spot{Share: 1.5}, "spot.share 1.5 is out of range: want [0, 1]"},
		{"negative share", Spot{Share: -0.1}, "spot.share -0.1 is out of range"},
		{"base above max", Spot{Share: 0.5, BaseOnDemand: 101}, "spot.base_on_demand 101 is out of range: want 0 to max 100"},
		{"negative base", Spot{BaseOnDemand: -1}, "spot.base_on_demand -1 is out of range"},
		{"unknown fallback", Spot{Share: 0.5, Fallback: "reserved"}, `spot.fallback: "reserved" is not a fallback: want on_demand or none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Fleet.RPSPerInstance, c.Fleet.Spot = 5, tt.spot
			err := c.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate: %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate: %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The default fallback replaces lost spot capacity on demand; Normal
// spells it out so that an unset and a default fallback compare equal.
func TestSpotFallback(t *testing.T) {
	tests := []struct {
		spot     Spot
		onDemand bool
		normal   string
	}{
		{Spot{}, true, SpotFallbackOnDemand},
		{Spot{Fallback: SpotFallbackOnDemand}, true, SpotFallbackOnDemand},
		{Spot{Fallback: SpotFallbackNone}, false, SpotFallbackNone},
	}
	for _, tt := range tests {
		if got := tt.spot.OnDemandFallback(); got != tt.onDemand {
			t.Errorf("%+v: OnDemandFallback %v, want %v", tt.spot, got, tt.onDemand)
		}
		if got := tt.spot.Normal().Fallback; got != tt.normal {
			t.Errorf("%+v: Normal().Fallback %q, want %q", tt.spot, got, tt.normal)
		}
	}
	if DefaultConfig().Fleet.Spot.Fallback != SpotFallbackOnDemand || DefaultConfig().Fleet.Spot.Tier() {
		t.Errorf("default spot %+v, want no tier and the on_demand fallback", DefaultConfig().Fleet.Spot)
	}
}

// An hour of a fleet costs its committed reserved base whether it runs or
// not, what runs above it on demand and on spot at their prices, and the
// warm tier's stopped instances at the stopped price; without tiers it is
// the running instances at the on-demand price. Prices: on demand 2.5,
// reserved 1.6, spot 1.0, stopped 0.075.
func TestCostPerHour(t *testing.T) {
	tests := []struct {
		name             string
		running, stopped int
		reserved         int
		spot             Spot
		want             float64
	}{
		{"all on demand", 7, 0, 0, Spot{}, 7 * 2.5},
		{"the reserved base and the rest on demand", 7, 0, 3, Spot{}, 3*1.6 + 4*2.5},
		{"a reserved base paid while idle", 1, 0, 3, Spot{}, 3 * 1.6},
		{"spot above the on-demand base", 10, 0, 2, Spot{Share: 0.5, BaseOnDemand: 2}, 2*1.6 + 4*2.5 + 4*1.0},
		{"stopped instances beside the running", 4, 3, 0, Spot{}, 4*2.5 + 3*0.075},
		{"nothing running, nothing committed", 0, 0, 0, Spot{Share: 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Prices.ReservedInstances, c.Fleet.Spot = tt.reserved, tt.spot
			if got := c.CostPerHour(tt.running, tt.stopped); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("CostPerHour(%d running, %d stopped) = %v, want %v", tt.running, tt.stopped, got, tt.want)
			}
		})
	}
}

// Spot.Check names the first setting out of its range by its key; an
// unset fallback is on demand.
func TestSpotCheck(t *testing.T) {
	tests := []struct {
		spot Spot
		want string // "" : accepted
	}{
		{Spot{Share: 0.5, BaseOnDemand: 4}, ""},
		{Spot{Share: 1, BaseOnDemand: 10, Fallback: SpotFallbackNone}, ""},
		{Spot{Share: -0.1}, "spot.share -0.1 is outside [0, 1]"},
		{Spot{Share: math.NaN()}, "spot.share NaN is outside [0, 1]"},
		{Spot{Share: 0.5, BaseOnDemand: 11}, "spot.base_on_demand 11 is outside [0, max 10]"},
		{Spot{Share: 0.5, BaseOnDemand: -1}, "spot.base_on_demand -1 is outside [0, max 10]"},
		{Spot{Share: 0.5, Fallback: "reserved"}, `spot.fallback: "reserved" is not a fallback`},
	}
	for _, tt := range tests {
		err := tt.spot.Check(10)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Check(%+v) = %v, want %q", tt.spot, err, tt.want)
		}
	}
}
