#!/usr/bin/env bash
# kubectl ichor reclaim, ADR 0128 E3 and E5 on a private lab (127.0.56.x; see reclaim_lab.inc):
# a node of an unrelated cluster whose etcd is not running is refused a graceful reset, then
# reclaimed with --force-ungraceful, registered pending in prod, approved and provisioned by
# lab-controller to Ready; a stale pending machine is left by reclaim (it writes no status and no
# Event) and refreshed by the lab-controller's discovery pass once its address is in
# spec.discovery.addresses (fingerprint, inventory, Event), then reaches Ready without the trust
# annotation; a node of a managed cluster without an approved
# machine is reclaimed with a warning; lab-controller's MaintenanceIdentityChanged and the trust
# annotation.
. "$(dirname "$0")/reclaim_lab.inc"
reclaim_lab_up 56
B=$(node_addr lab-b-cp-1); TCB=$(talosconfig lab-b); TCC=$(talosconfig lab-c)

# --- E3 ------------------------------------------------------------------------------------------
# kubectl ichor adopt --add-machine (with prod's talosconfig) refuses the node and names reclaim.
# adopt itself: a build without it fails here rather than proving the refusal with another tool.
if [ ! -x "$ICHOR_BIN/kubectl-ichor-adopt" ]; then fail "E3: $ICHOR_BIN/kubectl-ichor-adopt is not built"; fi
# With --yes, not --plan: the run that would write is the one that must write nothing.
run addm "$ICHOR_BIN/kubectl-ichor-adopt" --cluster prod --add-machine "$B" --talosconfig "$(talosconfig prod)" --yes --backup-dir "$OUT/backups"
expect_eq "E3 adopt --add-machine: refused" "$(rc addm)" 1
expect_contains "E3 adopt --add-machine: names reclaim" "$(out addm; err addm)" "kubectl ichor reclaim $B"
expect_eq "E3: the refusal wrote nothing" "$(k get tm,tcp -o name | sort | tr '\n' ' ')" "talosmachine.ichor.maesh.dev/prod-cp-1 talosmachine.ichor.maesh.dev/prod-w-1 "
expect_eq "E3: not even a backup" "$(ls "$OUT/backups" 2> /dev/null | wc -l)" 0

run graceful "$R" "$B" --talosconfig "$TCB" --cluster prod --confirm-uuid "$(uuid_of lab-b-cp-1)" -o json
expect_eq "E3 graceful: exit 1" "$(rc graceful)" 1
expect_eq "E3 graceful: code" "$(last_code graceful)" EtcdProblem
expect_contains "E3 graceful: the refusal names etcd and its reason" "$(err graceful)" \
  "kubectl ichor reclaim: error: $B: refusing a graceful reset: etcd of cluster \"lab-b\" is not running or not answering ($B: unavailable (EtcdMemberList): connection error:"
expect_contains "E3 graceful: hint" "$(err graceful)" "hint: if cluster \"lab-b\" does not exist any more: kubectl ichor reclaim $B --talosconfig $TCB --cluster prod --force-ungraceful"
expect_contains "E3: the Inspect step comes first" "$(err graceful | head -1)" "Inspect $B with talosconfig context \"lab-b\" (each call gives up after 20s)"
expect_contains "E3: etcd row" "$(err graceful)" "  etcd:     not running or not answering ("
expect_eq "E3 graceful: no Reset call" "$(sim GET /nodes/lab-b-cp-1/calls | jq '[.[] | select(.method | endswith("/Reset"))] | length')" 0

t0=$SECONDS
run forced "$R" "$B" --talosconfig "$TCB" --cluster prod --force-ungraceful --confirm-uuid "$(uuid_of lab-b-cp-1)" -o json
took=$((SECONDS - t0))
expect_eq "E3 forced: exit 0" "$(rc forced)" 0
[ "$took" -le 60 ] && pass "E3 forced: returned in ${took}s (<= 60)" || fail "E3 forced: took ${took}s"
expect_contains "E3 forced: the warning" "$(err forced)" \
  "kubectl ichor reclaim: warning: cluster \"lab-b\" is treated as not existing, so its quorum cannot be checked and the reset is not graceful"
expect_eq "E3 forced: one Reset, not graceful, STATE+EPHEMERAL, reboot" \
  "$(sim GET /nodes/lab-b-cp-1/calls | jq -c '[.[] | select(.method | endswith("/Reset")) | .request | {graceful, reboot, systemPartitionsToWipe}]')" \
  '[{"graceful":false,"reboot":true,"systemPartitionsToWipe":["STATE","EPHEMERAL"]}]'
