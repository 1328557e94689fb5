#!/usr/bin/env bash
# Installs headless Chromium for prewarm's page tests (the status page of
# `forecaster serve`, driven over the DevTools protocol by internal/chromium).
#
#   scripts/chromium.sh install   apt-get install chromium when it is missing
#                                 (Debian's package; CI has apt)
#   scripts/chromium.sh env       install if needed, then print on stdout ONLY:
#                                   PREWARM_CHROMIUM=/usr/bin/chromium
#
# scripts/test.sh exports that line and PREWARM_REQUIRE_CHROMIUM=1, so the
# page tests fail instead of skipping when the browser is missing. The tests
# start the browser themselves (headless, a throw-away profile, loopback
# only); nothing is left running.
set -euo pipefail

log() { echo "chromium.sh: $*" >&2; }

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

find_browser() {
  local name
  for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  done
  return 1
}

install() {
  if find_browser >/dev/null; then return; fi
  log "installing Debian's chromium package"
  apt_install chromium fonts-dejavu-core
  find_browser >/dev/null || { log "apt-get install chromium did not provide a chromium binary"; return 1; }
}

env_lines() {
  install
  local bin
  bin="$(find_browser)"
  # Fail here, with the browser's own words, rather than in every test.
  if ! "$bin" --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1 && ! "$bin" --version >/dev/null 2>&1; then
    log "$bin does not run: $("$bin" --version 2>&1 | tail -n 3)"
    return 1
  fi
  echo "PREWARM_CHROMIUM=$bin"
}

case "${1:-}" in
  install) install ;;
  env) env_lines ;;
  *) echo "usage: $0 install|env" >&2; exit 2 ;;
esac
