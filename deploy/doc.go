// Package deploy holds what an operator installs beside the binaries, and
// the tests that keep it working; it has no code of its own.
//
//   - grafana/prewarm.json: a Grafana dashboard on prewarm's metrics
//     (docs/metrics.md), with a Prometheus data source variable.
//   - prometheus/rules.yml: the alerting and recording rules, with unit
//     tests in prometheus/rules_test.yml (promtool test rules).
//   - systemd/: a hardened unit for each binary.
//   - kubernetes/: the forecaster Deployment with the RBAC its kubescale
//     back-end needs and the Service KEDA's external scaler reaches, and
//     the collector as a DaemonSet beside dcgm-exporter (kubectl apply -k).
//   - container/Dockerfile: multi-stage images on distroless bases.
//
// The tests (go test ./deploy, part of make test) run promtool check
// rules and promtool test rules, check every dashboard query with promtool,
// systemd-analyze verify the units and score their hardening, decode the
// manifests into the Kubernetes API types with unknown fields refused, parse
// the configs they carry with prewarm's own parsers, and build the
// binaries as the Dockerfile does to check how they link.
package deploy
