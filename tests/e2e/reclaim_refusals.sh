#!/usr/bin/env bash
# kubectl ichor reclaim refusals with their exact texts, on a private lab (127.0.57.x; see
# reclaim_lab.inc): an Ichor machine, a quorum break, the last control plane, a node whose calls
# hang, an etcd that hangs, the confirmation, a reader talosconfig, a node in maintenance mode, an
# unknown cluster; none of them resets anything. Then a rejected machine is never changed, and the
# wait for maintenance mode is bounded.
. "$(dirname "$0")/reclaim_lab.inc"
reclaim_lab_up 57
TCP=$(talosconfig prod); TCC=$(talosconfig lab-c); TCD=$(talosconfig lab-d)
resets() { sim GET "/nodes/$1/calls" | jq '[.[] | select(.method | endswith("/Reset"))] | length'; }

# An Ichor machine (approved, prod-w-1).
A=$(node_addr prod-w-1)
run ichor "$R" "$A" --talosconfig "$TCP" --cluster prod --confirm-uuid "$(uuid_of prod-w-1)"
expect_eq "Ichor machine: exit 1" "$(rc ichor)" 1
expect_contains "Ichor machine: text" "$(err ichor)" \
  "kubectl ichor reclaim: error: $A: is an Ichor machine: TalosMachine prod-w-1 of cluster \"prod\" is approved with its UUID $(uuid_of prod-w-1); reclaim does not reset a machine Ichor manages"

# A quorum break: lab-c-cp-3's etcd is down, so lab-c-cp-1 leaving would leave 1 of 2.
C1=$(node_addr lab-c-cp-1)
sim POST /nodes/lab-c-cp-3/etcd '{"state":"down"}' > /dev/null
run quorum "$R" "$C1" --talosconfig "$TCC" --cluster prod --confirm-uuid "$(uuid_of lab-c-cp-1)"
sim POST /nodes/lab-c-cp-3/etcd '{"state":"running"}' > /dev/null
expect_eq "quorum break: exit 1" "$(rc quorum)" 1
expect_contains "quorum break: text" "$(err quorum)" \
  "kubectl ichor reclaim: error: $C1: a reset would break the etcd quorum of cluster \"lab-c\": after it leaves, 2 members remain and need 2 started, but only 1 answer (not answering: lab-c-cp-3)"
expect_contains "quorum break: etcd row" "$(err quorum)" "  etcd:     3 members"

# The last control plane (lab-d, one member); --force-ungraceful does not override it.
D=$(node_addr lab-d-cp-1)
run last "$R" "$D" --talosconfig "$TCD" --cluster prod --confirm-uuid "$(uuid_of lab-d-cp-1)" --force-ungraceful
expect_eq "last control plane: exit 1" "$(rc last)" 1
expect_contains "last control plane: text" "$(err last)" \
  "kubectl ichor reclaim: error: $D: is the last control plane of cluster \"lab-d\" (its only etcd member); a reset would end that cluster"

# A node whose calls hang: the bound of every call.
P=$(node_addr prod-w-2)
sim POST /nodes/prod-w-2/faults '{"method":"*","kind":"hang"}' > /dev/null
t0=$SECONDS
run hang "$R" "$P" --talosconfig "$TCP" --cluster prod --confirm-uuid x --call-timeout 3s
took=$((SECONDS - t0))
sim DELETE /nodes/prod-w-2/faults > /dev/null
expect_eq "hang: exit 4" "$(rc hang)" 4
expect_contains "hang: did not answer within" "$(err hang)" "kubectl ichor reclaim: error: $P did not answer within 3s (Version)"
expect_contains "hang: the Inspect step first" "$(err hang | head -1)" "Inspect $P with talosconfig context \"prod\" (each call gives up after 3s)"
[ "$took" -le 8 ] && pass "hang: ended in ${took}s, inside the bound" || fail "hang: took ${took}s"

# etcd that hangs: refused (graceful) within the bound, naming etcd.
C2=$(node_addr lab-c-cp-2)
sim POST /nodes/lab-c-cp-2/faults '{"method":"/machine.MachineService/EtcdMemberList","kind":"hang"}' > /dev/null
t0=$SECONDS
run etcdhang "$R" "$C2" --talosconfig "$TCC" --cluster prod --confirm-uuid x --call-timeout 3s
took=$((SECONDS - t0))
sim DELETE /nodes/lab-c-cp-2/faults > /dev/null
expect_eq "etcd hangs: exit 1" "$(rc etcdhang)" 1
expect_contains "etcd hangs: text" "$(err etcdhang)" \
  "$C2: refusing a graceful reset: etcd of cluster \"lab-c\" is not running or not answering ($C2 did not answer within 3s (EtcdMemberList)); a graceful reset must leave etcd first"
[ "$took" -le 8 ] && pass "etcd hangs: ended in ${took}s" || fail "etcd hangs: took ${took}s"

# The confirmation: no terminal and no --confirm-uuid; a wrong UUID.
W=$(node_addr lab-c-w-1)
run noconfirm "$R" "$W" --talosconfig "$TCC" --cluster prod
expect_eq "no confirmation: exit 1" "$(rc noconfirm)" 1
expect_contains "no confirmation: text" "$(err noconfirm)" "$W: no terminal to confirm the reset on: pass --confirm-uuid with the node's UUID; nothing was reset"
run wrong "$R" "$W" --talosconfig "$TCC" --cluster prod --confirm-uuid 01234567-89ab-4def-8123-456789abcdef
expect_eq "wrong UUID: exit 1" "$(rc wrong)" 1
expect_contains "wrong UUID: text" "$(err wrong)" "$W: the UUID typed (01234567-89ab-4def-8123-456789abcdef) is not the node's ($(uuid_of lab-c-w-1)); nothing was reset"

