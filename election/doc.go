// Package election lets several replicas of the forecaster share work
// safely through the Kubernetes API, as cluster-autoscaler, KEDA and
// Knative's autoscaler do:
//
//   - Elector: leader election on one coordination.k8s.io/v1 Lease with
//     client-go's leaderelection, for work exactly one replica may do.
//     IsLeader turns false as soon as renewals have failed for the renew
//     deadline, which is shorter than the lease duration the other replicas
//     wait, so a leader stops acting before anyone else can take over.
//   - Sharder: pools hashed into buckets (Bucket), one Lease per bucket
//     (prewarm-shard-07). Every replica campaigns for every bucket but
//     declines one past its share of the live replicas, and sheds the
//     surplus when more replicas appear, so N replicas hold about 1/N each
//     and a dead replica's buckets are taken within about one lease
//     duration.
//   - Store: per-shard state in ConfigMaps, written with resourceVersion as
//     compare-and-swap (ErrConflict when another write came first).
//
// Package kubetest is a loopback stand-in of the API for tests.
package election
