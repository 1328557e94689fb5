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
