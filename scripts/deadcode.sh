#!/usr/bin/env bash
# Fails on dead code: a function of the module that nothing which runs
# reaches. deadcode (golang.org/x/tools/cmd/deadcode at a pinned version,
# go install'ed into .cache/bin once) finds what is reachable from a set of
# roots, calls through interfaces included; two passes set the roots:
#
#   - the packages the binaries link (go list -deps ./cmd/...), with the
#     binaries' mains as the roots: a function there that only tests call
#     is dead, since a test of code that ships nowhere checks nothing a
#     user runs;
#   - the test-support packages, which no binary links (fakes, test
#     servers, the store conformance suite), with the tests as the roots:
#     a helper no test calls is dead.
#
# Exported and unexported functions alike; the whole module is analysed
# whatever packages the caller tests, since reachability is a property of
# the whole program. Each ALLOWED argument, PACKAGE.FUNC or
# PACKAGE.TYPE.METHOD with the package's path inside the module
# (actuator/volcengine.Secret.String), is kept although it is reported;
# the Makefile's DEADCODE_ALLOW lists them, each with its reason. An
# allowed name that is no longer reported fails too, so the list stays
# true.
#
# Usage: scripts/deadcode.sh [ALLOWED...]
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
log() { echo "deadcode.sh: $*" >&2; }
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

deadcode_version="v0.52.0"
deadcode="$root/.cache/bin/deadcode"
go_install_tool "$deadcode" "golang.org/x/tools/cmd/deadcode@$deadcode_version"

module="$(go list -m)"
linked="$(go list -deps ./cmd/... | grep -E "^$module(/|\$)" | sort)"
support="$(comm -23 <(go list ./... | sort) <(echo "$linked"))"

# packages_re LIST: a regexp matching exactly the import paths of LIST.
packages_re() { echo "^($(sed 's/[.]/\\./g' | paste -sd'|' -))\$"; }

# dead ROOTS [FLAGS]: one line per unreachable function of the packages
# -filter selects, "FILE:LINE:COL: PACKAGE.NAME: unreachable from ROOTS",
# the package relative to the module.
dead() {
  local roots="$1"
  shift
  "$deadcode" "$@" -f '{{range .Funcs}}{{printf "%s: %s.%s\n" .Position $.Path .Name}}{{end}}' ./... |
    sed "s|: $module/\([^ ]*\)\$|: \1: unreachable from $roots|"
}

report="$(dead "the binaries" -filter "$(packages_re <<<"$linked")")"
if [ -n "$support" ]; then
  report+=$'\n'"$(dead "the tests" -test -filter "$(packages_re <<<"$support")")"
fi

declare -A allowed=() seen=()
for name in "$@"; do allowed[$name]=1; done
status=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  name="${line%: unreachable from *}"
  name="${name##*: }"
  if [ -n "${allowed[$name]:-}" ]; then
    seen[$name]=1
    continue
  fi
  echo "$line"
  status=1
done <<<"$report"
for name in "$@"; do
  if [ -z "${seen[$name]:-}" ]; then
    echo "DEADCODE_ALLOW: $name is not reported dead: remove it from the list"
    status=1
  fi
done
if [ "$status" -ne 0 ]; then
  echo "deadcode: remove the functions above, or list a deliberate one in the Makefile's DEADCODE_ALLOW with its reason"
fi
exit "$status"