fp=$(sim GET /nodes/lab-b-cp-1 | jq -r .maintenanceFingerprint)
expect_contains "E3 forced: prints the new fingerprint" "$(err forced)" "its new maintenance certificate fingerprint is $fp"
tm=$(out forced | jq -r '.items[0].metadata.name')
expect_eq "E3: pending in prod" "$(k get tm "$tm" -o jsonpath='{.spec.cluster}/{.spec.approval}/{.spec.address}/{.spec.identity.uuid}')" \
  "prod/Pending/$B/$(uuid_of lab-b-cp-1)"
expect_eq "E3: no role" "$(k get tm "$tm" -o jsonpath='{.spec.role}')" ""
expect_eq "E3: fingerprint recorded" "$(k get tm "$tm" -o jsonpath='{.status.maintenanceFingerprint}')" "$fp"
expect_eq "E3: disks and links recorded" "$(k get tm "$tm" -o json | jq -c '[([.status.discoveredDisks[].devPath] | sort), .status.discoveredLinks[0].permanentAddr]')" \
  "$(jq -c --arg n lab-b-cp-1 '.nodes[] | select(.name == $n) | [["/dev/nvme0n1", "/dev/sda"], .macs[0]]' "$LAB")"
expect_eq "E3: label" "$(k get tm "$tm" -o jsonpath='{.metadata.labels.ichor\.maesh\.dev/cluster}')" prod
k patch tm "$tm" --type merge -p '{"spec":{"approval":"Approved"}}' > /dev/null
expect_eq "E3: approved, provisioned and Ready" "$(wait_ready "$tm" 30)" "True/IdentityVerified"
expect_eq "E3: the node now runs prod's configuration" "$(sim GET /nodes/lab-b-cp-1 | jq -r '[.mode, .cluster] | join("/")')" "configured/prod"
expect_eq "E3: the configuration was applied once" "$(sim GET /nodes/lab-b-cp-1/calls | jq '[.[] | select(.method | endswith("/ApplyConfiguration"))] | length')" 1
# Now an Ichor machine: a second reclaim is refused.
run again "$R" "$B" --talosconfig "$(talosconfig prod)" --cluster prod --confirm-uuid "$(uuid_of lab-b-cp-1)"
expect_eq "E3 again: refused" "$(rc again)" 1
expect_contains "E3 again: an Ichor machine" "$(err again)" "$B: is an Ichor machine: TalosMachine $tm of cluster \"prod\" is approved with its UUID"

# --- E5 ------------------------------------------------------------------------------------------
W=$(node_addr lab-c-w-1); U=$(uuid_of lab-c-w-1)
run first "$R" "$W" --talosconfig "$TCC" --cluster prod --confirm-uuid "$U" -o json
expect_eq "E5 first reclaim: exit 0" "$(rc first)" 0
stale=$(out first | jq -r '.items[0].metadata.name')
fp1=$(k get tm "$stale" -o jsonpath='{.status.maintenanceFingerprint}')
gen1=$(k get tm "$stale" -o jsonpath='{.metadata.generation}')
sim POST /nodes/lab-c-w-1/mode '{"mode":"configured"}' > /dev/null   # configured by lab-c again
sleep 1.5
k patch taloscluster prod --type json -p '[{"op":"remove","path":"/spec/discovery"}]' > /dev/null 2>&1 # discovery does not look here yet
run second "$R" "$W" --talosconfig "$TCC" --cluster prod --confirm-uuid "$U" -o json
expect_eq "E5 second reclaim: proceeds" "$(rc second)" 0
fp2=$(sim GET /nodes/lab-c-w-1 | jq -r .maintenanceFingerprint)
[ "$fp1" != "$fp2" ] && pass "E5: a new certificate" || fail "E5: the certificate did not change"
expect_eq "E5: the same machine" "$(out second | jq -r '.items[0].metadata.name')" "$stale"
expect_eq "E5: reclaim leaves it to discovery" "$(last_code second)" LeftToDiscovery
expect_contains "E5: and says so" "$(err second)" "pending TalosMachine $stale records maintenance fingerprint $fp1 and the node now presents $fp2: discovery re-records"
expect_contains "E5: the address is not in discovery: said, with the command" "$(err second)" "kubectl ichor discovery add $W --cluster prod -n ichor-system"
sleep 2 # several lab-controller passes: with the address outside discovery, nothing refreshes it
expect_eq "E5: the CLI wrote no status" "$(k get tm "$stale" -o jsonpath='{.status.maintenanceFingerprint}')" "$fp1"
events() { kubectl -n ichor-system get events -o json | jq -c --arg n "$stale" '[.items[] | select(.involvedObject.name == $n and .reason == "MaintenanceIdentityRefreshed") | {type, kind: .involvedObject.kind, message, by: .reportingComponent}]'; }
expect_eq "E5: the CLI wrote no Event" "$(events | jq length)" 0
run disc "$ICHOR_BIN/kubectl-ichor-discovery" add "$W" --cluster prod -o json
expect_eq "E5: discovery add: exit 0" "$(rc disc)" 0
expect_contains "E5: discovery add: in maintenance mode" "$(out disc | jq -r '[.results[].tags["ichor.maesh.dev/code"]] | join(" ")')" "Added Maintenance"
for _ in $(seq 50); do [ "$(k get tm "$stale" -o jsonpath='{.status.maintenanceFingerprint}')" == "$fp2" ] && break; sleep 0.2; done
expect_eq "E5: discovery's pass records the new fingerprint" "$(k get tm "$stale" -o jsonpath='{.status.maintenanceFingerprint}')" "$fp2"
expect_eq "E5: spec untouched" "$(k get tm "$stale" -o jsonpath='{.metadata.generation}/{.spec.approval}')" "$gen1/Pending"
expect_eq "E5: one machine for the UUID" "$(k get tm -o json | jq --arg u "$U" '[.items[] | select(.spec.identity.uuid == $u)] | length')" 1
ev=$(events)
expect_eq "E5: one Normal Event on the TalosMachine, by discovery's stand-in" "$(jq -r '[.[0].type, .[0].kind, .[0].by, length] | join("/")' <<<"$ev")" "Normal/TalosMachine/ichor-lab-controller-discovery/1"
expect_contains "E5: the Event names both fingerprints" "$(jq -r '.[0].message' <<<"$ev")" "from $fp1 to $fp2"
k patch tm "$stale" --type merge -p '{"spec":{"approval":"Approved"}}' > /dev/null
expect_eq "E5: approved reaches Ready" "$(wait_ready "$stale" 30)" "True/IdentityVerified"
expect_eq "E5: without the trust annotation" "$(k get tm "$stale" -o jsonpath='{.metadata.annotations}')" ""

