#!/usr/bin/env bash
# Nodes through the talosconfig endpoint (docs/talos-client.md): prod's nodes read through its control plane
# only give the same facts as read directly; trustcheck and drift judge them alike; a worker as
# endpoint refuses; another cluster's node is told apart from the endpoint; every other tool that
# talks to nodes (trustcheck's recovery, adopt, hold release) goes through the endpoint too, the
# call log showing both hops; credentials writes the endpoints; reclaim stays direct.
# Leaves the lab as it found it: the machine hold release adopts here is removed again.
. "$(dirname "$0")/lib.sh"
I=$ICHOR_BIN/kubectl-ichor-inspect
T=$ICHOR_BIN/kubectl-ichor-trustcheck
D=$ICHOR_BIN/kubectl-ichor-drift
R=$ICHOR_BIN/kubectl-ichor-reclaim
A=$ICHOR_BIN/kubectl-ichor-adopt
H=$ICHOR_BIN/kubectl-ichor-hold
C=$ICHOR_BIN/kubectl-ichor-credentials
NS=ichor-system
TC=$(talosconfig prod)
CP=$(node_addr prod-cp-1); CP2=$(node_addr prod-cp-2); W1=$(node_addr prod-w-1); W2=$(node_addr prod-w-2)
B=$(node_addr lab-b-cp-1)
calls() { sim GET "/nodes/$1/calls"; }
# The facts, without what depends on timing or on the way the node was reached.
facts() { out "$1" | jq -S '[.items[] | del(.status.timings, .spec.endpoint)]'; }

run direct "$I" "$W2" "$W1" "$CP2" "$CP" --talosconfig "$TC" -o json
n0=$(calls prod-cp-1 | jq length); nw0=$(calls prod-w-2 | jq length)
run via "$I" "$W2" "$W1" "$CP2" "$CP" --talosconfig "$TC" --endpoints "$CP" -o json
expect_eq "direct: exit 0" "$(rc direct)" 0
expect_eq "through the endpoint: exit 0" "$(rc via)" 0
expect_eq "through the endpoint: the same facts" "$(facts via)" "$(facts direct)"
expect_eq "through the endpoint: no results" "$(out via | jq -r '.results // [] | length')" 0
expect_eq "through the endpoint: spec.endpoint" "$(out via | jq -r '[.items[].spec.endpoint] | unique | join(",")')" "$CP"
expect_eq "direct: no spec.endpoint" "$(out direct | jq -r '[.items[].spec.endpoint // empty] | length')" 0
# Both hops in the call log: the endpoint got every call with `node`, the worker got its own
# forwarded by the endpoint.
expect_eq "endpoint: got the worker's Version with node metadata" \
  "$(calls prod-cp-1 | jq -r --argjson n "$n0" --arg w "$W2" '[.[$n:][] | select(.node == $w and (.method | endswith("/Version")))] | length')" 1
expect_eq "worker: its Version was forwarded" \
  "$(calls prod-w-2 | jq -r --argjson n "$nw0" '[.[$n:][] | select((.method | endswith("/Version")) and (.proxyFrom // "") != "")] | length')" 1
expect_eq "worker: nothing came to it directly" \
  "$(calls prod-w-2 | jq -r --argjson n "$nw0" '[.[$n:][] | select((.proxyFrom // "") == "")] | length')" 0

# The context says so: a context naming nodes reaches them through its endpoints; --direct not.
# (Its copy holds the client key: never under $OUT, which zz_secrets_scan reads.)
KEYS=$(mktemp -d /tmp/ichor-e2e-endpoints.XXXXXX)
unadopt() {
  kubectl annotate talosmachine -n $NS prod-w-2 ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
  kubectl delete talosmachine -n $NS prod-w-2 --ignore-not-found > /dev/null 2>&1
  kubectl annotate talosconfigpatch -n $NS prod-w-2-adopted ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
  kubectl delete talosconfigpatch -n $NS prod-w-2-adopted --ignore-not-found > /dev/null 2>&1
}
trap 'rm -rf "$KEYS"; unadopt' EXIT
python3 - "$TC" "$KEYS/talosconfig-nodes" "$CP" "$W2" <<'PY'
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
ctx = c["contexts"][c["context"]]
ctx["endpoints"] = [sys.argv[3]]
ctx["nodes"] = [sys.argv[4]]
open(sys.argv[2], "w").write(yaml.safe_dump(c))
PY
chmod 600 "$KEYS/talosconfig-nodes"
run ctxnodes "$I" "$W2" --talosconfig "$KEYS/talosconfig-nodes" -o json
expect_eq "context with nodes: through its endpoint" "$(out ctxnodes | jq -r '.items[0].spec.endpoint')" "$CP"
run ctxdirect "$I" "$W2" --talosconfig "$KEYS/talosconfig-nodes" --direct -o json
expect_eq "context with nodes, --direct: dialled directly" "$(out ctxdirect | jq -r '.items[0].spec.endpoint // "none"')" none
run both "$I" "$W2" --talosconfig "$TC" --direct --endpoints "$CP"
expect_eq "--direct with --endpoints: usage error" "$(rc both)" 2

