package service

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/store"
)

// Config is the forecaster service's configuration file. See
// docs/forecaster.yaml for an annotated example.
type Config struct {
	// Interval is the decision tick (default 1m).
	Interval time.Duration `yaml:"interval"`
	// Listen is the HTTP address for /metrics and the API
	// (default 127.0.0.1:9109).
	Listen string `yaml:"listen"`
	// AuditLog is the actuators' JSON-lines audit file ("" = none).
	AuditLog string `yaml:"audit_log"`
	// Pools are the fleets the service scales.
	Pools []PoolConfig `yaml:"pools"`
}

// PoolConfig is one pool: where its demand is read, how it is planned, and
// which actuator applies the plan.
type PoolConfig struct {
	// Name is the pool's name: the back-end's pool (scaling group ID, KEDA
	// pool) and the `pool` tag of its series in the store.
	Name string `yaml:"name"`
	// Backend is the registered actuator: dryrun, simulated, keda,
	// kubescale, volcengine.
	Backend string `yaml:"backend"`
	// Min, Max, MaxStep and MinInterval bound what the actuator may do.
	Min         int               `yaml:"min"`
	Max         int               `yaml:"max"`
	MaxStep     int               `yaml:"max_step"`
	MinInterval time.Duration     `yaml:"min_interval"`
	Options     map[string]string `yaml:"options"`
	// PublishSchedule hands the plan's future steps to back-ends that can
	// act on them themselves (scheduled scaling policies).
	PublishSchedule bool `yaml:"publish_schedule"`

	// Demand is the series of the pool's request rate (requests/s);
	// default: service_request_rate{pool=NAME}, as the collector writes it.
	Demand SeriesRef `yaml:"demand"`
	// Utilisation is the series of GPU utilisation in percent (the
	// collector's gpu_util); when unset it is derived from demand and
	// ready capacity.
	Utilisation *SeriesRef `yaml:"utilisation"`
	// Queue is the series of waiting requests (the collector's
	// service_queue_length); unset means 0.
	Queue *SeriesRef `yaml:"queue"`

	// RPSPerInstance is the request rate one instance serves within the
	// SLO. Required.
	RPSPerInstance float64 `yaml:"rps_per_instance"`
	// BootDelay is boot plus model load: the pre-warm lead time.
	BootDelay time.Duration `yaml:"boot_delay"`
	// SLOLatency and SLOQuantile: the latency objective (default 10s P99).
	SLOLatency  time.Duration `yaml:"slo_latency"`
	SLOQuantile float64       `yaml:"slo_quantile"`
	// TargetUtilisation is the planned share of each instance's throughput.
	TargetUtilisation float64 `yaml:"target_utilisation"`
	// Windows are schedule floors, one per line, e.g.
	// "weekdays 09:45-12:00 at least 6".
	Windows string `yaml:"windows"`
	// TimeZone for Windows (default UTC), an IANA name.
	TimeZone string `yaml:"time_zone"`
	// Forecast tunes the forecast grid and refits.
	Forecast ForecastConfig `yaml:"forecast"`
}

// SeriesRef selects a series in the store: a measurement and the tags its
// series must carry. Several matching series (tag sets) are summed, except
// utilisation, which is averaged.
type SeriesRef struct {
	Measurement string            `yaml:"measurement"`
	Match       map[string]string `yaml:"match"`
	// Aggregate folds each series' points within a window. Default: mean
	// for the live signals of the last interval; max for the demand
	// history a refit reads, so each forecast step is planned for its peak.
	Aggregate store.Aggregate `yaml:"aggregate"`
}

// String renders the reference as measurement{key=value,...} for errors.
func (r SeriesRef) String() string {
	keys := slices.Sorted(maps.Keys(r.Match))
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + r.Match[k]
	}
	return r.Measurement + "{" + strings.Join(pairs, ",") + "}"
}

// ForecastConfig is control.Settings in YAML.
type ForecastConfig struct {
	Step       time.Duration   `yaml:"step"`
	RefitEvery time.Duration   `yaml:"refit_every"`
	Horizon    time.Duration   `yaml:"horizon"`
	History    time.Duration   `yaml:"history"`
	Periods    []time.Duration `yaml:"periods"`
}

// DefaultConfig returns the defaults every file starts from.
func DefaultConfig() Config {
	return Config{Interval: time.Minute, Listen: "127.0.0.1:9109"}
}

// LoadConfig reads a configuration file; errors name the file and line.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading config: %w", err)
	}
	return ParseConfig(data, path)
}

// ParseConfig parses and validates YAML; source names it in errors.
// Unknown fields are errors, with their line.
func ParseConfig(data []byte, source string) (Config, error) {
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%s: %w", source, err)
	}
	for i := range cfg.Pools {
		cfg.Pools[i].Demand = cfg.Pools[i].Demand.withDefaults(DefaultDemandMeasurement, cfg.Pools[i].Name)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", source, err)
	}
	return cfg, nil
}

// The measurements the collector writes, read by default.
const (
	// DefaultDemandMeasurement is the collector's request rate (req/s).
	DefaultDemandMeasurement = "service_request_rate"
	// GPUUtilMeasurement is the collector's GPU utilisation (percent).
	GPUUtilMeasurement = "gpu_util"
	// QueueMeasurement is the collector's queue length.
	QueueMeasurement = "service_queue_length"
)

// withDefaults fills an unset measurement and, with it, the match on the
// pool's tag.
func (r SeriesRef) withDefaults(measurement, pool string) SeriesRef {
	if r.Measurement == "" {
		r.Measurement = measurement
		if r.Match == nil {
			r.Match = map[string]string{"pool": pool}
		}
	}
	return r
}

