#!/usr/bin/env bash
# The rule of scripts/check-conventions that keeps ApplyConfiguration to dry runs: it refuses each
# call planted in planted_apply.txt, with its line, and accepts the client's own dry run.
set -uo pipefail
cd "$(dirname "$0")/../.."
fail=0
got=$(scripts/check-conventions --dry-run-only tests/conventions/planted_apply.txt)
rc=$?
want="tests/conventions/planted_apply.txt:10: dry_run set to other than true on an ApplyConfiguration request
tests/conventions/planted_apply.txt:14: ApplyConfiguration without dry_run (set_dry_run(true) on its request first)
tests/conventions/planted_apply.txt:24: ApplyConfiguration without dry_run (set_dry_run(true) on its request first)
tests/conventions/planted_apply.txt:35: ApplyConfiguration without dry_run (set_dry_run(true) on its request first)
tests/conventions/planted_apply.txt:42: ApplyConfiguration without dry_run (set_dry_run(true) on its request first)"
[ "$rc" = 1 ] || { echo "planted calls: exit $rc, want 1"; fail=1; }
[ "$got" = "$want" ] || { echo "planted calls: got"; echo "$got"; echo "want"; echo "$want"; fail=1; }
got=$(scripts/check-conventions --dry-run-only common/talos/client_calls.cpp)
rc=$?
[ "$rc" = 0 ] && [ -z "$got" ] || { echo "client_calls.cpp: exit $rc: $got"; fail=1; }
grep -q 'PrepareAsyncApplyConfiguration' common/talos/client_calls.cpp ||
  { echo "client_calls.cpp no longer sends the dry run: move this test's accepted case"; fail=1; }
[ "$fail" = 0 ] && echo "dry_run_only: ok"
exit $fail