# trustcheck and drift judge a node read through the endpoint as one read directly.
"$I" "$W2" --talosconfig "$TC" 2>/dev/null | "$T" --cluster prod -o json > "$OUT/t-direct.json" 2>/dev/null
"$I" "$W2" --talosconfig "$TC" --endpoints "$CP" 2>/dev/null | "$T" --cluster prod -o json > "$OUT/t-via.json" 2>/dev/null
verdict() { jq -r '[.items[] | select(.kind == "Inspection") | .status.trust | [.verdict, .clusterID, .talosCA] | map(tostring) | join(",")] | join(";")' "$1"; }
expect_eq "trustcheck: the same verdict" "$(verdict "$OUT/t-via.json")" "$(verdict "$OUT/t-direct.json")"
expect_eq "trustcheck: member through the endpoint" "$(verdict "$OUT/t-via.json")" "Member,true,true"
run_in d_direct "$OUT/t-direct.json" "$D" --cluster prod -o json
run_in d_via "$OUT/t-via.json" "$D" --cluster prod -o json
dclasses() { out "$1" | jq -r '[.results[] | select(.tags["ichor.maesh.dev/class"]) | .tags["ichor.maesh.dev/class"] + ":" + .tags["ichor.maesh.dev/code"]] | unique | join(",")'; }
expect_eq "drift: exit 0 directly" "$(rc d_direct)" 0
expect_eq "drift: exit 0 through the endpoint" "$(rc d_via)" 0
expect_eq "drift: a TalosMachine planned for the worker" \
  "$(out d_direct | jq -r '[.items[] | select(.kind == "TalosMachine") | .spec.address] | join(",")')" "$W2"
expect_eq "drift: the same classes" "$(dclasses d_via)" "$(dclasses d_direct)"
expect_eq "drift: the same objects" "$(out d_via | jq -S '[.items[] | select(.kind != "Inspection")]')" "$(out d_direct | jq -S '[.items[] | select(.kind != "Inspection")]')"

# A worker as endpoint refuses to forward: EndpointRefused, naming both; itself it serves.
run wep "$I" "$W1" "$W2" --talosconfig "$TC" --endpoints "$W2" -o json
expect_eq "worker endpoint: exit 5 (partial: the worker itself is read)" "$(rc wep)" 5
expect_eq "worker endpoint: codes" "$(out wep | jq -r '[.results[].tags["ichor.maesh.dev/code"]] | join(",")')" EndpointRefused
msg=$(out wep | jq -r '.results[0].message')
expect_contains "worker endpoint: names the node" "$msg" "$W1: not reached"
expect_contains "worker endpoint: names the endpoint" "$msg" "the endpoint $W2 does not forward"
expect_eq "worker endpoint: itself read" "$(out wep | jq -r '.items[1].status.mode')" configured