// Validate names the first field that cannot work.
func (c Config) Validate() error {
	if c.Interval <= 0 {
		return fmt.Errorf("interval: must be positive, got %v", c.Interval)
	}
	if len(c.Pools) == 0 {
		return errors.New("pools: at least one pool is required")
	}
	seen := map[string]bool{}
	for i, p := range c.Pools {
		if seen[p.Name] {
			return fmt.Errorf("pools[%d].name: %q defined twice", i, p.Name)
		}
		seen[p.Name] = true
		if _, err := p.Planner(); err != nil {
			return fmt.Errorf("pools[%d] (%s): %w", i, p.Name, err)
		}
		if err := p.Actuator().Validate(); err != nil {
			return fmt.Errorf("pools[%d]: %w", i, err)
		}
		if p.Demand.Measurement == "" {
			return fmt.Errorf("pools[%d] (%s): demand.measurement: is required", i, p.Name)
		}
		for _, ref := range []struct {
			field string
			ref   *SeriesRef
		}{{"demand", &p.Demand}, {"utilisation", p.Utilisation}, {"queue", p.Queue}} {
			if err := ref.ref.validate(); err != nil {
				return fmt.Errorf("pools[%d] (%s): %s.%w", i, p.Name, ref.field, err)
			}
		}
		if err := p.Forecast.validate(); err != nil {
			return fmt.Errorf("pools[%d] (%s): %w", i, p.Name, err)
		}
		set := p.Settings().WithDefaults()
		if err := set.Validate(); err != nil {
			return fmt.Errorf("pools[%d] (%s): %w", i, p.Name, err)
		}
		// Refits happen on the step grid, so another refit_every would
		// drift between two spacings.
		if set.RefitEvery%set.Step != 0 {
			return fmt.Errorf("pools[%d] (%s): forecast.refit_every %v must be a multiple of forecast.step %v", i, p.Name, set.RefitEvery, set.Step)
		}
	}
	return nil
}

// validate checks a configured reference (nil: not configured).
func (r *SeriesRef) validate() error {
	if r == nil {
		return nil
	}
	if r.Measurement == "" {
		return errors.New("measurement: is required")
	}
	switch r.Aggregate {
	case "", store.Mean, store.Sum, store.Max, store.Min, store.Last, store.Count:
		return nil
	}
	return fmt.Errorf("aggregate: %q is not one of mean, sum, max, min, last, count", r.Aggregate)
}

// validate rejects negative durations, which would otherwise silently take
// the defaults.
func (f ForecastConfig) validate() error {
	for _, d := range []struct {
		field string
		value time.Duration
	}{{"step", f.Step}, {"refit_every", f.RefitEvery}, {"horizon", f.Horizon}, {"history", f.History}} {
		if d.value < 0 {
			return fmt.Errorf("forecast.%s: must not be negative, got %v", d.field, d.value)
		}
	}
	return nil
}

// yamlFields maps the planner's field names in its validation errors to
// the keys of this file, longest first so a phrase wins over its parts.
var yamlFields = strings.NewReplacer(
	"Fleet.RPSPerInstance must be > 0 (or Fleet.ServiceTime set)", "rps_per_instance must be > 0",
	"Fleet.RPSPerInstance", "rps_per_instance",
	"Fleet.BootDelay", "boot_delay",
	"Fleet.MinInstances", "min",
	"Fleet.MaxInstances", "max",
	"SLO.Latency", "slo_latency",
	"SLO.Quantile", "slo_quantile",
	"ForecastQuantile", "slo_quantile",
	"TargetUtilisation", "target_utilisation",
)

// Actuator returns the pool's actuator configuration.
func (p PoolConfig) Actuator() actuator.PoolConfig {
	return actuator.PoolConfig{Name: p.Name, Backend: p.Backend, Min: p.Min, Max: p.Max,
		MaxStep: p.MaxStep, MinInterval: p.MinInterval, Options: p.Options}
}

// Planner returns the pool's planner configuration: planner.DefaultConfig
// with the file's non-zero settings on top, validated (a negative value is
// an error, not the default); errors name the YAML keys.
func (p PoolConfig) Planner() (planner.Config, error) {
	c := planner.DefaultConfig()
	c.Fleet.RPSPerInstance = p.RPSPerInstance
	if p.BootDelay != 0 {
		c.Fleet.BootDelay = p.BootDelay
	}
	c.Fleet.MinInstances, c.Fleet.MaxInstances = p.Min, p.Max
	if p.SLOLatency != 0 {
		c.SLO.Latency = p.SLOLatency
	}
	if p.SLOQuantile != 0 {
		c.SLO.Quantile = p.SLOQuantile
		c.ForecastQuantile = p.SLOQuantile
	}
	if p.TargetUtilisation != 0 {
		c.TargetUtilisation = p.TargetUtilisation
	}
	if p.Windows != "" {
		loc := time.UTC
		if p.TimeZone != "" {
			var err error
			if loc, err = time.LoadLocation(p.TimeZone); err != nil {
				return c, fmt.Errorf("time_zone: %w", err)
			}
		}
		w, err := planner.ParseWindows(p.Windows, loc)
		if err != nil {
			return c, fmt.Errorf("windows: %w", err)
		}
		c.Windows = w
	}
	if err := c.Validate(); err != nil {
		// The planner names its Go fields; name the YAML keys instead.
		return c, errors.New(yamlFields.Replace(err.Error()))
	}
	return c, nil
}

// Settings returns the pool's forecast settings (zero fields: defaults).
func (p PoolConfig) Settings() control.Settings {
	f := p.Forecast
	return control.Settings{Step: f.Step, RefitEvery: f.RefitEvery, Horizon: f.Horizon,
		History: f.History, Periods: f.Periods}
}
