#!/usr/bin/env bash
# The rule of scripts/check-conventions that keeps result codes names: it refuses each vocab::code
# code written as a string literal in planted_codes.txt, compared or emitted, with its line, and
# accepts the names, other strings, comments and the same word in another role (a help group, a
# Talos method, a condition's status, which is not a vocab::code code).
set -uo pipefail
cd "$(dirname "$0")/../.."
fail=0
got=$(scripts/check-conventions --codes-as-names tests/conventions/planted_codes.txt)
rc=$?
want="tests/conventions/planted_codes.txt:3: a code compared with a string literal (compare vocab::code::k_... instead)
tests/conventions/planted_codes.txt:4: a code compared with a string literal (compare vocab::code::k_... instead)
tests/conventions/planted_codes.txt:5: a code compared with a string literal (compare vocab::code::k_... instead)
tests/conventions/planted_codes.txt:6: a code compared with a string literal (compare vocab::code::k_... instead)
tests/conventions/planted_codes.txt:7: a code compared with a string literal (compare vocab::code::k_... instead)
tests/conventions/planted_codes.txt:8: a code compared with a string literal (compare vocab::code::k_... instead)
tests/conventions/planted_codes.txt:13: a code written as a string literal (emit vocab::code::k_... instead)
tests/conventions/planted_codes.txt:14: a code written as a string literal (emit vocab::code::k_... instead)
tests/conventions/planted_codes.txt:15: a code written as a string literal (emit vocab::code::k_... instead)
tests/conventions/planted_codes.txt:16: a code written as a string literal (emit vocab::code::k_... instead)"
[ "$rc" = 1 ] || { echo "planted literals: exit $rc, want 1"; fail=1; }
[ "$got" = "$want" ] || { echo "planted literals: got"; echo "$got"; echo "want"; echo "$want"; fail=1; }
got=$(scripts/check-conventions --codes-as-names $(git ls-files 'common/*.cpp' 'common/*.h' 'tools/*.cpp' 'tools/*.h'))
rc=$?
[ "$rc" = 0 ] && [ -z "$got" ] || { echo "common/, tools/: exit $rc: $got"; fail=1; }
for name in 'k_control_plane_blocked = "ControlPlaneBlocked"' 'k_no_bundle = "NoBundle"' \
  'k_sysctl = "Sysctl"' 'k_timeout = "Timeout"' 'k_plan = "Plan"'; do
  grep -q "$name" common/doc/vocabulary.h ||
    { echo "vocabulary.h no longer has $name: move this test's planted code"; fail=1; }
done
grep -q '"Unknown"' common/doc/vocabulary.h &&
  { echo "vocabulary.h names Unknown: the planted condition status is then a code"; fail=1; }
[ "$fail" = 0 ] && echo "codes_as_names: ok"
exit $fail
