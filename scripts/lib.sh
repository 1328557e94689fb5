# Shell helpers shared by scripts/influxd.sh, prometheus.sh, chromium.sh,
# deadcode.sh and test.sh: loopback ports, a curl-free HTTP probe, the
# throw-away daemons' state file, installing a Debian package, and
# installing a pinned Go tool. Sourced, not run. The caller defines log()
# and, for the daemon helpers, $state (lines: pid, dir, port).

# port_free PORT: true when nothing listens on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port: a random unused loopback port.
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 40000))
    if port_free "$p"; then echo "$p"; return; fi
  done
  log "no free port found"; return 1
}

# http_status METHOD PORT PATH [BODY]: prints the HTTP status code of a
# request to 127.0.0.1:PORT (through bash's /dev/tcp: no curl needed).
http_status() {
  local method="$1" port="$2" path="$3" body="${4:-}" line
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf '%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s' \
    "$method" "$path" "${#body}" "$body" >&3
  IFS=' ' read -r _ line _ <&3 || true
  exec 3<&- 3>&-
  echo "${line:-0}"
}

# daemon_running: the daemon of $state is alive.
daemon_running() { [ -f "$state" ] && kill -0 "$(sed -n 1p "$state")" 2>/dev/null; }

# daemon_stop PATTERN: stops the daemon of $state (TERM, then KILL after
# 10 s) and deletes its temp dir when the dir matches PATTERN.
daemon_stop() {
  [ -f "$state" ] || return 0
  local pid dir
  pid="$(sed -n 1p "$state")"
  dir="$(sed -n 2p "$state")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # shellcheck disable=SC2254 # PATTERN is a glob on purpose
  case "$dir" in $1) rm -rf "$dir" ;; esac
  rm -f "$state"
}

# apt_install PACKAGE...: installs Debian packages, through sudo when not
# root; fails with a message saying what to run when neither is possible.
apt_install() {
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      log "not root and no sudo: run apt-get install $*"; return 1
    fi
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

# go_install_tool BIN PACKAGE@VERSION: go installs the command PACKAGE at
# VERSION as BIN (in .cache/bin) unless BIN is that version already, as
# the module versions `go version -m` reads from the binary say. It runs
# outside our module, so go.mod and go.sum are never touched.
go_install_tool() {
  local bin="$1" pkg="${2%@*}" version="${2##*@}" tmp
  if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null | awk '$1 == "mod" { print $3 }' | grep -qxF "$version"; then
    return
  fi
  log "installing $(basename "$bin") $version into $(dirname "$bin") (once)"
  mkdir -p "$(dirname "$bin")"
  tmp="$(mktemp -d)"
  (cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod GOBIN="$(dirname "$bin")" go install "$pkg@$version") >&2
  rmdir "$tmp" 2>/dev/null || true
}
