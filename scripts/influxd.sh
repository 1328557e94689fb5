#!/usr/bin/env bash
# Builds, starts and stops a throw-away InfluxDB 1.8 for prewarm's tests.
#
#   scripts/influxd.sh build   build .cache/bin/influxd once (go install, ~1-2 min)
#   scripts/influxd.sh start   build if needed, start on free loopback ports with
#                              Flux enabled and a temp data dir, create the
#                              database "prewarm", print on stdout ONLY:
#                                PREWARM_INFLUXD=/abs/path/to/influxd
#                                PREWARM_INFLUX_URL=http://127.0.0.1:PORT
#   scripts/influxd.sh stop    stop it and delete its data dir
#
# Needs only bash, Go and the module proxy (no curl: HTTP goes through bash's
# /dev/tcp). Logs go to stderr and to the server's log file in its temp dir.
# scripts/test.sh reads the two lines above; the Go helper
# store/influx/influxtest starts further servers from $PREWARM_INFLUXD.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
version="v1.8.10"
bin="$root/.cache/bin/influxd"
state="$root/.cache/influxd.state" # lines: pid, dir, port

log() { echo "influxd.sh: $*" >&2; }

# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

build() {
  if [ -x "$bin" ] && "$bin" version 2>/dev/null | grep -qF "InfluxDB $version "; then
    return
  fi
  log "building influxd $version into $bin (once; takes a minute or two)"
  mkdir -p "$root/.cache/bin"
  local tmp
  tmp="$(mktemp -d)"
  # Outside our module, so prewarm's go.mod and go.sum are never touched.
  (cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod GOBIN="$root/.cache/bin" \
    go install -ldflags="-X main.version=${version#v}" \
      "github.com/influxdata/influxdb/cmd/influxd@$version") >&2
  rmdir "$tmp" 2>/dev/null || true
}

print_env() {
  echo "PREWARM_INFLUXD=$bin"
  echo "PREWARM_INFLUX_URL=http://127.0.0.1:$(sed -n 3p "$state")"
}

write_config() { # DIR HTTP_PORT RPC_PORT
  cat >"$1/influxdb.conf" <<EOF
reporting-disabled = true
bind-address = "127.0.0.1:$3"
[meta]
  dir = "$1/meta"
  logging-enabled = false
[data]
  dir = "$1/data"
  wal-dir = "$1/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[subscriber]
  enabled = false
[continuous_queries]
  enabled = false
[http]
  bind-address = "127.0.0.1:$2"
  flux-enabled = true
  log-enabled = false
  pprof-enabled = false
[logging]
  level = "warn"
  suppress-logo = true
EOF
}

start() {
  if daemon_running; then
    log "already running (pid $(sed -n 1p "$state"))"
    print_env
    return
  fi
  build
  local attempt dir http rpc pid
  for attempt in 1 2 3; do
    dir="$(mktemp -d "${TMPDIR:-/tmp}/prewarm-influxd.XXXXXX")"
    http="$(free_port)"
    rpc="$(free_port)"
    write_config "$dir" "$http" "$rpc"
    INFLUXDB_HTTP_FLUX_ENABLED=true nohup "$bin" run -config "$dir/influxdb.conf" \
      >"$dir/influxd.log" 2>&1 </dev/null &
    pid=$!
    printf '%s\n%s\n%s\n' "$pid" "$dir" "$http" >"$state"
    for _ in $(seq 1 300); do # up to 30 s on a busy 2-core CI machine
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      if [ "$(http_status GET "$http" /ping 2>/dev/null)" = 204 ]; then
        if [ "$(http_status POST "$http" /query 'q=CREATE+DATABASE+prewarm')" != 200 ]; then
          log "CREATE DATABASE prewarm failed; log: $dir/influxd.log"
          stop; return 1
        fi
        log "started pid $pid on 127.0.0.1:$http (data and log in $dir)"
        print_env
        return
      fi
      sleep 0.1
    done
    log "attempt $attempt: influxd did not answer /ping; its log:"
    tail -n 20 "$dir/influxd.log" >&2 || true
    stop
  done
  return 1
}

stop() { daemon_stop "*/prewarm-influxd.*"; }

case "${1:-}" in
  build) build ;;
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 build|start|stop" >&2; exit 2 ;;
esac
