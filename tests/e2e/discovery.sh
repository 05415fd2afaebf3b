#!/usr/bin/env bash
# kubectl ichor discovery add on the lab (docs/design.md, "A ninth tool"; ADR 0128 decision 2, the
# discovery hint): the address goes into spec.discovery.addresses once, a malformed one is refused
# before any write, and the probe says what becomes of the machine: maintenance mode (discovery's),
# this cluster's PKI (adopt --add-machine), another cluster's (reclaim), no answer. Leaves the lab's
# TalosCluster as it found it.
. "$(dirname "$0")/lib.sh"
D=$ICHOR_BIN/kubectl-ichor-discovery
TC=$(talosconfig prod)
M=$(node_addr maint-1); W2=$(node_addr prod-w-2); B=$(node_addr lab-b-cp-1)
NS=ichor-system
addresses() { kubectl get taloscluster -n $NS prod -o json | jq -c '.spec.discovery.addresses // []'; }
codes() { out "$1" | jq -r '[.results[].tags["ichor.maesh.dev/code"]] | join(" ")'; }
messages() { out "$1" | jq -r '[.results[].message] | join("\n")'; }
original=$(kubectl get taloscluster -n $NS prod -o json | jq -c '.spec.discovery // null')
restore() { kubectl patch taloscluster -n $NS prod --type merge -p "{\"spec\":{\"discovery\":$original}}" > /dev/null; }
before=$(addresses)

# A malformed address: refused before any write, exit 2.
run bad "$D" add "$M:99999" --cluster prod
expect_eq "malformed: exit 2" "$(rc bad)" 2
expect_contains "malformed: says why" "$(err bad)" "bad address \"$M:99999\": port 99999 is out of range"
expect_eq "malformed: nothing written" "$(addresses)" "$before"
run nocluster "$D" add "$M" --cluster staging
expect_eq "no such cluster: exit 3" "$(rc nocluster)" 3
expect_contains "no such cluster: named with its namespace" "$(err nocluster)" "TalosCluster \"staging\" not found in namespace \"ichor-system\""

# A machine in maintenance mode: added once, discovery's.
run maint "$D" add "$M" --cluster prod --talosconfig "$TC" -o json
expect_eq "maintenance: exit 0" "$(rc maint)" 0
expect_eq "maintenance: added, in maintenance mode" "$(codes maint)" "Added Maintenance"
expect_eq "maintenance: in spec.discovery.addresses" "$(addresses | jq -r --arg a "$M" '[.[] | select(. == $a)] | length')" 1
run again "$D" add "$M:50000" --cluster prod --talosconfig "$TC" -o json
expect_eq "rerun: exit 0" "$(rc again)" 0
expect_eq "rerun: already listed, not written again" "$(codes again)" "AlreadyListed Maintenance"
expect_eq "rerun: still one entry" "$(addresses | jq -r --arg a "$M" '[.[] | select(. == $a)] | length')" 1

# A machine of this cluster's PKI: adopt --add-machine, and the other command named.
run own "$D" add "$W2" --cluster prod --talosconfig "$TC" -o json
expect_eq "this cluster's PKI: exit 0" "$(rc own)" 0
expect_eq "this cluster's PKI: the verdict" "$(codes own)" "Added ThisCluster"
expect_contains "this cluster's PKI: adopt --add-machine" "$(messages own)" "kubectl ichor adopt --cluster prod --add-machine $W2 --talosconfig $TC"
expect_contains "this cluster's PKI: reclaim is for another cluster" "$(messages own)" "kubectl ichor reclaim is for a machine of another cluster"

# Another cluster's machine: reclaim, and the other command named.
run other "$D" add "$B" --cluster prod --talosconfig "$TC" -o json
expect_eq "another cluster's: exit 0" "$(rc other)" 0
expect_eq "another cluster's: the verdict" "$(codes other)" "Added OtherCluster"
expect_contains "another cluster's: reclaim" "$(messages other)" "kubectl ichor reclaim $B --talosconfig FILE --cluster prod"
expect_contains "another cluster's: adopt is for this cluster's PKI" "$(messages other)" "kubectl ichor adopt --add-machine is for a machine of this cluster's PKI"

# Nothing answers: a warning, the address stays for discovery's next pass.
run gone "$D" add 127.0.0.99 --cluster prod --talosconfig "$TC" --call-timeout 2s -o json
expect_eq "no answer: exit 0" "$(rc gone)" 0
expect_eq "no answer: a warning" "$(codes gone)" "Added Unreachable"

# Table output for people, through the dispatcher.
run table "$ICHOR_BIN/kubectl-ichor" discovery add "$M" --cluster prod -o table
expect_eq "table: exit 0" "$(rc table)" 0
expect_contains "table: the finding" "$(out table)" "AlreadyListed"

restore
expect_eq "the TalosCluster's discovery is as it was" "$(addresses)" "$before"
finish
