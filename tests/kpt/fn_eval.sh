#!/usr/bin/env bash
# The tools as KRM functions under the real kpt (docs/stream.md, "Under kpt"), offline: a package
# of saved Inspections (tests/golden/drift/data), trustcheck with the secrets bundle, then drift
# with --cluster-file/--patches-file/--secrets-bundle, every flag given as KEY=VALUE after --.
# Checks what kpt writes back into the package, what it reports, and its exit code.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${ICHOR_BIN:-$root/build/bin}
data=$root/tests/golden/drift/data
command -v kpt > /dev/null || { echo "FAIL kpt is not installed (kpt version)"; exit 1; }
command -v jq > /dev/null || { echo "FAIL jq is needed"; exit 1; }
export NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0; checks=0
pass() { checks=$((checks + 1)); echo "ok   $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL $*"; }
expect_eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: got [$2], want [$3]"; fi; }
expect_contains() {
  if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1: [$3] not in: $(printf '%s' "$2" | head -c 600)"; fi
}

# A package directory holding the items of a saved list as a stream of documents (kpt reads files
# of resources; a file holding a ResourceList would be one resource of kind ResourceList).
package() { # package DIR LIST.yaml
  mkdir -p "$1"
  "$bin/kubectl-ichor-inspect" -f "$2" -o json | jq -r '.items[] | "---\n" + tojson' > "$1/nodes.yaml"
}
# The documents of the files given, as one JSON array (read back with the suite's own reader).
docs() { for f in "$@"; do echo ---; cat "$f"; echo; done | "$bin/kubectl-ichor-inspect" -f - -o json | jq -S '.items'; }
# fn NAME DIR VERB KEY=VALUE...: kpt fn eval DIR --exec kubectl-ichor-VERB -- KEY=VALUE...,
# keeping kpt's output, exit code and results (--results-dir) under $tmp/NAME.*
fn() {
  local name=$1 dir=$2 verb=$3; shift 3
  kpt fn eval "$dir" --exec "$bin/kubectl-ichor-$verb" --results-dir "$tmp/$name.results" \
    --truncate-output=false -- "$@" > "$tmp/$name.out" 2>&1 < /dev/null
  echo $? > "$tmp/$name.rc"
}
rc() { cat "$tmp/$1.rc"; }
said() { cat "$tmp/$1.out"; }
# kpt's FunctionResultList for the run, as JSON.
results() { "$bin/kubectl-ichor-inspect" -f "$tmp/$1.results/results.yaml" -o json | jq '.items[0]'; }

bundle=$tmp/secrets.yaml # 0600, so that no warning about its mode reaches kpt's stderr
cp "$root/tests/golden/render/secrets.yaml" "$bundle"; chmod 600 "$bundle"
offline=(cluster=prod "cluster-file=$data/cluster.yaml" "patches-file=$data/objects.yaml"
         "secrets-bundle=$bundle")

# trustcheck: the flags from the functionConfig; every node gets status.trust, in place.
package "$tmp/nodes" "$data/inspected.yaml"
fn trust "$tmp/nodes" trustcheck cluster=prod "secrets-bundle=$bundle"
expect_eq "trustcheck: kpt passes" "$(rc trust)" 0
expect_contains "trustcheck: kpt says PASS" "$(said trust)" '[PASS] "'"$bin/kubectl-ichor-trustcheck"'"'
expect_eq "trustcheck: the package is still one file" "$(cd "$tmp/nodes" && find . -type f | sort | tr '\n' ' ')" "./nodes.yaml "
expect_eq "trustcheck: every node a Member of prod" \
  "$(docs "$tmp/nodes/nodes.yaml" | jq -r '[.[] | .status.trust.verdict + "/" + .status.trust.cluster] | unique | join(",")')" "Member/prod"
if diff <(docs "$tmp/nodes/nodes.yaml") <("$bin/kubectl-ichor-inspect" -f "$data/trusted.yaml" -o json | jq -S .items) > "$tmp/trust.diff"; then
  pass "trustcheck: the package holds what the pipe gives (tests/golden/drift/data/trusted.yaml)"
else
  fail "trustcheck: the package differs from the pipe's output: $(head -c 600 "$tmp/trust.diff")"
fi
expect_eq "trustcheck: no functionConfig, ResourceList or kpt annotation written" \
  "$(grep -c -E 'functionConfig|ResourceList|config\.kubernetes\.io' "$tmp/nodes/nodes.yaml")" 0

# drift over the checked package: two machines blocked, so the function fails (exit 5, partial):
# kpt reports every result and the exit code, and leaves the package as it was.
cp -r "$tmp/nodes" "$tmp/nodes.before"
fn partial "$tmp/nodes" drift "${offline[@]}"
expect_eq "drift, partial: kpt fails" "$(rc partial)" 1
expect_contains "drift, partial: the blocked machine is reported" "$(said partial)" "[error] adopt.ichor.maesh.dev/v1alpha1/Inspection/127.0.44.15"
expect_contains "drift, partial: the plan's closing result is reported" "$(said partial)" "plan: 3 machines to adopt"
expect_contains "drift, partial: kpt shows the exit code" "$(said partial)" "Exit code: 5"
messages() { jq -r '[.results[] | .severity + " " + .message] | join("\n")'; }
expect_eq "drift, partial: kpt's results are the pipe's (tests/golden/drift/plan-yaml)" \
  "$(results partial | jq '.items[0]' | messages)" \
  "$("$bin/kubectl-ichor-inspect" -f "$root/tests/golden/drift/plan-yaml/expected.out" -o json | messages)"
