#!/usr/bin/env bash
# The rule of scripts/check-conventions that keeps the functions of common/ to 80 lines: it
# reports each long function planted in planted_long.txt at its first line, and accepts a function
# of exactly 80 lines, a shell function inside a raw string and a long struct.
set -uo pipefail
cd "$(dirname "$0")/../.."
fail=0
got=$(scripts/check-conventions --function-length-only tests/conventions/planted_long.txt)
rc=$?
want="tests/conventions/planted_long.txt:5: eighty_one has 81 lines (keep a function to 80)
tests/conventions/planted_long.txt:88: wrapped has 81 lines (keep a function to 80)
tests/conventions/planted_long.txt:461: ninety has 90 lines (keep a function to 80)"
[ "$rc" = 1 ] || { echo "planted functions: exit $rc, want 1"; fail=1; }
[ "$got" = "$want" ] || { echo "planted functions: got"; echo "$got"; echo "want"; echo "$want"; fail=1; }
got=$(scripts/check-conventions --function-length-only $(git ls-files 'common/*.cpp'))
rc=$?
[ "$rc" = 0 ] && [ -z "$got" ] || { echo "common/: exit $rc: $got"; fail=1; }
[ "$fail" = 0 ] && echo "function_length: ok"
exit $fail