# --- a node of a managed cluster with no approved machine: reclaimed, with the warning ----------
P=$(node_addr prod-w-2)
run managed "$R" "$P" --talosconfig "$(talosconfig prod)" --cluster prod --confirm-uuid "$(uuid_of prod-w-2)"
expect_eq "managed cluster: exit 0" "$(rc managed)" 0
expect_contains "managed cluster: the warning" "$(err managed)" \
  "kubectl ichor reclaim: warning: $P: node belongs to cluster \"prod\", which Ichor already manages; a reset is not needed: add it to that Ichor cluster with kubectl ichor adopt --cluster prod --add-machine $P (no approved TalosMachine has its UUID, so reclaim goes on)"
expect_not_contains "managed cluster: no refusal" "$(err managed)" "error:"

# --- a weak UUID; lab-controller's pin: MaintenanceIdentityChanged, then the annotation ---------
Z=$(node_addr lab-b-w-0); ZS=$(node_field lab-b-w-0 serial)
run weak_noserial "$R" "$Z" --talosconfig "$TCB" --cluster prod --confirm-uuid 00000000-0000-0000-0000-000000000000
expect_eq "weak UUID without the serial: exit 1" "$(rc weak_noserial)" 1
expect_contains "weak UUID: asks for the serial" "$(err weak_noserial)" "cannot identify one machine (it is all zeros): confirm its serial number as well"
run weak "$R" "$Z" --talosconfig "$TCB" --cluster prod --confirm-uuid 00000000-0000-0000-0000-000000000000 --confirm-serial "$ZS" -o json
expect_eq "weak UUID with the serial: exit 0" "$(rc weak)" 0
wm=$(out weak | jq -r '.items[0].metadata.name')
sim POST /nodes/lab-b-w-0/mode '{"mode":"maintenance"}' > /dev/null   # reset by hand: a new certificate
k patch tm "$wm" --type merge -p '{"spec":{"approval":"Approved"}}' > /dev/null
sleep 2
expect_eq "pin: MaintenanceIdentityChanged" "$(k get tm "$wm" -o jsonpath='{.status.conditions[?(@.type=="MaintenanceIdentityChanged")].status}/{.status.conditions[?(@.type=="Ready")].reason}')" \
  "True/MaintenanceIdentityChanged"
k annotate tm "$wm" "ichor.maesh.dev/trust-maintenance-fingerprint=$(sim GET /nodes/lab-b-w-0 | jq -r .maintenanceFingerprint)" > /dev/null
expect_eq "pin: accepted by the annotation, Ready" "$(wait_ready "$wm" 30)" "True/IdentityVerified"
expect_eq "pin: the condition is gone" "$(k get tm "$wm" -o jsonpath='{.status.conditions[?(@.type=="MaintenanceIdentityChanged")].status}')" ""

expect_eq "no META call on any node" "$(meta_calls)" 0

finish
