#!/usr/bin/env bash
# Runs each fuzz target for a bounded time, one after the other, and prints
# the executions each made. Usage (make fuzz passes these):
#   scripts/fuzz.sh FUZZTIME FUZZMINTIME PKG:FuzzTarget...
#
# A target fails when go test finds a failing input (it writes it under
# PKG/testdata/fuzz/TARGET/). A failure reading only "context deadline
# exceeded", with no input written, is Go 1.26's fuzz coordinator racing
# its own -fuzztime deadline (go.dev/issue/75804, fixed in Go 1.27): it is
# reported as a flake and run once more, and fails only if it recurs.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="$1" mintime="$2"
shift 2
summary=()
status=0
for t in "$@"; do
  pkg="${t%%:*}" name="${t#*:}"
  for attempt in 1 2; do
    echo "== $name ($pkg)"
    out="$(mktemp)"
    rc=0
    go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$mintime" "$pkg" 2>&1 | tee "$out" || rc=$?
    execs="$(grep -o 'execs: [0-9]*' "$out" | tail -1 | cut -d' ' -f2 || true)"
    if [ "$rc" -eq 0 ]; then
      summary+=("$(printf '%-22s %-26s %10s execs' "$name" "$pkg" "${execs:-?}")")
      rm -f "$out"
      break
    fi
    if ! grep -q 'Failing input written' "$out" && grep -q 'context deadline exceeded' "$out" && [ "$attempt" -eq 1 ]; then
      echo "fuzz.sh: $name: 'context deadline exceeded' with no failing input: go.dev/issue/75804, running it again"
      rm -f "$out"
      continue
    fi
    summary+=("$(printf '%-22s %-26s %10s execs  FAILED' "$name" "$pkg" "${execs:-?}")")
    rm -f "$out"
    status=1
    break
  done
  [ "$status" -eq 0 ] || break
done
echo "== fuzz executions per target (-fuzztime $fuzztime)"
printf '%s\n' "${summary[@]}"
exit "$status"
