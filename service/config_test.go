package service

import (
	"os"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	good := `
pools:
  - name: p
    backend: dryrun
    max: 10
    demand: {measurement: requests_rps}
    rps_per_instance: 5
`
	tests := []struct {
		name    string
		yaml    string
		wantErr string // substring; "" means valid
	}{
		{"minimal", good, ""},
		{"unknown field names its line", good + "    rps_per_gpu: 3\n", "line 8: field rps_per_gpu not found"},
		{"no pools", "interval: 1m\n", "pools: at least one pool is required"},
		{"missing rps", strings.Replace(good, "    rps_per_instance: 5\n", "", 1), "rps_per_instance must be > 0"},
		{"bad window", good + "    windows: \"someday 09:00-10:00 at least 2\"\n", "windows"},
		{"bad time zone", good + "    windows: \"weekdays 09:00-10:00 at least 2\"\n    time_zone: Mars/Olympus\n", "time_zone"},
		{"max below min", strings.Replace(good, "max: 10", "max: 10\n    min: 11", 1), "max 10 must be at least 1 and at least min 11"},
		{"quantile out of range", good + "    slo_quantile: 0.3\n", "slo_quantile 0.3 must be in [0.5, 1)"},
		{"utilisation above 1", good + "    target_utilisation: 1.5\n", "target_utilisation 1.5 must be in (0, 1]"},
		{"negative boot delay", good + "    boot_delay: -1m\n", "boot_delay -1m0s must not be negative"},
		{"unknown aggregate", good + "    queue: {measurement: q, aggregate: median}\n", "queue.aggregate: \"median\" is not one of"},
		{"utilisation without measurement", good + "    utilisation: {match: {pool: p}}\n", "utilisation.measurement: is required"},
		{"negative forecast step", good + "    forecast: {step: -30m}\n", "forecast.step: must not be negative"},
		{"refit off the step grid", good + "    forecast: {step: 30m, refit_every: 45m}\n", "forecast.refit_every 45m0s must be a multiple of forecast.step 30m0s"},
		{"duplicate pool", good + strings.Replace(good, "pools:\n", "", 1), "defined twice"},
		{"bad period", good + "    forecast: {step: 30m, periods: [45m]}\n", "forecast.periods[0]"},
		{"negative interval", "interval: -1m\n" + good, "interval: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml), "test.yaml")
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("want error containing %q, got none", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("error %q does not contain %q", err, tt.wantErr)
			case err != nil && !strings.HasPrefix(err.Error(), "test.yaml: "):
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
}

// The documented example must stay valid.
func TestExampleConfigIsValid(t *testing.T) {
	data, err := os.ReadFile("../docs/forecaster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig(data, "docs/forecaster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Pools[0].Demand; d.Measurement != DefaultDemandMeasurement || d.Match["pool"] != "sd-pool" {
		t.Errorf("demand = %+v, want the collector's request rate of the pool", d)
	}
	if got := cfg.Pools[0].Settings().Step.String(); got != "30m0s" {
		t.Errorf("forecast.step = %s, want 30m0s", got)
	}
	plan, err := cfg.Pools[0].Planner()
	if err != nil || len(plan.Windows) != 1 {
		t.Errorf("windows = %v, err %v; want one window", plan.Windows, err)
	}
}

func TestDemandDefaultsToTheCollectorsSeries(t *testing.T) {
	cfg, err := ParseConfig([]byte("pools:\n  - {name: sd, backend: dryrun, max: 4, rps_per_instance: 2}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Pools[0].Demand; d.Measurement != "service_request_rate" || d.Match["pool"] != "sd" {
		t.Errorf("demand = %+v, want service_request_rate{pool=sd}", d)
	}
}
