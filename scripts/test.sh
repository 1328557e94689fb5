#!/usr/bin/env bash
# Runs prewarm's whole test suite: lint, then go test with a real InfluxDB
# 1.8 (built once with `go install`, started on a free loopback port with a
# throw-away data dir, stopped on exit). Usage: scripts/test.sh [PACKAGES...]
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=("${@:-./...}")
[ ${#pkgs[@]} -eq 0 ] && pkgs=(./...)

echo "== lint"
make --no-print-directory lint PKGS="${pkgs[*]}"

if [ -x scripts/influxd.sh ]; then
  echo "== influxd"
  # influxd.sh start prints KEY=VALUE lines to export (PREWARM_INFLUXD,
  # PREWARM_INFLUX_URL) and leaves the server running until `stop`.
  while IFS= read -r line; do export "${line?}"; done < <(scripts/influxd.sh start)
  trap 'scripts/influxd.sh stop' EXIT
  export PREWARM_REQUIRE_INFLUX=1
fi

echo "== go test"
go test -count=1 -timeout 30m "${pkgs[@]}"
