# Sourced by the end-to-end tests. The lab is up (ctest fixture "lab", or eval "$(tests/lab/up)"):
# ICHOR_LAB_STATE and KUBECONFIG are set; the tools are in $ICHOR_BIN.
set -uo pipefail
: "${ICHOR_LAB_STATE:?the lab is not up: eval \"\$(tests/lab/up)\"}"
ICHOR_ROOT=${ICHOR_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
ICHOR_BIN=${ICHOR_BIN:-$ICHOR_ROOT/build/bin}
export NO_COLOR=1
LAB=$ICHOR_LAB_STATE/lab.json
CONTROL=$(jq -r .control "$LAB")
test_name=$(basename "$0" .sh)
# Every output of every test is kept here; tests/e2e/zz_secrets_scan.sh reads them all.
OUT=$ICHOR_LAB_STATE/outputs/$test_name
rm -rf "$OUT"; mkdir -p "$OUT"
failures=0; checks=0
# Each scenario a private lab runs keeps its secrets here for the scan (keep_lab_for_scan).
SCANNED=$ICHOR_LAB_STATE-scanned/$test_name
rm -rf "$SCANNED"

# keep_lab_for_scan STATE NAME: copies STATE's lab.json, the bundles, talosconfigs and node
# configurations it names and STATE's kubeconfig to $SCANNED/NAME (0700; they hold secrets).
# tests/lab/up empties STATE, so without the copy tests/e2e/zz_secrets_scan.sh would check every
# output of a test that runs several scenarios against the secrets of its last one only.
keep_lab_for_scan() {
  /usr/bin/python3 - "$1" "$SCANNED/$2" <<'PY'
import json, os, shutil, sys
state, dst = sys.argv[1], sys.argv[2]
shutil.rmtree(dst, ignore_errors=True)
os.makedirs(dst, mode=0o700)
os.chmod(os.path.dirname(dst), 0o700)
j = json.load(open(os.path.join(state, "lab.json")))
n = 0
def keep(p):
    global n
    if not p or not os.path.exists(p):
        return p
    n += 1
    q = os.path.join(dst, "%d-%s" % (n, os.path.basename(p)))
    shutil.copyfile(p, q)
    os.chmod(q, 0o600)
    return q
for c in j.get("clusters", []):
    for f in ("secretsBundle", "talosconfig", "readerTalosconfig"):
        if c.get(f):
            c[f] = keep(c[f])
for nd in j.get("nodes", []):
    if nd.get("config"):
        nd["config"] = keep(nd["config"])
if os.path.exists(os.path.join(state, "kubeconfig")):
    shutil.copyfile(os.path.join(state, "kubeconfig"), os.path.join(dst, "kubeconfig"))
json.dump(j, open(os.path.join(dst, "lab.json"), "w"))
PY
}

node_addr() { jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .address' "$LAB"; }
node_field() { jq -r --arg n "$1" --arg f "$2" '.nodes[] | select(.name == $n) | .[$f]' "$LAB"; }
cluster_field() { jq -r --arg n "$1" --arg f "$2" '.clusters[] | select(.name == $n) | .[$f]' "$LAB"; }
talosconfig() { cluster_field "$1" talosconfig; }

# run NAME CMD...: runs a command, keeping stdout, stderr and the exit code under $OUT/NAME.*
run() {
  local name=$1; shift
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err" < /dev/null
  echo $? > "$OUT/$name.rc"
}
# run_in NAME INPUT CMD...: the same with INPUT on stdin
run_in() {
  local name=$1 input=$2; shift 2
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err" < "$input"
  echo $? > "$OUT/$name.rc"
}
out() { cat "$OUT/$1.out"; }
err() { cat "$OUT/$1.err"; }
rc() { cat "$OUT/$1.rc"; }

pass() { checks=$((checks + 1)); echo "ok   $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL $*"; }
expect_eq() { # expect_eq WHAT GOT WANT
  if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: got [$2], want [$3]"; fi
}
expect_contains() { # expect_contains WHAT HAYSTACK NEEDLE
  if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1: [$3] not in: $(printf '%s' "$2" | head -c 800)"; fi
}
# expect_golden_plan WHAT RUN FILE: the JSON plan that run RUN printed, in the form
# tests/golden/plans/normalize.jq keeps, against tests/golden/plans/FILE; UPDATE_GOLDEN=1 rewrites
# FILE from it (review the diff before committing).
expect_golden_plan() {
  local want=$ICHOR_ROOT/tests/golden/plans/$3 got
  got=$(out "$2" | jq -S -f "$ICHOR_ROOT/tests/golden/plans/normalize.jq") || { fail "$1: the plan is not JSON"; return; }
  if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
    printf '%s\n' "$got" > "$want"
    pass "$1 (rewritten: $want)"
  elif [ ! -f "$want" ]; then
    fail "$1: no golden plan $want (UPDATE_GOLDEN=1 writes it)"
  elif diff -u "$want" <(printf '%s\n' "$got") > "$OUT/$2.golden.diff"; then
    pass "$1"
  else
    fail "$1: differs from $want: $(head -40 "$OUT/$2.golden.diff")"
  fi
}
expect_not_contains() {
  if [[ "$2" != *"$3"* ]]; then pass "$1"; else fail "$1: [$3] should not appear"; fi
}

# The sim's control API.
# A setting no patch can carry (class C, CADiffers): a Kubernetes CA of another cluster accepted
# beside the bundle's. other_ca_patch sets it, other_ca_delete removes it again.
OTHER_CA=LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJxekNDQVZHZ0F3SUJBZ0lVUXBWRHUxdnQxNHJBRlV2N1JXbzJQZTNKRTk4d0NnWUlLb1pJemowRUF3SXcKS2pFWU1CWUdBMVVFQ2d3UFlXNXZkR2hsY2kxamJIVnpkR1Z5TVE0d0RBWURWUVFEREFWMFlXeHZjekFnRncweQpOakV5TURJd05UUTVNVEZhR0E4eU1USTJNVEV3T0RBMU5Ea3hNVm93S2pFWU1CWUdBMVVFQ2d3UFlXNXZkR2hsCmNpMWpiSFZ6ZEdWeU1RNHdEQVlEVlFRRERBVjBZV3h2Y3pCWk1CTUdCeXFHU000OUFnRUdDQ3FHU000OUF3RUgKQTBJQUJPRXRxNERvalZtM1J0OHFEdmlkNW9SOFdXK1ZIUUwxK1JzZzI4VVpJekhnc2Q3a3d2ZzVTbE5VWnJqSgp1V2RZb2RiYSt0SHB4TmU3QW1vdmZiSm4rNmVqVXpCUk1CMEdBMVVkRGdRV0JCVExaZXVManp2RDdydFFSV2Y2CnVhNjZsYVREdkRBZkJnTlZIU01FR0RBV2dCVExaZXVManp2RDdydFFSV2Y2dWE2NmxhVER2REFQQmdOVkhSTUIKQWY4RUJUQURBUUgvTUFvR0NDcUdTTTQ5QkFNQ0EwZ0FNRVVDSVFEN2FRWStTS0RCbkhUZmptZFpYclFBN2ovRApoSDNpbjJwMVlVSmd3cFlPNUFJZ1pRUDFnSU1sRnVhbXk3cXBOSnpUWkh4U0hoMkcxNFI4NGJEQ0hRa3Q4d0k9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K
other_ca_patch() { printf 'cluster:\n  acceptedCAs:\n    - crt: %s\n' "$OTHER_CA"; }
other_ca_delete() { printf 'cluster:\n  acceptedCAs:\n    $patch: delete\n'; }
sim() { # sim METHOD PATH [JSON]
  if [ $# -ge 3 ]; then curl -fsS -X "$1" -H 'Content-Type: application/json' -d "$3" "$CONTROL$2"
  else curl -fsS -X "$1" "$CONTROL$2"; fi
}

finish() {
  echo "$test_name: $((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ] && [ "$checks" -gt 0 ]
  exit $?
}

# fault_proxy DIR [FLAGS...]: starts the lab's kube-fault-proxy (docs/lab.md) in front of the lab's
# apiserver with its files in DIR (DIR/kubeconfig for the tool under test, DIR/requests.log,
# DIR/proxy.json) and waits until it serves. DIR must not be under $OUT: the kubeconfig holds the
# admin key, and zz_secrets_scan reads every output. Recorded in the lab's pids, so tests/lab/down
# stops it if the test does not (fault_proxy_stop DIR).
fault_proxy() {
  local dir=$1 pid i; shift
  rm -rf "$dir"; mkdir -p "$dir"
  setsid "$ICHOR_ROOT/build/lab/kube-fault-proxy" --state "$ICHOR_LAB_STATE" --dir "$dir" "$@" \
    < /dev/null > "$dir/proxy.stderr" 2>&1 &
  pid=$!
  printf '%s kube-fault-proxy\n' "$pid" >> "$ICHOR_LAB_STATE/pids"
  for i in $(seq 100); do
    [ -s "$dir/proxy.json" ] && return 0
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  echo "kube-fault-proxy did not start: $(cat "$dir/proxy.stderr")" >&2
  return 1
}
fault_proxy_stop() { # fault_proxy_stop DIR: SIGTERM, then wait until it removed DIR/proxy.json
  local pid i
  [ -s "$1/proxy.json" ] || return 0
  pid=$(jq -r .pid "$1/proxy.json")
  kill -TERM "$pid" 2> /dev/null
  for i in $(seq 50); do [ -e "$1/proxy.json" ] || return 0; sleep 0.1; done
}
# fault_proxy_log DIR JQ-FILTER: the request log as one JSON array, through a jq filter.
fault_proxy_log() { jq -rs "$2" "$1/requests.log"; }