expect_eq "drift, partial: kpt's results hold the tool's exit code" "$(results partial | jq -r '.items[0].exitCode')" 5
if diff -r "$tmp/nodes.before" "$tmp/nodes" > /dev/null; then pass "drift, partial: the package is unchanged"
else fail "drift, partial: the package changed: $(cd "$tmp/nodes" && find . -type f)"; fi

# drift over one node that plans cleanly: exit 0, the objects written next to the Inspection,
# each the object -o objects prints.
package "$tmp/e1" "$data/e1.yaml"
"$bin/kubectl-ichor-drift" -f "$data/e1.yaml" --cluster prod --cluster-file "$data/cluster.yaml" \
  --patches-file "$data/objects-sysctl.yaml" --secrets-bundle "$bundle" -o objects > "$tmp/e1.objects.yaml" 2> /dev/null
fn e1 "$tmp/e1" drift cluster=prod "cluster-file=$data/cluster.yaml" "patches-file=$data/objects-sysctl.yaml" "secrets-bundle=$bundle"
expect_eq "drift, E1: kpt passes" "$(rc e1)" 0
expect_contains "drift, E1: the plan is reported" "$(said e1)" "[info]: plan: 1 machine to adopt: prod-w-2 (worker, /dev/sda)"
expect_eq "drift, E1: the files" "$(cd "$tmp/e1" && find . -type f | sort | tr '\n' ' ')" \
  "./ichor-system/talosconfigpatch_prod-w-2-adopted.yaml ./ichor-system/talosmachine_prod-w-2.yaml ./nodes.yaml ./planbasis_prod.yaml "
expect_eq "drift, E1: the PlanBasis records the machine it creates" \
  "$(docs "$tmp/e1/planbasis_prod.yaml" | jq -r '.[0].kind + " " + .[0].spec.nodes[0].address')" "PlanBasis 127.0.44.13"
expect_eq "drift, E1: the written objects are those -o objects prints" \
  "$(docs "$tmp"/e1/ichor-system/*.yaml | jq -c 'sort_by(.kind)')" "$(docs "$tmp/e1.objects.yaml" | jq -c 'sort_by(.kind)')"
expect_eq "drift, E1: the machine is held" \
  "$(docs "$tmp/e1/ichor-system/talosmachine_prod-w-2.yaml" | jq -r '.[0].metadata.annotations | keys | join(",")')" "ichor.maesh.dev/hold-apply"
expect_eq "drift, E1: the Inspection stays" "$(docs "$tmp/e1/nodes.yaml" | jq -r '.[] | .kind + "/" + .metadata.name')" "Inspection/127.0.44.13"

# Run again over its own output: drift replaces its planned objects, nothing moves.
cp -r "$tmp/e1" "$tmp/e1.before"
fn e1_again "$tmp/e1" drift cluster=prod "cluster-file=$data/cluster.yaml" "patches-file=$data/objects-sysctl.yaml" "secrets-bundle=$bundle"
expect_eq "drift, E1 again: kpt passes" "$(rc e1_again)" 0
if diff -r "$tmp/e1.before" "$tmp/e1" > "$tmp/again.diff"; then pass "drift, E1 again: the package is unchanged"
else fail "drift, E1 again: the package changed: $(head -c 600 "$tmp/again.diff")"; fi

# A switch: add-machine=true is --add-machine (the refusal words change); false leaves it out.
package "$tmp/blocked" "$data/blocked.yaml"
fn add "$tmp/blocked" drift "${offline[@]}" add-machine=true
expect_contains "add-machine=true: --add-machine's words" "$(said add)" "every machine is refused or blocked (127.0.44.15, 127.0.44.17); nothing was written"
fn noadd "$tmp/blocked" drift "${offline[@]}" add-machine=false
expect_contains "add-machine=false: the plain words" "$(said noadd)" "nothing to adopt: 127.0.44.15, 127.0.44.17 refused or blocked"

# Usage errors under kpt: exit 2, the message on stderr with a hint in kpt's terms.
fn nocluster "$tmp/blocked" trustcheck "secrets-bundle=$bundle"
expect_eq "no cluster: kpt fails" "$(rc nocluster)" 1
expect_eq "no cluster: exit 2 in kpt's results" "$(results nocluster | jq -r '.items[0].exitCode')" 2
expect_contains "no cluster: the message" "$(results nocluster | jq -r '.items[0].stderr')" "kubectl ichor trustcheck: error: --cluster is required"
expect_contains "no cluster: the hint in kpt's terms" "$(results nocluster | jq -r '.items[0].stderr')" "KEY=VALUE in the functionConfig (kpt fn eval DIR --exec kubectl-ichor-trustcheck -- cluster=NAME)"
fn unknown "$tmp/blocked" trustcheck cluster=prod "secrets-bundle=$bundle" colour=red
expect_contains "unknown key: named" "$(results unknown | jq -r '.items[0].stderr')" "colour"
expect_eq "unknown key: exit 2" "$(results unknown | jq -r '.items[0].exitCode')" 2

echo "kpt fn eval: $((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ] && [ "$checks" -gt 0 ]
