// Package alert turns each cycle's readings into events. Per GPU: threshold
// alerts held for a duration (utilisation above 85% for 5 minutes, memory
// above 90%, power above 95% of the enforced limit, by default) and idle
// detection (compute activity below 5% for 30 minutes). Per service (keyed
// by pool and service name): P99 latency above 2 s for 5 minutes
// (latency_high) and queue length above 50 for 2 minutes (queue_high, the
// planner's reactive scale-out rule).
//
// Activity is the largest of utilisation and SM / graphics-engine activity
// that the sources report, in percent. A process holding memory on a GPU
// does not make it busy: a notebook kernel that allocated 70 GB and sleeps
// is exactly the idle GPU worth releasing.
//
// The Engine is pure: it keeps per-GPU and per-service state and is driven
// by the cycle time passed to Evaluate, so tests replay hours in
// microseconds. Each condition fires once when it has held long enough and
// sends a "resolved" event when it stops holding; an idle GPU sends one
// "idle" event per idle period. NaN, infinite and negative readings are
// treated as missing. A service rule whose signal has been missing for
// stale_after (no requests, so no latency; a target that stopped answering)
// is resolved and forgotten.
package alert
