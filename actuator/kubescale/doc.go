// Package kubescale sizes a Kubernetes workload directly through its
// `scale` subresource, for clusters without KEDA: Capacity reads
// GET /apis/apps/v1/namespaces/NS/deployments/NAME/scale and SetDesired
// sends a JSON merge patch {"spec":{"replicas":N}} to the same URL, as
// `kubectl scale` does. ReadyInstances reads the workload itself
// (GET …/deployments/NAME) for status.readyReplicas, the pods that serve,
// from which the pool's start times are measured (at each decision's
// read, not before a change). It speaks plain HTTPS
// with the standard library (no client-go) and, inside a cluster, finds
// the API server, token, CA and namespace where Kubernetes mounts them for
// a service account, which needs the verbs get and patch on
// deployments/scale (or statefulsets/scale) and get on the workload (a
// role without it leaves readiness unknown, logged once).
//
// With options.warm_placeholder the pool's warm tier is a Deployment of
// placeholder pods at a negative priority (Placeholder, cluster-
// autoscaler's overprovisioning pattern): SetWarm patches its scale, so
// the cluster's autoscaler keeps GPU nodes up for the pods the plan will
// need, and a real pod preempts a placeholder instead of waiting for a
// node. The role then needs patch on that Deployment's scale too.
//
// A HorizontalPodAutoscaler on the same workload would fight prewarm; use
// either this back-end or KEDA (package keda), not an HPA and this.
package kubescale
