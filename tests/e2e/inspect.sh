#!/usr/bin/env bash
# kubectl ichor inspect against the lab (docs/talos-client.md, docs/stream.md).
. "$(dirname "$0")/lib.sh"
I=$ICHOR_BIN/kubectl-ichor-inspect
TC=$(talosconfig prod)
CP=$(node_addr prod-cp-1); W1=$(node_addr prod-w-1); W2=$(node_addr prod-w-2)
B=$(node_addr lab-b-cp-1); M=$(node_addr maint-1)

# A worker and a control plane of prod.
run prod "$I" "$W2" "$CP" --talosconfig "$TC" -o json
expect_eq "prod: exit 0" "$(rc prod)" 0
expect_eq "prod: modes" "$(out prod | jq -r '[.items[].status.mode] | join(",")')" "configured,configured"
expect_eq "prod: roles" "$(out prod | jq -r '[.items[].status.facts.role] | join(",")')" "worker,controlplane"
expect_eq "prod: worker UUID" "$(out prod | jq -r '.items[0].status.identity.uuid')" "$(node_field prod-w-2 uuid)"
expect_eq "prod: worker serial" "$(out prod | jq -r '.items[0].status.identity.serial')" "$(node_field prod-w-2 serial)"
expect_eq "prod: worker MACs" "$(out prod | jq -c '.items[0].status.identity.macs')" "$(jq -c --arg n prod-w-2 '.nodes[] | select(.name == $n) | .macs' "$LAB")"
expect_eq "prod: cluster ID" "$(out prod | jq -r '.items[0].status.facts.clusterID')" "$(cluster_field prod clusterID)"
expect_eq "prod: install disk" "$(out prod | jq -r '.items[0].status.facts.install.disk')" "$(node_field prod-w-2 installDisk)"
expect_eq "prod: CP etcd members" "$(out prod | jq -r ".items[1].status.etcd.members | length")" 2
expect_eq "prod: volumes" "$(out prod | jq -r '[.items[0].status.volumes[].id] | sort | join(",")')" "EPHEMERAL,STATE"
expect_eq "prod: machine token digested" "$(out prod | jq -r '.items[0].status.config[0].machine.token | startswith("sha256:")')" true
expect_eq "prod: timings recorded" "$(out prod | jq -r '.items[0].status.timings | length > 5')" true
expect_eq "prod: no results" "$(out prod | jq -r '.results // [] | length')" 0

# Another cluster's node: unknown authority, never a raw TLS error.
run labb "$I" "$B" --talosconfig "$TC"
expect_eq "lab-b: exit 1" "$(rc labb)" 1
run labb_json "$I" "$B" --talosconfig "$TC" -o json
expect_eq "lab-b: code UnknownAuthority" "$(out labb_json | jq -r '.results[0].tags["ichor.maesh.dev/code"]')" UnknownAuthority
expect_eq "lab-b: mode configured" "$(out labb_json | jq -r '.items[0].status.mode')" configured
expect_not_contains "lab-b: no raw x509 text" "$(out labb_json)$(err labb_json)" "x509"

# The maintenance node: found by the probe, fingerprint recorded; and read with --insecure, pinned.
fp=$(sim GET /nodes/maint-1 | jq -r '.maintenanceFingerprint // .fingerprint // empty')
run maint "$I" "$M" --talosconfig "$TC" -o json
expect_eq "maint: exit 0" "$(rc maint)" 0
expect_eq "maint: mode" "$(out maint | jq -r '.items[0].status.mode')" maintenance
expect_eq "maint: fingerprint" "$(out maint | jq -r '.items[0].status.tls.fingerprint')" "$fp"
run maint_pinned "$I" "$M" --insecure --cert-fingerprint "$fp" -o json
expect_eq "maint pinned: exit 0" "$(rc maint_pinned)" 0
expect_eq "maint pinned: tls" "$(out maint_pinned | jq -r '.items[0].status.tls.outcome')" pinned
run maint_wrongpin "$I" "$M" --insecure --cert-fingerprint "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" -o json
expect_eq "maint wrong pin: code" "$(out maint_wrongpin | jq -r '.results[0].tags["ichor.maesh.dev/code"]')" FingerprintMismatch
expect_eq "maint wrong pin: exit 1" "$(rc maint_wrongpin)" 1

