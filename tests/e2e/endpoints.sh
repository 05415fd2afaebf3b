#!/usr/bin/env bash
# Nodes through the talosconfig endpoint (issue 16): prod's nodes read through its control plane
# only give the same facts as read directly; trustcheck and drift judge them alike; a worker as
# endpoint refuses; another cluster's node is told apart from the endpoint; reclaim refuses.
. "$(dirname "$0")/lib.sh"
I=$ICHOR_BIN/kubectl-ichor-inspect
T=$ICHOR_BIN/kubectl-ichor-trustcheck
D=$ICHOR_BIN/kubectl-ichor-drift
R=$ICHOR_BIN/kubectl-ichor-reclaim
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
KEYS=$(mktemp -d /tmp/ichor-e2e-endpoints.XXXXXX); trap 'rm -rf "$KEYS"' EXIT
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
expect_eq "drift: exit 0 through the endpoint" "$(rc d_via)" "$(rc d_direct)"
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

# Reclaim resets only over a direct connection.
r0=$(calls prod-w-1 | jq '[.[] | select(.method | endswith("/Reset"))] | length')
run reclaim "$R" "$W1" --talosconfig "$TC" --cluster prod --endpoints "$CP" --confirm-uuid "$(node_field prod-w-1 uuid)"
expect_eq "reclaim through an endpoint: usage error" "$(rc reclaim)" 2
expect_contains "reclaim through an endpoint: says why" "$(err reclaim)" "reclaim resets only over a direct connection"
expect_eq "reclaim through an endpoint: no reset" "$(calls prod-w-1 | jq '[.[] | select(.method | endswith("/Reset"))] | length')" "$r0"
finish
