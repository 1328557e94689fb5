package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/poolspec"
)

// poolYAML is a pool whose every setting the backtest reads differs from
// the flags' defaults.
const poolYAML = `interval: 1m
pools:
  - name: sd
    backend: simulated
    min: 2
    max: 40
    max_step: 3
    min_interval: 7m
    demand:
      measurement: service_request_rate
      aggregate: mean
    sizing: erlang-c
    service_time: 100ms
    slots: 2
    target_utilisation: 0.7
    boot_delay: 8m
    slo_latency: 5s
    slo_quantile: 0.99
    forecast_quantile: 0.9
    scale_in_on_forecast: false
    time_zone: Asia/Shanghai
    windows: |
      weekdays 09:00-10:00 at least 12
    prices:
      on_demand_per_hour: 3.2
      reserved_per_hour: 2.1
      reserved_instances: 3
      spot_per_hour: 1.1
    reactive:
      scale_out_utilisation: 0.9
      scale_in_utilisation: 0.2
      return_to_plan_after: 5m
    gate:
      tolerance: 1.4
    forecast:
      step: 1h
      refit_every: 2h
      horizon: 12h
      history: 2w
`

func writePoolConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "forecaster.yaml")
	if err := os.WriteFile(path, []byte(poolYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// backtestConfigOf parses args as 'forecaster backtest' does and returns
// the simulation's configuration for three days of synthetic demand.
func backtestConfigOf(t *testing.T, args ...string) (backtest.Config, backtest.Trace) {
	t.Helper()
	bf, err := parseBacktestFlags(newFlagSet("backtest", "", "", io.Discard), args)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := bf.Input.Load(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := bf.Config(tr)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, tr
}

// With --config/--pool the backtest runs the pool's planner configuration
// (windows in its time zone), controller settings, actuator limits,
// decision interval and demand fold: each as poolspec.Pool derives it for
// serve.
func TestBacktestRunsThePoolSpec(t *testing.T) {
	path := writePoolConfig(t)
	file, err := poolspec.Load(path, backendOptions())
	if err != nil {
		t.Fatal(err)
	}
	pool, err := file.Pool("sd")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := backtestConfigOf(t, "--config", path, "--pool", "sd", "--synthetic-days", "3")
	want, err := pool.Planner()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Planner, want) {
		t.Errorf("planner config\n%+v\nwant the pool's\n%+v", cfg.Planner, want)
	}
	if w := cfg.Planner.Windows; len(w) != 1 || w[0].Location.String() != "Asia/Shanghai" {
		t.Errorf("windows %+v, want one in Asia/Shanghai", w)
	}
	if !reflect.DeepEqual(cfg.Forecast.Settings, pool.Settings()) {
		t.Errorf("controller settings %+v, want the pool's %+v", cfg.Forecast.Settings, pool.Settings())
	}
	a := pool.Actuator()
	got := []any{cfg.Planner.Fleet.Limits, cfg.Tick, cfg.Forecast.Aggregate}
	if w := []any{a.Limits, time.Minute, "mean"}; !reflect.DeepEqual(got, w) {
		t.Errorf("max_step, min_interval, min, max, tick, aggregate = %v, want %v", got, w)
	}
	// The defaults of a flag run differ in every one of them.
	flags, _ := backtestConfigOf(t, "--synthetic-days", "3", "--peak-instances", "20")
	if reflect.DeepEqual(flags.Planner, cfg.Planner) || flags.Planner.Fleet.Limits == cfg.Planner.Fleet.Limits ||
		reflect.DeepEqual(flags.Forecast.Settings, cfg.Forecast.Settings) {
		t.Error("setup: the pool's settings should differ from the flags' defaults")
	}
}

// The pool's limits are what the backtest's changes pass through: no
// change moves the hybrid by more than max_step, none comes within
// min_interval of the one before, and the fleet stays within min and max.
func TestBacktestPoolLimitsBindTheChanges(t *testing.T) {
	cfg, tr := backtestConfigOf(t, "--config", writePoolConfig(t), "--pool", "sd", "--synthetic-days", "3")
	rep, err := backtest.Run(context.Background(), tr, cfg, backtest.PolicyHybrid)
	if err != nil {
		t.Fatal(err)
	}
	h := rep.Policies[0]
	if len(h.Decisions) < 10 {
		t.Fatalf("%d changes in three days; want a pool that moves", len(h.Decisions))
	}
	for i, d := range h.Decisions {
		if d.Desired < 2 || d.Desired > 40 {
			t.Errorf("%s: desired %d outside [2, 40]", d.At, d.Desired)
		}
		if i == 0 {
			continue
		}
		prev := h.Decisions[i-1]
		if step := d.Desired - prev.Desired; step > 3 || step < -3 {
			t.Errorf("%s: %d → %d, more than max_step 3", d.At, prev.Desired, d.Desired)
		}
		if gap := d.At.Sub(prev.At); gap < 7*time.Minute {
			t.Errorf("%s: %v after the change before, within min_interval 7m", d.At, gap)
		}
	}
}

// A flag that the pool spec also sets is refused with --config, naming
// both the flag and the YAML key; the trace and simulation flags stay.
func TestBacktestPoolRefusesOverrides(t *testing.T) {
	path := writePoolConfig(t)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"boot", []string{"--boot", "5m"}, 2, "--boot (the pool's boot_delay)"},
		{"throughput and limits", []string{"--gpu-rps", "3", "--max-step", "2"}, 2, "--gpu-rps (the pool's rps_per_instance), --max-step (the pool's max_step)"},
		{"refit", []string{"--refit", "1h"}, 2, "--refit (the pool's forecast.refit_every)"},
		{"slo target", []string{"--slo-target", "0.9"}, 2, "--slo-target (the pool's slo_quantile)"},
		{"pool without config", []string{"--config", ""}, 2, `--pool "sd" needs --config FILE`},
		{"unknown pool", []string{"--pool", "nope"}, 2, `no pool "nope" in the configuration (pools: sd)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"backtest", "--config", path, "--pool", "sd", "--synthetic-days", "2"}, tc.args...)
			code, _, errOut := runForecaster(args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and ~%q", code, errOut, tc.code, tc.want)
			}
		})
	}
	// An invalid file exits 2 with its problems, as serve does.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(poolYAML, "boot_delay: 8m", "boot_delay: 30000h", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runForecaster("backtest", "--config", bad, "--pool", "sd"); code != 2 || !strings.Contains(errOut, "boot_delay") {
		t.Errorf("invalid file: exit %d, %q", code, errOut)
	}
	// Trace and simulation flags are the backtest's own.
	code, out, errOut := runForecaster("backtest", "--config", path, "--pool", "sd", "--synthetic-days", "2", "--step", "5m",
		"--policies", "hybrid", "--timeout", "30s", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Pool, Config, Tick string
		ForecastStep       string `json:"forecast_step"`
		Slots              int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Pool != "sd" || doc.Config != path || doc.ForecastStep != "1h0m0s" || doc.Slots != 2 || doc.Tick != "1m0s" {
		t.Errorf("JSON says pool %q config %q forecast step %s slots %d tick %s", doc.Pool, doc.Config, doc.ForecastStep, doc.Slots, doc.Tick)
	}
}

// The plain flags start from a pool's defaults: every setting a pool
// spec also sets is poolspec.DefaultPool's, but for --max, which a pool
// has no default for (poolspec.FlagMaxInstances), so --config F --pool P
// and the flags differ only where a flag or the file says so.
func TestBacktestFlagsDefaultToAPool(t *testing.T) {
	bf, err := parseBacktestFlags(newFlagSet("backtest", "", "", io.Discard), []string{"--gpu-rps", "5"})
	if err != nil {
		t.Fatal(err)
	}
	want := poolspec.DefaultPool().Config
	want.Fleet.MaxInstances, want.Fleet.RPSPerInstance = poolspec.FlagMaxInstances, 5
	if got := bf.Input.Config(); !reflect.DeepEqual(got, want) {
		t.Errorf("the flags' defaults\n%+v\nwant a pool's\n%+v", got, want)
	}
	d := poolspec.DefaultPool()
	got := []any{bf.Input.Limits.MaxStep, bf.Input.Limits.MinInterval, bf.Sim.SpotPrice}
	if w := []any{d.Fleet.MaxStep, d.Fleet.MinInterval, d.Prices.SpotPerHour}; !reflect.DeepEqual(got, w) {
		t.Errorf("--max-step, --min-interval, --spot-price = %v, want a pool's %v", got, w)
	}
}
