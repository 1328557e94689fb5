// Package builtin is the set of actuator back-ends the forecaster ships
// (dryrun, simulated, keda, kubescale, volcengine, volcengine-ecs), wired once: the table
// of the pool options each declares, which the pool spec checks a file
// against, and a registry of their factories with the shared instances
// (one simulated fleet, one KEDA scaler) and the template of every pool's
// actuator.Safe. Keeping the table and the registry in one place means the
// spec and the registry cannot disagree on a back-end's options.
package builtin

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/actuator/keda"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/redact"
)

// Options are the back-ends this binary ships and the pool options each
// declares: the table the pool spec checks `options:` against
// (poolspec.Load(path, Options())) and New registers.
func Options() poolspec.Backends {
	return poolspec.Backends{
		dryrun.Name:        dryrun.PoolOptions,
		simulated.Name:     simulated.PoolOptions,
		keda.Name:          keda.PoolOptions,
		kubescale.Name:     kubescale.PoolOptions,
		volcengine.Name:    volcengine.PoolOptions,
		volcengine.ECSName: volcengine.ECSPoolOptions,
	}
}

// Tiers are the capacity tiers pool's back-end runs (a warm tier, a spot
// mix), as the back-end declares them from its name and options, without
// building it: what 'forecaster serve --check-config' checks a pool's
// warm_start and spot: block against (service.CheckTiers), where serve
// checks the back-end it built (actuator.TiersOf). The two agree for every
// back-end of Options (TestTiersAgreeWithTheBuiltBackEnds). What only the
// cloud knows (a volcengine group's ScalingMode) is refused when the tier
// is set.
func Tiers(pool actuator.PoolConfig) actuator.Tiers {
	switch pool.Backend {
	case dryrun.Name, simulated.Name, volcengine.Name:
		return actuator.Tiers{Warm: true, Spot: true}
	case volcengine.ECSName:
		return actuator.Tiers{Warm: true}
	case kubescale.Name:
		opts, _ := kubescale.PoolOptions.Decode(pool) // the pool spec has reported any problem
		return actuator.Tiers{Warm: opts.Set(kubescale.OptWarmPlaceholder)}
	}
	return actuator.Tiers{}
}

// Deps are what the back-ends are built with.
type Deps struct {
	// Registerer takes the actuators' metrics.
	Registerer prometheus.Registerer
	// Logger takes the back-ends' and Safe's log lines.
	Logger *slog.Logger
	// Redactor masks secrets in Safe's log and audit lines.
	Redactor *redact.Redactor
	// Getenv reads the back-ends' credentials; nil means os.Getenv.
	Getenv func(string) string
}

// Set is the actuator wiring of one serve: the registry of the shipped
// back-ends, the first instance built of each back-end, and the template
// of every pool's actuator.Safe. Build is not safe for concurrent use with
// reads of Built.
type Set struct {
	// Registry holds the factories of Options' back-ends.
	Registry *actuator.Registry
	// Built is the first actuator Build made of each back-end, by name:
	// the KEDA scaler to serve.
	Built map[string]actuator.Actuator
	// pools is the actuator Build last made of each pool, by pool name:
	// what the release hook releases each pool's instances through.
	pools map[string]actuator.Actuator
	// Safety is the template of every pool's actuator.Safe: the audit
	// log, the metrics, the logger and the redactor.
	Safety     actuator.SafetyOptions
	closeAudit func()
}

// New registers the shipped back-ends and opens the audit log of file
// (audit_log; none when empty). The simulated fleet boots in
// SimulatedBootDelay(file). Close the Set to close the audit log.
func New(file *poolspec.File, deps Deps) (*Set, error) {
	getenv := deps.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	audit := io.Discard
	closeAudit := func() {}
	if file.AuditLog != "" {
		f, err := os.OpenFile(file.AuditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening the audit log: %w", err)
		}
		audit, closeAudit = actuator.NewSyncWriter(f), func() { f.Close() }
	}
	metrics, err := actuator.NewMetrics(deps.Registerer)
	if err != nil {
		closeAudit()
		return nil, err
	}
	log := deps.Logger
	fleet := simulated.New(simulated.Options{BootDelay: SimulatedBootDelay(file)})
	scaler := keda.New(keda.Options{Logger: log})
	factories := map[string]actuator.Factory{
		dryrun.Name:        dryrun.Factory(log),
		simulated.Name:     fleet.Factory(),
		keda.Name:          scaler.Factory(),
		volcengine.Name:    volcengine.NewFactory(getenv, log),
		volcengine.ECSName: volcengine.NewECSFactory(getenv, log),
		kubescale.Name:     kubescale.NewFactory(getenv, log, deps.Redactor),
	}
	s := &Set{Registry: actuator.NewRegistry(), Built: map[string]actuator.Actuator{}, pools: map[string]actuator.Actuator{}, closeAudit: closeAudit,
		Safety: actuator.SafetyOptions{Audit: audit, Metrics: metrics, Logger: log, Redactor: deps.Redactor}}
	for name, options := range Options() {
		if err := s.Registry.Register(name, factories[name], options); err != nil {
			closeAudit()
			return nil, err
		}
	}
	return s, nil
}

// Build creates a pool's back-end (service.Deps.Backend), remembering the
// first of each back-end in Built and each pool's for its releases.
func (s *Set) Build(ctx context.Context, pool actuator.PoolConfig) (actuator.Actuator, error) {
	inner, err := s.Registry.New(ctx, pool.Backend, pool)
	if err != nil {
		return nil, err
	}
	if _, ok := s.Built[pool.Backend]; !ok {
		s.Built[pool.Backend] = inner
	}
	s.pools[pool.Name] = inner
	return inner, nil
}

// Close closes the audit log.
func (s *Set) Close() { s.closeAudit() }

// SimulatedBootDelay is the boot time of the simulated fleet: the longest
// boot_delay among the pools that use it (one fleet serves them all), or
// the planner's default.
func SimulatedBootDelay(file *poolspec.File) time.Duration {
	boot := time.Duration(0)
	for _, p := range file.Pools {
		if p.Backend == simulated.Name {
			boot = max(boot, p.Fleet.BootDelay)
		}
	}
	if boot == 0 {
		boot = planner.DefaultConfig().Fleet.BootDelay
	}
	return boot
}

// Secrets are the keys of the volcengine and volcengine-ecs pools'
// credentials (their files or the environment, as the back-ends read
// them), for a redactor to mask. A pool whose credentials do not read adds
// none.
func Secrets(file *poolspec.File, getenv func(string) string) []string {
	var keys []string
	for _, p := range file.Pools {
		if p.Backend != volcengine.Name && p.Backend != volcengine.ECSName {
			continue
		}
		if cfg, err := volcengine.ConfigForPool(p.Actuator(), getenv); err == nil {
			keys = append(keys, cfg.AccessKey, cfg.SecretKey.Reveal())
		}
	}
	return keys
}
