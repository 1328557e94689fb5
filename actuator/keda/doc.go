// Package keda serves prewarm's capacity plan to Kubernetes through KEDA's
// external scaler protocol, so a ScaledObject with a trigger of
// `type: external` (or `external-push`) scales a Deployment to the plan.
//
// The Scaler is two things at once. To prewarm it is an actuator.Actuator:
// SetDesired records the plan for a pool, PublishSchedule records future
// steps, and the safety layer (actuator.Safe) sits in front of it like any
// other back-end. To KEDA it is an externalscaler.ExternalScalerServer
// reached over gRPC: the ScaledObject's trigger metadata names the pool
// (`pool: sd-pool`), GetMetricSpec answers with a target of 1 per replica,
// GetMetrics with the planned capacity in force at request time, so the
// HPA KEDA manages computes replicas = ceil(plan / 1) = plan. IsActive is
// true when the plan is above zero (KEDA uses it to scale from and to zero),
// and StreamIsActive pushes the state whenever the plan in force changes.
//
// A pool with no plan yet answers GetMetrics with codes.Unavailable, so KEDA
// keeps the Deployment where it is (or applies the ScaledObject's fallback)
// instead of scaling it to zero while prewarm starts up.
//
// See docs/keda.md and docs/keda-scaledobject.yaml.
package keda
