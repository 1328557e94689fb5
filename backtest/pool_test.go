package backtest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/poolspec"
)

// poolYAML is a pool whose every setting ForPool reads differs from
// DefaultConfig's.
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
      aggregate: max
    sizing: erlang-c
    service_time: 100ms
    slots: 2
    boot_delay: 8m
    slo_latency: 5s
    slo_quantile: 0.99
    time_zone: Asia/Shanghai
    windows: |
      weekdays 09:00-10:00 at least 12
    forecast:
      step: 1h
      refit_every: 2h
      history: 2w
`

// parsePool parses poolYAML with edit applied (old → new) and returns its
// pool and the file's interval.
func parsePool(t *testing.T, old, new string) (poolspec.Pool, time.Duration) {
	t.Helper()
	f, err := poolspec.Parse([]byte(strings.Replace(poolYAML, old, new, 1)), "pool.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Pool("sd")
	if err != nil {
		t.Fatal(err)
	}
	return p, f.Interval
}

func minuteTrace(step time.Duration) Trace {
	return Trace{Name: "t", Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), Step: step, RPS: make([]float64, 100)}
}

// ForPool runs the pool's planner configuration, controller settings,
// actuator limits, demand fold and interval, each as poolspec.Pool derives it
// for serve.
func TestForPoolRunsThePool(t *testing.T) {
	pool, interval := parsePool(t, "", "")
	cfg, err := ForPool(pool, interval, minuteTrace(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
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
	got := []any{cfg.Planner.Fleet.MaxStep, cfg.Planner.Fleet.MinInterval, cfg.Tick, cfg.Forecast.Aggregate, cfg.QueueTimeout}
	if w := []any{3, 7 * time.Minute, time.Minute, "max", DefaultConfig().QueueTimeout}; !reflect.DeepEqual(got, w) {
		t.Errorf("limits, tick, aggregate, queue timeout = %v, want %v", got, w)
	}
}

func TestForPoolDemandFoldAndTick(t *testing.T) {
	tests := []struct {
		name      string
		old, new  string
		step      time.Duration
		aggregate string
		tick      time.Duration
		want      string // an error's text; "" for none
		offGrid   bool
	}{
		{"max", "", "", time.Minute, "max", time.Minute, "", false},
		{"no fold given is mean, as serve reads", "      aggregate: max\n", "", time.Minute, "mean", time.Minute, "", false},
		{"mean", "aggregate: max", "aggregate: mean", time.Minute, "mean", time.Minute, "", false},
		{"other folds are refused", "aggregate: max", "aggregate: sum", time.Minute, "", 0,
			`pool "sd": demand.aggregate "sum": the backtest folds demand by max or mean only`, false},
		{"interval dividing a coarser step", "interval: 1m", "interval: 1m", 5 * time.Minute, "max", time.Minute, "", false},
		{"interval not dividing the step", "interval: 1m", "interval: 7m", 5 * time.Minute, "", 0,
			"interval 7m0s does not divide the demand's step 5m0s", true},
		{"interval longer than the step", "interval: 1m", "interval: 10m", 5 * time.Minute, "", 0,
			"interval 10m0s does not divide the demand's step 5m0s", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, interval := parsePool(t, tt.old, tt.new)
			cfg, err := ForPool(pool, interval, minuteTrace(tt.step))
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrOffGrid) != tt.offGrid {
					t.Fatalf("err = %v (off grid: %v), want %q (off grid: %v)", err, errors.Is(err, ErrOffGrid), tt.want, tt.offGrid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Forecast.Aggregate != tt.aggregate || cfg.Tick != tt.tick {
				t.Errorf("aggregate %q, tick %v; want %q, %v", cfg.Forecast.Aggregate, cfg.Tick, tt.aggregate, tt.tick)
			}
		})
	}
}

func TestCheckGrid(t *testing.T) {
	keys := GridKeys{Step: "STEP", Refit: "REFIT", History: "HISTORY"}
	tests := []struct {
		name      string
		traceStep time.Duration
		forecast  control.Settings
		want      string // "" for none
	}{
		{"defaults on a minute trace", time.Minute, control.Settings{}, ""},
		{"defaults on a coarse trace", 7 * time.Minute, control.Settings{}, ""},
		{"step a multiple of the trace's", 5 * time.Minute, control.Settings{Step: time.Hour, RefitEvery: 2 * time.Hour}, ""},
		{"step not a multiple", 7 * time.Minute, control.Settings{Step: time.Hour},
			"STEP 1h0m0s: must be a multiple of the demand's step 7m0s (--step)"},
		{"refit not a multiple of the step", time.Minute, control.Settings{Step: time.Hour, RefitEvery: 90 * time.Minute},
			"REFIT 1h30m0s: must be a multiple of the forecast step 1h0m0s"},
		{"refit not a multiple of the default step", 7 * time.Minute, control.Settings{RefitEvery: time.Hour},
			"REFIT 1h0m0s: must be a multiple of the forecast step 35m0s"},
		{"history of too many steps", time.Minute, control.Settings{Step: time.Minute, History: 100_001 * time.Minute},
			"HISTORY 1666h41m0s at a forecast step of 1m0s is 100001 steps, more than 100000: give a coarser STEP"},
		{"history of the most steps", time.Minute, control.Settings{Step: time.Minute, History: MaxHistorySteps * time.Minute}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Forecast.Settings = tt.forecast
			err := cfg.CheckGrid(minuteTrace(tt.traceStep), keys)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want || !errors.Is(err, ErrOffGrid)):
				t.Errorf("err = %v, want %q matching ErrOffGrid", err, tt.want)
			}
		})
	}
}
