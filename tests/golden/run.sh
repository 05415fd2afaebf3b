#!/usr/bin/env bash
# Golden directories: tests/golden/<tool>/<case>/ with
#   args          the arguments, one per line (after the binary kubectl-ichor-<tool>)
#   input         standard input (optional; /dev/null when absent)
#   expected.out  expected standard output
#   expected.err  expected standard error (optional: when absent, stderr is not compared)
#   expected.rc   expected exit status (optional, default 0)
# Runs every case (or those under the folders given) and diffs. UPDATE_GOLDEN=1 rewrites the
# expected files from what the tools print now (review the diff before committing).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${ICHOR_BIN:-$here/../../build/bin}
fail=0; n=0
if [ $# -gt 0 ]; then
  cases=$(find "$@" -mindepth 1 -maxdepth 1 -type d | sort)   # tool folders given: their cases
else
  cases=$(find "$here" -mindepth 2 -maxdepth 2 -type d | sort)
fi
for c in $cases; do
  c=$(cd "$c" && pwd)
  [ -f "$c/args" ] || continue
  tool=$(basename "$(dirname "$c")")
  mapfile -t args < "$c/args"
  input=/dev/null; [ -f "$c/input" ] && input=$c/input
  out=$(mktemp); err=$(mktemp)
  (cd "$c" && NO_COLOR=1 "$bin/kubectl-ichor-$tool" "${args[@]}" < "$input" > "$out" 2> "$err"); rc=$?
  n=$((n + 1))
  if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$out" "$c/expected.out"; cp "$err" "$c/expected.err"; echo "$rc" > "$c/expected.rc"
  else
    want_rc=0; [ -f "$c/expected.rc" ] && want_rc=$(cat "$c/expected.rc")
    ok=1
    diff -u "$c/expected.out" "$out" > /dev/null || { echo "FAIL $tool/$(basename "$c"): stdout differs:"; diff -u "$c/expected.out" "$out" | head -40; ok=0; }
    if [ -f "$c/expected.err" ]; then
      diff -u "$c/expected.err" "$err" > /dev/null || { echo "FAIL $tool/$(basename "$c"): stderr differs:"; diff -u "$c/expected.err" "$err" | head -20; ok=0; }
    fi
    [ "$rc" = "$want_rc" ] || { echo "FAIL $tool/$(basename "$c"): exit $rc, want $want_rc"; ok=0; }
    [ $ok = 1 ] || fail=$((fail + 1))
  fi
  rm -f "$out" "$err"
done
echo "golden: $((n - fail)) passed, $fail failed"
[ $n -gt 0 ] || { echo "golden: no cases found"; exit 1; }
[ $fail = 0 ]
