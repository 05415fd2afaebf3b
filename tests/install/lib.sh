# Sourced by the tests in tests/install: counters and assertions (the same words as tests/e2e/lib.sh).
set -uo pipefail
failures=0 checks=0
pass() { checks=$((checks + 1)); echo "ok   $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL $*"; }
expect_eq() { # expect_eq WHAT GOT WANT
  if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: got [$2], want [$3]"; fi
}
expect_contains() { # expect_contains WHAT HAYSTACK NEEDLE
  if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1: [$3] not in: $(printf '%s' "$2" | head -c 800)"; fi
}
finish() {
  echo "$(basename "$0" .sh): $((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ] && [ "$checks" -gt 0 ]
  exit $?
}
# The suite's executables: what cmake --install, the man pages and the release all carry.
ICHOR_TOOLS="kubectl-ichor kubectl-ichor-adopt kubectl-ichor-credentials kubectl-ichor-discovery kubectl-ichor-drift kubectl-ichor-hold kubectl-ichor-inspect kubectl-ichor-reclaim kubectl-ichor-trustcheck"
