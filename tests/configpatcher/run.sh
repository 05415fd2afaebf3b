#!/usr/bin/env bash
# The patch engine against Talos's own configpatcher test cases (cases.cpp), for every machinery
# version the lab uses. The cases are read from the Go module cache at test time, never copied
# into the repository; a version missing from the cache is downloaded through the Go module proxy.
#   tests/configpatcher/run.sh BINARY    run configpatcher-cases over each version
#   tests/configpatcher/run.sh --fetch   only bring the versions into the module cache (setup)
set -euo pipefail

# v1.14.1 is the lab's module (tests/lab/go.mod); v1.13.9 is what the lab's 1.13 nodes run.
versions=(v1.13.9 v1.14.1)
module=github.com/siderolabs/talos/pkg/machinery

dir_of() {
  # Outside any module, so that tests/lab/go.mod is neither read nor changed.
  (cd / && GOFLAGS= go mod download -json "$module@$1") | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

args=()
for v in "${versions[@]}"; do
  d=$(dir_of "$v")
  if [ -z "$d" ] || [ ! -f "$d/config/configpatcher/apply_test.go" ]; then
    echo "configpatcher: $module@$v is not in the Go module cache and could not be downloaded" >&2
    exit 1
  fi
  args+=("$v=$d")
done
[ "${1:-}" = "--fetch" ] && exit 0
exec "$1" "${args[@]}"
