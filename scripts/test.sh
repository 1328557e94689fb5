#!/usr/bin/env bash
# Runs prewarm's whole test suite: lint, then go test with a real InfluxDB
# 1.8 (built once with `go install`) and a real Prometheus 2.x (apt-get
# installed when missing), each started on a free loopback port with a
# throw-away data dir and stopped on exit, and headless Chromium (apt-get
# installed when missing) for the status page. Usage: scripts/test.sh [PACKAGES...]
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=("${@:-./...}")
[ ${#pkgs[@]} -eq 0 ] && pkgs=(./...)

echo "== lint"
make --no-print-directory lint PKGS="${pkgs[*]}"

stops=()
trap 'for s in "${stops[@]}"; do $s || true; done' EXIT

if [ -x scripts/influxd.sh ]; then
  echo "== influxd"
  # influxd.sh start prints KEY=VALUE lines to export (PREWARM_INFLUXD,
  # PREWARM_INFLUX_URL) and leaves the server running until `stop`.
  while IFS= read -r line; do export "${line?}"; done < <(scripts/influxd.sh start)
  stops+=("scripts/influxd.sh stop")
  export PREWARM_REQUIRE_INFLUX=1
fi

if [ -x scripts/prometheus.sh ]; then
  echo "== prometheus"
  # prometheus.sh start installs Prometheus 2.x (apt-get) when missing and
  # prints PREWARM_PROMETHEUS, PREWARM_PROMTOOL and PREWARM_PROMETHEUS_URL.
  while IFS= read -r line; do export "${line?}"; done < <(scripts/prometheus.sh start)
  stops+=("scripts/prometheus.sh stop")
  export PREWARM_REQUIRE_PROMETHEUS=1
fi

if [ -x scripts/chromium.sh ]; then
  echo "== chromium"
  # chromium.sh env installs Chromium (apt-get) when missing and prints
  # PREWARM_CHROMIUM; the status page tests then fail rather than skip.
  while IFS= read -r line; do export "${line?}"; done < <(scripts/chromium.sh env)
  export PREWARM_REQUIRE_CHROMIUM=1
  # The report's page test prints a PDF and renders it with poppler-utils.
  if ! command -v pdftoppm >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends poppler-utils >&2
  fi
fi

echo "== go test"
go test -count=1 -timeout 30m "${pkgs[@]}"
