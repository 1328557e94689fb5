package planner

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCombine(t *testing.T) {
	forecast := Step{Desired: 6, Reason: "forecast p99 ..."}
	reactive := Step{Desired: 7, Reason: "reactive: util 91% > 85% for 5m, +1"}
	floor := Step{Desired: 8, Reason: "schedule weekdays 09:45-12:00 at least 8"}
	none := Step{}
	cases := []struct {
		name   string
		cfg    func(*Config)
		terms  []Step
		want   int
		reason string
	}{
		{"reactive beats the forecast", nil, []Step{forecast, reactive, none}, 7, "reactive: util"},
		{"the schedule floor beats both", nil, []Step{forecast, reactive, floor}, 8, "schedule weekdays"},
		{"a tie keeps the earlier term", nil, []Step{{Desired: 7, Reason: "forecast"}, reactive}, 7, "forecast"},
		{"an empty floor is ignored", nil, []Step{{Desired: 0, Reason: "reactive: hold 0"}, none}, 1, "min instances 1 (reactive: hold 0)"},
		{"max instances caps the winner", func(c *Config) { c.Fleet.MaxInstances = 5 }, []Step{forecast, reactive}, 5, "max instances 5 (reactive"},
		{"no terms at all", nil, nil, 1, "min instances 1 (no term)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig()
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			got := c.Combine(t0, tc.terms...)
			if got.Desired != tc.want || !strings.HasPrefix(got.Reason, tc.reason) || !got.At.Equal(t0) {
				t.Errorf("Combine = %d %q, want %d %q", got.Desired, got.Reason, tc.want, tc.reason)
			}
		})
	}
}

func TestGate(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name   string
		in     GateInput
		level  string
		reason string
	}{
		{"no history: reactive only", GateInput{0, 24, nan, nan, nan, 0}, GateReactive, "history 0 steps < 2 seasons of 24; history 0 steps < 1 season of 24"},
		{"one season: seasonal profile", GateInput{30, 24, nan, nan, nan, 0}, GateProfile, "stepped back to seasonal profile: history 30 steps < 2 seasons"},
		{"two seasons, nothing measured yet: model", GateInput{48, 24, nan, nan, nan, 0}, GateModel, "model trusted"},
		{"model as good as naive: model", GateInput{500, 24, 10, 12, 10, 0}, GateModel, "model trusted: MAE 10 at most seasonal naive's 10"},
		{"model within tolerance: model", GateInput{500, 24, 14, 12, 10, 0}, GateModel, "model trusted"},
		{"model worse than naive: profile", GateInput{500, 24, 16, 9, 10, 0}, GateProfile, "model MAE 16 above 1.5× seasonal naive's 10"},
		{"both worse than naive: reactive", GateInput{500, 24, 16, 17, 10, 0}, GateReactive, "forecast stepped back, reactive only: model MAE 16 above 1.5× seasonal naive's 10; profile MAE 17 above 1.5× seasonal naive's 10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig() // Tolerance 1.5
			got := c.Gate(tc.in)
			if got.Level != tc.level || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("Gate = %s %q, want %s ~%q", got.Level, got.Reason, tc.level, tc.reason)
			}
		})
	}
}