# A reader talosconfig cannot reset; a node in maintenance mode has nothing to reset; an unknown cluster.
run reader "$R" "$W" --talosconfig "$(cluster_field lab-c readerTalosconfig)" --cluster prod --confirm-uuid "$(uuid_of lab-c-w-1)"
expect_eq "reader: exit 3" "$(rc reader)" 3
expect_contains "reader: text" "$(err reader)" "$W: a reset needs os:admin, and the talosconfig's certificate has os:reader"
M=$(node_addr maint-1)
run maint "$R" "$M" --talosconfig "$TCP" --cluster prod --confirm-uuid x
expect_eq "maintenance: exit 1" "$(rc maint)" 1
expect_contains "maintenance: text" "$(err maint)" "$M: is in maintenance mode already (it runs no configuration): there is nothing to reset"
run nocluster "$R" "$W" --talosconfig "$TCC" --cluster nope --confirm-uuid x
expect_eq "unknown cluster: exit 3" "$(rc nocluster)" 3
expect_contains "unknown cluster: text" "$(err nocluster)" "TalosCluster \"nope\" not found in namespace \"ichor-system\""

# Usage.
run noaddr "$R" --cluster prod
expect_eq "no address: exit 2" "$(rc noaddr)" 2
run nocl "$R" "$W" --talosconfig "$TCC"
expect_eq "no --cluster: exit 2" "$(rc nocl)" 2
expect_contains "no --cluster: text" "$(err nocl)" "--cluster is required"

for n in prod-w-1 lab-c-cp-1 lab-c-cp-2 lab-d-cp-1 prod-w-2 lab-c-w-1; do
  expect_eq "no Reset reached $n" "$(resets $n)" 0
done

# A node that drops the connection during Reset: an error naming the node, nothing registered;
# the rerun resets it and registers it once (the fault matrix: nothing lost, it converges).
sim POST /nodes/prod-w-2/faults '{"method":"/machine.MachineService/Reset","kind":"drop","count":1}' > /dev/null
run dropped "$R" "$P" --talosconfig "$TCP" --cluster prod --confirm-uuid "$(uuid_of prod-w-2)" -o json
sim DELETE /nodes/prod-w-2/faults > /dev/null
expect_eq "dropped during Reset: exit 4 (unreachable)" "$(rc dropped)" 4
expect_contains "dropped during Reset: names the node and the call" "$(err dropped)" \
  "kubectl ichor reclaim: error: $P: the reset was not accepted: "
expect_eq "dropped during Reset: the node kept its configuration" "$(sim GET /nodes/prod-w-2 | jq -r .mode)" configured
expect_eq "dropped during Reset: nothing registered" "$(k get tm -o json | jq --arg u "$(uuid_of prod-w-2)" '[.items[] | select(.spec.identity.uuid == $u)] | length')" 0
run dropped-rerun "$R" "$P" --talosconfig "$TCP" --cluster prod --confirm-uuid "$(uuid_of prod-w-2)" -o json
expect_eq "dropped, rerun: exit 0" "$(rc dropped-rerun)" 0
expect_eq "dropped, rerun: registered pending once" \
  "$(k get tm -o json | jq -r --arg u "$(uuid_of prod-w-2)" '[.items[] | select(.spec.identity.uuid == $u) | .spec.approval] | join(",")')" Pending
expect_eq "dropped, rerun: in maintenance mode" "$(sim GET /nodes/prod-w-2 | jq -r .mode)" maintenance

# A rejected machine with the UUID does not refuse the reset, and is never changed.
cat <<YAML | k apply -f - > /dev/null
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosMachine
metadata: {name: rejected-w, labels: {ichor.maesh.dev/cluster: prod}}
spec: {cluster: prod, approval: Rejected, address: "$W", identity: {uuid: "$(uuid_of lab-c-w-1)"}}
YAML
rv=$(k get tm rejected-w -o jsonpath='{.metadata.resourceVersion}')
run rejected "$R" "$W" --talosconfig "$TCC" --cluster prod --confirm-uuid "$(uuid_of lab-c-w-1)"
expect_eq "rejected: reset, not registered: exit 5" "$(rc rejected)" 5
expect_contains "rejected: text" "$(err rejected)" "$W: the node was reset, but TalosMachine rejected-w of cluster \"prod\" has this UUID and is Rejected; it is never changed by reclaim, so nothing was registered"
expect_eq "rejected: untouched" "$(k get tm rejected-w -o jsonpath='{.metadata.resourceVersion}')" "$rv"
expect_eq "rejected: graceful reset" "$(sim GET /nodes/lab-c-w-1/calls | jq -c '[.[] | select(.method | endswith("/Reset")) | .request.graceful]')" "[true]"

# The wait for maintenance mode is bounded (a node that never comes back).
sim POST /nodes/lab-c-cp-2/reset-behaviour '{"neverReturn":true}' > /dev/null
t0=$SECONDS
run never "$R" "$C2" --talosconfig "$TCC" --cluster prod --confirm-uuid "$(uuid_of lab-c-cp-2)" --wait-timeout 4s
took=$((SECONDS - t0))
expect_eq "never returns: exit 4" "$(rc never)" 4
expect_contains "never returns: text" "$(err never)" "$C2 did not come back in maintenance mode within 4s (last: "
[ "$took" -le 10 ] && pass "never returns: ended in ${took}s" || fail "never returns: took ${took}s"
expect_eq "never returns: graceful (3 members answer)" "$(sim GET /nodes/lab-c-cp-2/calls | jq -c '[.[] | select(.method | endswith("/Reset")) | .request.graceful]')" "[true]"

expect_eq "no META call on any node" "$(meta_calls)" 0

finish
