#!/usr/bin/env bash
# Runs prewarm's whole test suite: lint (gofmt, go vet, the fuzz target
# list, dead code with scripts/deadcode.sh), staticcheck at a pinned
# version (go install'ed into .cache/bin once), go test with a real InfluxDB 1.8 (built once with `go install`)
# and a real Prometheus 2.x (apt-get installed when missing), each started
# on a free loopback port with a throw-away data dir and stopped on exit,
# and headless Chromium (apt-get installed when missing) for the status page
# and the reports, then go test -race -short on the packages with concurrent
# code.
#
# Usage: scripts/test.sh [PACKAGES...]
# RACE_PKGS overrides the race-tested packages (default: the concurrent
# ones below when PACKAGES is ./..., none otherwise; "" for none).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
log() { echo "test.sh: $*" >&2; }
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
pkgs=("${@:-./...}")
[ ${#pkgs[@]} -eq 0 ] && pkgs=(./...)

# The packages whose code runs goroutines that share state: the collector
# and its buffer, the service, the actuators (Safe's breakers, the KEDA
# gRPC server), the stores, leader election, the backtest (its refits are
# made while the replays that read them run), and the collector binary's
# real-process tests.
default_race="./collector/... ./service/... ./actuator/... ./store/... ./election/... ./internal/... ./backtest ./cmd/collector"
if [ "${pkgs[*]}" = "./..." ]; then
  race_pkgs="${RACE_PKGS-$default_race}"
else
  race_pkgs="${RACE_PKGS-}"
fi

staticcheck_version="v0.8.2"
staticcheck="$root/.cache/bin/staticcheck"

# install_staticcheck puts staticcheck $staticcheck_version in .cache/bin
# unless that version is there already (scripts/lib.sh).
install_staticcheck() {
  go_install_tool "$staticcheck" "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
}

# phase NAME prints a phase's header, with the time the previous one took,
# so a CI log shows where its minutes went.
phase_start=$SECONDS
took() { if [ -n "${phase_name:-}" ]; then echo "   ($phase_name took $((SECONDS - phase_start)) s)"; fi; }
phase() {
  took
  phase_name="$1" phase_start=$SECONDS
  echo "== $1"
}

phase "lint"
make --no-print-directory lint PKGS="${pkgs[*]}"

phase "staticcheck $staticcheck_version"
install_staticcheck
"$staticcheck" "${pkgs[@]}"

stops=()
trap 'for s in "${stops[@]}"; do $s || true; done' EXIT

if [ -x scripts/influxd.sh ]; then
  phase "influxd"
  # influxd.sh start prints KEY=VALUE lines to export (PREWARM_INFLUXD,
  # PREWARM_INFLUX_URL) and leaves the server running until `stop`.
  while IFS= read -r line; do export "${line?}"; done < <(scripts/influxd.sh start)
  stops+=("scripts/influxd.sh stop")
  export PREWARM_REQUIRE_INFLUX=1
fi

if [ -x scripts/prometheus.sh ]; then
  phase "prometheus"
  # prometheus.sh start installs Prometheus 2.x (apt-get) when missing and
  # prints PREWARM_PROMETHEUS, PREWARM_PROMTOOL and PREWARM_PROMETHEUS_URL.
  while IFS= read -r line; do export "${line?}"; done < <(scripts/prometheus.sh start)
  stops+=("scripts/prometheus.sh stop")
  export PREWARM_REQUIRE_PROMETHEUS=1
fi

if [ -x scripts/chromium.sh ]; then
  phase "chromium"
  # chromium.sh env installs Chromium (apt-get) when missing and prints
  # PREWARM_CHROMIUM; the status page tests then fail rather than skip.
  while IFS= read -r line; do export "${line?}"; done < <(scripts/chromium.sh env)
  export PREWARM_REQUIRE_CHROMIUM=1
  # The report's page test prints a PDF and renders it with poppler-utils.
  if ! command -v pdftoppm >/dev/null 2>&1; then
    apt_install poppler-utils
  fi
fi

phase "go test"
go test -count=1 -timeout 30m "${pkgs[@]}"

if [ "${pkgs[*]}" = "./..." ]; then
  # Four replicas of 4,000 pools and their timing bound need the machine to
  # themselves: this test runs alone, after the others, and not in parallel
  # with anything.
  phase "go test: four replicas sharing 4,000 pools, alone"
  shard_log=$(mktemp)
  shard_status=0
  PREWARM_SHARD_TEST=1 go test -count=1 -timeout 5m -run '^TestShardsSurviveAKilledReplica$' -v ./cmd/forecaster \
    >"$shard_log" 2>&1 || shard_status=$?
  grep -E '^(--- |FAIL|ok )|ha_shards_test' "$shard_log" || cat "$shard_log"
  rm -f "$shard_log"
  [ "$shard_status" -eq 0 ]
fi

if [ -n "$race_pkgs" ]; then
  # -short: the long replays and real-process runs above add nothing
  # under the race detector but minutes; the concurrent code runs anyway.
  phase "go test -race -short"
  # shellcheck disable=SC2086 # a list of package patterns
  go test -count=1 -race -short -timeout 20m $race_pkgs
fi
took
echo "== all passed in $SECONDS s"