func TestGateStrictTolerance(t *testing.T) {
	c := planConfig()
	c.Gating.Tolerance = 1
	if got := c.Gate(GateInput{500, 24, 10.5, 9, 10, 0}); got.Level != GateProfile {
		t.Errorf("with Tolerance 1 a model 5%% worse than naive should step back, got %s", got.Level)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"defaults need a throughput", func(c *Config) { c.Fleet.RPSPerInstance = 0 }, "rps_per_instance must be > 0"},
		{"max below min", func(c *Config) { c.Fleet.MinInstances = 5; c.Fleet.MaxInstances = 3 }, "max 3 is out of range: want 5 to 100000"},
		{"unknown sizing", func(c *Config) { c.Sizing = "magic" }, `sizing "magic"`},
		{"erlang-c needs a service time", func(c *Config) { c.Sizing = SizingErlangC }, "service_time must be > 0 for erlang-c"},
		{"negative price", func(c *Config) { c.Prices.SpotPerHour = -1 }, "prices.spot_per_hour -1"},
		{"NaN price", func(c *Config) { c.Prices.OnDemandPerHour = math.NaN() }, "prices.on_demand_per_hour NaN"},
		{"quantile out of range", func(c *Config) { c.ForecastQuantile = 1 }, "forecast_quantile 1 is out of range: want [0.5, 0.9999]"},
		{"scale-in above scale-out", func(c *Config) { c.Reactive.ScaleInUtilisation = 0.9 }, "reactive.scale_in_utilisation 0.9"},
		{"negative cooldown", func(c *Config) { c.Reactive.ScaleInCooldown = -time.Second }, "reactive.scale_in_cooldown -1s"},
		{"max step below step", func(c *Config) { c.Reactive.ScaleOutStep = 2; c.Reactive.MaxStep = 1 }, "reactive.max_step 1"},
		{"tolerance below one", func(c *Config) { c.Gating.Tolerance = 0.5 }, "gate.tolerance 0.5"},
		{"SLO quantile", func(c *Config) { c.SLO.Quantile = 0 }, "slo_quantile 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := planConfig()
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want ~%q", err, tc.want)
			}
		})
	}
	if err := planConfig().Validate(); err != nil {
		t.Errorf("a valid config failed: %v", err)
	}
}

func TestUsageOf(t *testing.T) {
	p := Prices{OnDemandPerHour: 2.5, ReservedPerHour: 1.5, ReservedInstances: 2}
	s := Schedule{{At: at("09:00"), Desired: 5}, {At: at("10:00"), Desired: 1}, {At: at("10:30"), Desired: 3}}
	u := p.UsageOf(s, at("11:00"))
	// GPU-hours 5·1 + 1·0.5 + 3·0.5 = 7; reserved 2·2 h = 4 h at 1.5;
	// burst 3·1 + 0 + 1·0.5 = 3.5 h at 2.5.
	want := Usage{GPUHours: 7, ReservedHours: 4, BurstHours: 3.5, ReservedCost: 6, BurstCost: 8.75, Cost: 14.75}
	if math.Abs(u.GPUHours-want.GPUHours)+math.Abs(u.ReservedHours-want.ReservedHours)+
		math.Abs(u.BurstHours-want.BurstHours)+math.Abs(u.Cost-want.Cost) > 1e-9 {
		t.Errorf("UsageOf = %+v, want %+v", u, want)
	}
}

// With the forecast step known, a short history is said in time, with
// what the model needs and how to get it.
func TestGateSaysHowLongTheHistoryMustBe(t *testing.T) {
	c := DefaultConfig()
	nan := math.NaN()
	cases := []struct {
		in   GateInput
		want string
	}{
		{GateInput{HistorySteps: 2, Season: 48, Step: 30 * time.Minute, ModelError: nan, ProfileError: nan, NaiveError: nan},
			"history 1h < the 2d the model needs (2 seasons of 1d); it is used as soon as the store holds it, at once after 'forecaster import'; the seasonal profile needs one season (1d)"},
		{GateInput{HistorySteps: 60, Season: 48, Step: 30 * time.Minute, ModelError: nan, ProfileError: nan, NaiveError: nan},
			"stepped back to seasonal profile: history 30h < the 2d the model needs"},
	}
	for _, tc := range cases {
		if got := c.Gate(tc.in); !strings.Contains(got.Reason, tc.want) {
			t.Errorf("Gate(%+v) = %q, want it to contain %q", tc.in, got.Reason, tc.want)
		}
	}
}

func TestSpanText(t *testing.T) {
	for d, want := range map[time.Duration]string{48 * time.Hour: "2d", 36 * time.Hour: "36h", 30 * time.Minute: "30m", 90 * time.Minute: "1h30m"} {
		if got := SpanText(d); got != want {
			t.Errorf("SpanText(%v) = %q, want %q", d, got, want)
		}
	}
}