# Another cluster's node behind prod's endpoint: UnknownAuthority on the node, not the endpoint.
run other "$I" "$B" --talosconfig "$TC" --endpoints "$CP" -o json
expect_eq "other cluster behind the endpoint: code" "$(out other | jq -r '.results[0].tags["ichor.maesh.dev/code"]')" UnknownAuthority
expect_contains "other cluster behind the endpoint: names both" "$(out other | jq -r '.results[0].message')" "$B: its Talos API certificate, as the endpoint $CP checked it"
# An endpoint of another cluster refuses prod's client: EndpointRefused.
run refused "$I" "$W2" --talosconfig "$TC" --endpoints "$B" -o json
expect_eq "endpoint of another cluster: code" "$(out refused | jq -r '.results[0].tags["ichor.maesh.dev/code"]')" EndpointRefused
expect_contains "endpoint of another cluster: names both" "$(out refused | jq -r '.results[0].message')" "$W2: not reached: the endpoint $B refused this client"
expect_eq "endpoint of another cluster: trustcheck does not call it a member" \
  "$(out refused | "$T" --cluster prod -o json 2>/dev/null | jq -r '.items[0].status.trust.verdict')" Unreachable

# The hop of one tool's run, from the call logs: how many calls of METHOD (a regex) NODE got
# forwarded by the endpoint, how many it got directly, and how many the endpoint got naming NODE
# (since the counts N_EP, N_NODE). The lab's controller reads a released machine directly, with
# COSI Gets only: Version is the tools' own.
hop() { # hop NODE-NAME NODE-ADDR N_EP N_NODE [METHOD] -> "forwarded direct via-endpoint"
  local f d v m=${5:-.}
  f=$(calls "$1" | jq --argjson n "$4" --arg m "$m" '[.[$n:][] | select((.method | test($m)) and (.proxyFrom // "") != "")] | length')
  d=$(calls "$1" | jq --argjson n "$4" --arg m "$m" '[.[$n:][] | select((.method | test($m)) and (.proxyFrom // "") == "")] | length')
  v=$(calls prod-cp-1 | jq --argjson n "$3" --arg a "$2" --arg m "$m" '[.[$n:][] | select((.method | test($m)) and .node == $a)] | length')
  echo "$f $d $v"
}
marks() { echo "$(calls prod-cp-1 | jq length) $(calls "$1" | jq length)"; }
via_only() { # via_only WHAT "f d v": something forwarded, nothing direct, the endpoint named it
  read -r f d v <<<"$2"
  expect_eq "$1: nothing came to the node directly" "$d" 0
  [ "$f" -gt 0 ] && [ "$v" -ge "$f" ] && pass "$1: $f call(s) forwarded by the endpoint, which got $v naming the node" \
    || fail "$1: forwarded $f, the endpoint got $v naming the node"
}

# trustcheck's only node, the control plane of --recover-from, through the endpoint. (The bundle
# recovered holds the cluster's keys: never under $OUT.)
read -r e0 c0 <<<"$(marks prod-cp-2)"
"$I" "$W2" --talosconfig "$TC" --endpoints "$CP" 2>/dev/null > "$OUT/t-rec-in.json"
run_in trec "$OUT/t-rec-in.json" "$T" --cluster prod --recover-secrets --recover-from "$CP2" \
  --recover-to "$KEYS/recovered.yaml" --talosconfig "$TC" --endpoints "$CP" -o json
expect_eq "trustcheck --recover-from through the endpoint: exit 0" "$(rc trec)" 0
expect_eq "trustcheck --recover-from through the endpoint: member" "$(out trec | jq -r '.items[0].status.trust.verdict')" Member
via_only "trustcheck --recover-from" "$(hop prod-cp-2 "$CP2" "$e0" "$c0")"
read -r e0 c0 <<<"$(marks prod-cp-2)"
run_in trecd "$OUT/t-rec-in.json" "$T" --cluster prod --recover-secrets --recover-from "$CP2" \
  --recover-to "$KEYS/recovered-direct.yaml" --talosconfig "$TC" -o json
read -r f d v <<<"$(hop prod-cp-2 "$CP2" "$e0" "$c0")"
expect_eq "trustcheck --recover-from without --endpoints: dialled directly" "$f $v $((d > 0))" "0 0 1"

# adopt --plan: its inspection and its recovery through the endpoint.
unadopt
read -r e0 c0 <<<"$(marks prod-w-2)"
read -r _ r0 <<<"$(marks prod-cp-2)"
run aplan "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --endpoints "$CP" --plan -o json \
  --recover-secrets --recover-from "$CP2" --recover-to "$KEYS/recovered-adopt.yaml"
