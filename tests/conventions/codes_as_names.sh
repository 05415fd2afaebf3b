#!/usr/bin/env bash
# The rule of scripts/check-conventions that keeps result codes compared as names: it refuses each
# comparison of a vocab::code code with a string literal planted in planted_codes.txt, with its
# line, and accepts the names, other strings, comments and an emitted literal.
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
tests/conventions/planted_codes.txt:8: a code compared with a string literal (compare vocab::code::k_... instead)"
[ "$rc" = 1 ] || { echo "planted comparisons: exit $rc, want 1"; fail=1; }
[ "$got" = "$want" ] || { echo "planted comparisons: got"; echo "$got"; echo "want"; echo "$want"; fail=1; }
got=$(scripts/check-conventions --codes-as-names $(git ls-files 'common/*.cpp' 'common/*.h' 'tools/*.cpp' 'tools/*.h'))
rc=$?
[ "$rc" = 0 ] && [ -z "$got" ] || { echo "common/, tools/: exit $rc: $got"; fail=1; }
grep -q 'k_control_plane_blocked = "ControlPlaneBlocked"' common/doc/vocabulary.h ||
  { echo "vocabulary.h no longer names ControlPlaneBlocked: move this test's planted code"; fail=1; }
[ "$fail" = 0 ] && echo "codes_as_names: ok"
exit $fail
