#!/usr/bin/env bash
# Runs the collector's real NVML path once on a machine with NVIDIA GPUs and
# prints what it read: one line per point (measurement,tags value=V time),
# e.g. gpu_util,gpu=0,host=...,model=NVIDIA\ H200,source=nvml,uuid=GPU-... value=0
#
#   scripts/gpu-check.sh [extra collector flags...]
#
# Exits non-zero when NVML cannot be loaded or no GPU point was read. Needs
# Go, a C compiler (go-nvml uses cgo) and the NVIDIA driver (libnvidia-ml.so.1).
set -euo pipefail
cd "$(dirname "$0")/.."

if command -v nvidia-smi >/dev/null 2>&1; then
  echo "== nvidia-smi (for comparison)"
  nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total,power.draw,power.limit,temperature.gpu \
    --format=csv || true
fi

echo "== go test ./collector/nvml (real library: TestRealLibrary)"
go test -count=1 -run TestRealLibrary -v ./collector/nvml

echo "== collector --nvml --once --print"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
CGO_ENABLED=1 go run ./cmd/collector --nvml --once --print --listen "" "$@" | tee "$out"

if ! grep -q '^gpu_util,.*source=nvml' "$out"; then
  echo "gpu-check: no gpu_util point read through NVML (see the log above)" >&2
  exit 1
fi
echo "gpu-check: $(grep -c 'source=nvml' "$out") NVML points from $(grep '^gpu_util,' "$out" | wc -l) GPU(s)"
