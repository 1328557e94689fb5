// Package actuator applies capacity decisions to real fleets: cloud auto
// scaling groups, cloud instances and Kubernetes workloads.
//
// Every back-end implements the small Actuator interface, modelled on
// cluster-autoscaler's NodeGroup: each method's doc says whether it is
// required or optional, and optional ones may return ErrNotImplemented.
// Back-ends register by name, and a Safe wrapper adds the rules every
// back-end shares (bounds, step limits, rate limits, retries, a circuit
// breaker, an audit log and metrics).
package actuator

// Wiring, in main:
//
//	reg := actuator.NewRegistry()
//	_ = reg.Register(dryrun.Name, dryrun.Factory(logger))      // and keda, simulated, volcengine
//	cfg, err := actuator.LoadConfig("pools.yml")                // or embed []actuator.PoolConfig
//	metrics, err := actuator.NewMetrics(prometheus.DefaultRegisterer)
//	audit := actuator.NewSyncWriter(auditFile)                  // shared by every Safe
//	for _, pool := range cfg.Pools {
//		inner, err := reg.New(ctx, pool.Backend, pool)
//		safe := actuator.NewSafe(inner, actuator.SafetyOptions{
//			Pools: []actuator.PoolConfig{pool}, Audit: audit, Metrics: metrics})
//		_ = safe.Apply(ctx, pool.Name, plannedInstances, "forecast p95 ...")
//	}
//
// Back-ends report failures by wrapping ErrThrottled, ErrTransient or
// ErrRejected; Safe retries the first two. A back-end whose API takes a
// client token reads it with IdempotencyToken(ctx) (the same on every retry
// of one logical call) and reports the provider's request ID with
// ReportRequestID(ctx, id) so the audit line can point at it.
// actuatortest.Fake is the back-end for tests of code above this package.
