// Package actuator applies capacity decisions to real fleets: cloud auto
// scaling groups, cloud instances and Kubernetes workloads.
//
// Every back-end implements the small Actuator interface, modelled on
// cluster-autoscaler's NodeGroup: each method's doc says whether it is
// required or optional, and optional ones may return ErrNotImplemented.
// Back-ends register by name, and a Safe wrapper adds the rules every
// back-end shares (bounds, step limits, rate limits, retries, a circuit
// breaker, an audit log and metrics).
//
// Each back-end declares its pool options once, as an OptionSet (name,
// kind, default, range or choices, whether required, a line of help). The
// pool spec checks a file against the declarations, with file and line;
// Registry.New decodes a pool's options by them, so a Factory receives
// typed, checked OptionValues and parses no text itself.
//
// Wiring, in main: one table of the back-ends the binary ships and the
// options each declares checks the pool spec and registers the back-ends,
// so the two cannot disagree:
//
//	backends := poolspec.Backends{ // and keda, simulated, volcengine
//		dryrun.Name:    dryrun.PoolOptions,
//		kubescale.Name: kubescale.PoolOptions,
//	}
//	file, err := poolspec.Load("forecaster.yaml", backends) // the one pool spec
//	factories := map[string]actuator.Factory{
//		dryrun.Name:    dryrun.Factory(logger),
//		kubescale.Name: kubescale.NewFactory(os.Getenv, logger, redactor),
//	}
//	reg := actuator.NewRegistry()
//	for name, options := range backends {
//		err := reg.Register(name, factories[name], options)
//	}
//	metrics, err := actuator.NewMetrics(prometheus.DefaultRegisterer)
//	audit := actuator.NewSyncWriter(auditFile) // shared by every Safe
//	for _, p := range file.Pools {
//		pool := p.Actuator()
//		inner, err := reg.New(ctx, pool.Backend, pool)
//		safe := actuator.NewSafe(inner, actuator.SafetyOptions{
//			Pools: []actuator.PoolConfig{pool}, Audit: audit, Metrics: metrics,
//			Redactor: redactor, Persist: saveMemory})
//		_ = safe.Restore(pool.Name, savedMemory) // after a restart
//		_ = safe.Apply(ctx, pool.Name, plannedInstances, "forecast p95 ...")
//	}
//
// Safe's memory of each pool (its last change, the last schedule it
// published) is what min_interval and max_step count from; Persist saves
// it before every change and Restore puts it back after a restart, so a
// crash loop cannot scale faster than min_interval allows.
//
// Back-ends report failures by wrapping ErrThrottled, ErrTransient or
// ErrRejected; Safe retries the first two. A back-end whose API takes a
// client token reads it with IdempotencyToken(ctx) (the same on every retry
// of one logical call) and reports the provider's request ID with
// ReportRequestID(ctx, id) so the audit line can point at it.
// actuatortest.Fake is the back-end for tests of code above this package.
package actuator