# A reader certificate: the facts a reader may see, and a result saying the config needs os:admin.
run reader "$I" "$W1" --talosconfig "$(cluster_field prod readerTalosconfig)" -o json
expect_eq "reader: exit 0" "$(rc reader)" 0
expect_eq "reader: access" "$(out reader | jq -r '.items[0].status.access')" "os:reader"
expect_eq "reader: no config" "$(out reader | jq -r '.items[0].status.config // "none"')" none
expect_eq "reader: cluster ID from Infos" "$(out reader | jq -r '.items[0].status.facts.clusterID')" "$(cluster_field prod clusterID)"
expect_eq "reader: role from MachineType" "$(out reader | jq -r '.items[0].status.facts.role')" worker
expect_contains "reader: needs os:admin" "$(out reader | jq -r '.results[0].message')" "needs os:admin"

# A node whose calls hang: the run ends within the bound plus a little; the other node is read.
sim POST /nodes/prod-w-1/faults '{"method":"*","kind":"hang"}' > /dev/null
start=$(date +%s%N)
run hang "$I" "$W1" "$W2" --talosconfig "$TC" --call-timeout 2s -o json
ms=$(( ($(date +%s%N) - start) / 1000000 ))
sim DELETE /nodes/prod-w-1/faults > /dev/null
expect_eq "hang: exit 5 (partial)" "$(rc hang)" 5
expect_contains "hang: message" "$(out hang | jq -r '.results[0].message')" "$W1 did not answer within 2s (Version)"
expect_eq "hang: code" "$(out hang | jq -r '.results[0].tags["ichor.maesh.dev/code"]')" Timeout
expect_eq "hang: other node read" "$(out hang | jq -r '.items[1].status.mode')" configured
if [ "$ms" -lt 4500 ]; then pass "hang: ended in ${ms}ms (bound 2s)"; else fail "hang: took ${ms}ms"; fi

# etcd down on a control plane: an etcd problem, the rest read.
sim POST /nodes/prod-cp-1/etcd '{"state":"down"}' > /dev/null
run etcd "$I" "$CP" --talosconfig "$TC" -o json
sim POST /nodes/prod-cp-1/etcd '{"state":"running"}' > /dev/null
expect_eq "etcd down: exit 0" "$(rc etcd)" 0
expect_contains "etcd down: problem" "$(out etcd | jq -r '.items[0].status.etcd.problem')" "etcd is not running or not answering"
expect_eq "etcd down: code" "$(out etcd | jq -r '.results[0].tags["ichor.maesh.dev/code"]')" EtcdProblem

# Nothing answering at all: exit 4.
run none "$I" 127.0.0.254 --talosconfig "$TC" --call-timeout 2s
expect_eq "unreachable: exit 4" "$(rc none)" 4

# Bad input writes nothing and exits with the documented code.
printf 'context: x\ncontexts: {x: {ca: "!!notbase64"}}\n' > "$OUT/bad-talosconfig"
run badtc "$I" "$W1" --talosconfig "$OUT/bad-talosconfig"
expect_eq "bad talosconfig: exit 3" "$(rc badtc)" 3
expect_contains "bad talosconfig: names the file" "$(err badtc)" "$OUT/bad-talosconfig"
expect_eq "bad talosconfig: nothing on stdout" "$(out badtc)" ""
run nocontext "$I" "$W1" --talosconfig "$TC" --context nope
expect_eq "unknown context: exit 3" "$(rc nocontext)" 3
expect_contains "unknown context: lists contexts" "$(err nocontext)" "no context \"nope\" (it has prod"

# The pipe with trustcheck: stage by stage.
"$I" "$W2" "$B" "$M" --talosconfig "$TC" > "$OUT/pipe.inspect" 2>/dev/null
run_in pipe "$OUT/pipe.inspect" "$ICHOR_BIN/kubectl-ichor-trustcheck" --cluster prod -o json
expect_eq "trustcheck: exit 1 (refusals)" "$(rc pipe)" 1
expect_eq "trustcheck: verdicts" "$(out pipe | jq -r '[.items[].status.trust.verdict] | join(",")')" "Member,UnknownAuthority,Maintenance"
expect_contains "trustcheck: reclaim hint" "$(out pipe | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "UnknownAuthority" and (.message | contains("trust") | not)) | .message' | tail -1)" "kubectl ichor reclaim $B"
finish