expect_eq "adopt --plan through the endpoint: exit 0" "$(rc aplan)" 0
expect_eq "adopt --plan through the endpoint: spec.endpoint" "$(out aplan | jq -r '.items[] | select(.kind == "Inspection") | .spec.endpoint')" "$CP"
via_only "adopt --plan, its inspection" "$(hop prod-w-2 "$W2" "$e0" "$c0")"
via_only "adopt --plan, its recovery" "$(hop prod-cp-2 "$CP2" "$e0" "$r0")"

# hold release: the live zero-drift check reads the node through the endpoint.
out aplan > "$OUT/ep-plan.json"
run happly "$H" apply -f "$OUT/ep-plan.json" --talosconfig "$TC" --yes --backup-dir "$OUT/backups"
expect_eq "hold apply of the plan made through the endpoint: exit 0" "$(rc happly)" 0
read -r e0 c0 <<<"$(marks prod-w-2)"
run hrel "$H" release --cluster prod --talosconfig "$TC" --endpoints "$CP" --machine prod-w-2 --timeout 60s
expect_eq "hold release through the endpoint: exit 0" "$(rc hrel)" 0
expect_eq "hold release through the endpoint: hold released" "$(kubectl get talosmachine -n $NS prod-w-2 -o jsonpath='{.metadata.annotations.ichor\.maesh\.dev/hold-apply}')" ""
via_only "hold release" "$(hop prod-w-2 "$W2" "$e0" "$c0" '/Version$')"
unadopt

# credentials talks to no node: it writes the endpoints given, and the tools reach the nodes
# through them.
run cred "$C" prod --endpoints "$CP" --output-file "$KEYS/talosconfig-cred"
expect_eq "credentials --endpoints: exit 0" "$(rc cred)" 0
expect_eq "credentials --endpoints: the endpoints written" "$(python3 -c 'import sys,yaml; print(",".join(yaml.safe_load(open(sys.argv[1]))["contexts"]["prod"]["endpoints"]))' "$KEYS/talosconfig-cred")" "$CP"
run credbad "$C" prod --endpoints "https://$CP" --output-file "$KEYS/talosconfig-bad"
expect_eq "credentials --endpoints with a URL: usage error" "$(rc credbad)" 2
read -r e0 c0 <<<"$(marks prod-w-2)"
run credi "$I" "$W2" --talosconfig "$KEYS/talosconfig-cred" --endpoints "$CP" -o json
expect_eq "credentials' talosconfig through its endpoint: verified" "$(out credi | jq -r '.items[0].spec.endpoint + " " + .items[0].status.access')" "$CP os:admin"
via_only "inspect with credentials' talosconfig" "$(hop prod-w-2 "$W2" "$e0" "$c0")"

# Reclaim resets only over a direct connection.
r0=$(calls prod-w-1 | jq '[.[] | select(.method | endswith("/Reset"))] | length')
run reclaim "$R" "$W1" --talosconfig "$TC" --cluster prod --endpoints "$CP" --confirm-uuid "$(node_field prod-w-1 uuid)"
expect_eq "reclaim through an endpoint: usage error" "$(rc reclaim)" 2
expect_contains "reclaim through an endpoint: says why" "$(err reclaim)" "reclaim resets only over a direct connection"
expect_eq "reclaim through an endpoint: no reset" "$(calls prod-w-1 | jq '[.[] | select(.method | endswith("/Reset"))] | length')" "$r0"
# ... and a context that names nodes (its endpoint would route inspect) does not route it either:
# reclaim reads the node directly, and refuses the wrong UUID before any reset.
read -r e0 c0 <<<"$(marks prod-w-1)"
run reclaimctx "$R" "$W1" --talosconfig "$KEYS/talosconfig-nodes" --cluster prod --confirm-uuid 01234567-89ab-4def-8123-456789abcdef
expect_eq "reclaim, context with nodes: refused" "$(rc reclaimctx)" 1
read -r f d v <<<"$(hop prod-w-1 "$W1" "$e0" "$c0")"
expect_eq "reclaim, context with nodes: dialled directly (forwarded, via the endpoint, direct > 0)" "$f $v $((d > 0))" "0 0 1"
expect_eq "reclaim, context with nodes: no reset" "$(calls prod-w-1 | jq '[.[] | select(.method | endswith("/Reset"))] | length')" "$r0"
finish
