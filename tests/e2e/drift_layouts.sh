#!/usr/bin/env bash
# kubectl ichor drift, online, on its own nodes (issue 5): tests/lab/scenarios/drift.yaml in a
# talos-sim of this test (127.0.44.x) and a TalosCluster recorded in namespace drift-e2e of the
# lab's apiserver at version contract 1.12. A node of Talos's own contract 1.14 shows no drift
# that a v1alpha1 node of the same facts does not, beyond the contract's defaults (class B), and
# none at all once the cluster's contract is 1.14; a second control plane while the count is 1 is
# refused.
. "$(dirname "$0")/lib.sh"
I=$ICHOR_BIN/kubectl-ichor-inspect
T=$ICHOR_BIN/kubectl-ichor-trustcheck
D=$ICHOR_BIN/kubectl-ichor-drift
NS=drift-e2e
# The sim's state (bundles, talosconfigs) stays after the test, as a private lab's does, for
# zz_secrets_scan.sh; the next run starts it afresh.
STATE=$ICHOR_LAB_STATE-$test_name
rm -rf "$STATE"; mkdir -p "$STATE"
"$ICHOR_ROOT/build/lab/talos-sim" --scenario "$ICHOR_ROOT/tests/lab/scenarios/drift.yaml" --state "$STATE" \
  > "$OUT/talos-sim.log" 2>&1 < /dev/null &
SIM=$!
cleanup() {
  kill "$SIM" 2>/dev/null; wait "$SIM" 2>/dev/null
  kubectl delete -n "$NS" talosclusters,talosmachines --all --wait=false > /dev/null 2>&1
  kubectl delete -n "$NS" secret prod-secrets --wait=false > /dev/null 2>&1
}
trap cleanup EXIT
for _ in $(seq 100); do [ -f "$STATE/sim.json" ] && break; kill -0 "$SIM" 2>/dev/null || break; sleep 0.1; done
if [ ! -f "$STATE/sim.json" ]; then fail "talos-sim did not start: $(tail -3 "$OUT/talos-sim.log")"; finish; fi
SIMJ=$STATE/sim.json
# talos-sim removes sim.json when it stops; the secrets scan (zz_secrets_scan) reads this lab's
# bundle and configurations from a copy that stays, as the other private labs keep their lab.json.
cp "$SIMJ" "$STATE/lab.json"
addr() { jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .address' "$SIMJ"; }
uuid() { jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .uuid' "$SIMJ"; }

# The cluster as Ichor would have recorded it: the bundle Secret, the TalosCluster at contract
# 1.12 with one control plane, and the TalosMachines of prod-cp-1 and prod-w-1.
kubectl create namespace "$NS" > /dev/null 2>&1
kubectl create -n "$NS" secret generic prod-secrets --from-file=bundle.yaml="$STATE/clusters/prod/secrets.yaml" > /dev/null
machine() { # machine NAME ROLE
  printf '{"apiVersion":"ichor.maesh.dev/v1alpha1","kind":"TalosMachine","metadata":{"name":"%s","labels":{"ichor.maesh.dev/cluster":"prod"}},"spec":{"cluster":"prod","approval":"Approved","role":"%s","address":"%s","identity":{"uuid":"%s"}}}' \
    "$1" "$2" "$(addr "$1")" "$(uuid "$1")"
}
{ printf '{"apiVersion":"ichor.maesh.dev/v1alpha1","kind":"TalosCluster","metadata":{"name":"prod","labels":{"ichor.maesh.dev/cluster":"prod"}},"spec":{"talosVersion":"v1.12.11","kubernetesVersion":"v1.34.4","endpoint":"https://127.0.44.11:6443","versionContract":"1.12","controlPlane":{"count":1},"cni":{"preset":"cilium"},"secretsBundleRef":{"name":"prod-secrets"}}}\n'
  machine prod-cp-1 controlplane; echo; machine prod-w-1 worker; echo; } | kubectl create -n "$NS" -f - > /dev/null
expect_eq "recorded: 2 machines" "$(kubectl get -n "$NS" talosmachines -o name | wc -l)" 2

NODES=(prod-cp-1 prod-w-1 prod-w-2 prod-w-mirror prod-w-odd prod-w-14 prod-cp-2)
ADDRS=(); for n in "${NODES[@]}"; do ADDRS+=("$(addr "$n")"); done
"$I" "${ADDRS[@]}" --talosconfig "$STATE/clusters/prod/talosconfig" 2>/dev/null \
  | "$T" --cluster prod -n "$NS" -o json > "$OUT/trusted.json" 2>"$OUT/trustcheck.err"
expect_eq "trustcheck: every node a member" "$(jq -r '[.items[].status.trust.verdict] | unique | join(",")' "$OUT/trusted.json")" Member
run_in plan "$OUT/trusted.json" "$D" --cluster prod -n "$NS" -o json
expect_eq "plan: exit 5 (some blocked)" "$(rc plan)" 5
node_findings() { out plan | jq -r --arg a "$1" '[.results[] | select(.tags["ichor.maesh.dev/node"] == $a and .field) | .field.path + "=" + .tags["ichor.maesh.dev/class"]] | join(",")'; }

# No false drift from the layout: the v1.14 node (Talos's own contract 1.14) has the v1alpha1
# node's findings, and beside them only what contract 1.14 writes by default (class B).
W2=$(addr prod-w-2); W14=$(addr prod-w-14)
but_defaults() { out plan | jq -r --arg a "$1" '[.results[] | select(.tags["ichor.maesh.dev/node"] == $a and .field and .tags["ichor.maesh.dev/code"] != "ContractDefault") | .field.path + "=" + .tags["ichor.maesh.dev/class"]] | join(",")'; }
expect_eq "v1alpha1 node: class B only" "$(node_findings "$W2")" "cluster.network.cni.name=B,cluster.proxy.disabled=B"
# Talos 1.14 writes the CNI (KubeFlannelCNIConfig) on control planes only, so a 1.14 worker has
# no CNI of its own to differ in; the rest is the same.
expect_eq "v1.14 node against the 1.12 render: the same but the CNI" "$(but_defaults "$W14")" "cluster.proxy.disabled=B"
expect_eq "v1.14 node: its contract defaults are class B" "$(out plan | jq -r --arg a "$W14" '[.results[] | select(.tags["ichor.maesh.dev/node"] == $a and .tags["ichor.maesh.dev/code"] == "ContractDefault") | .tags["ichor.maesh.dev/class"]] | unique | join(",")')" B
expect_eq "v1.14 node: its facts say v1.14" "$(jq -r --arg a "$W14" '.items[] | select(.spec.address == $a) | .status.facts.layout' "$OUT/trusted.json")" v1.14
expect_eq "v1.14 node: install disk from its CEL match" "$(out plan | jq -r '.items[] | select(.kind == "TalosMachine" and .metadata.name == "prod-w-14") | .spec.install.disk')" /dev/sda

# Known nodes are skipped; the mirror is captured; the odd node is blocked.
expect_eq "skipped" "$(out plan | jq -r '[.results[] | select(.tags["ichor.maesh.dev/code"] == "AlreadyAdopted") | .tags["ichor.maesh.dev/node"]] | join(",")')" "$(addr prod-cp-1),$(addr prod-w-1)"
expect_eq "mirror: captured" "$(node_findings "$(addr prod-w-mirror)")" "machine.sysctls.net.core.somaxconn=A,machine.registries.mirrors.docker.io.endpoints=A,cluster.network.cni.name=B,cluster.proxy.disabled=B"
expect_eq "odd: blocked" "$(out plan | jq -r --arg a "$(addr prod-w-odd)" '[.results[] | select(.tags["ichor.maesh.dev/node"] == $a and .severity == "error") | .tags["ichor.maesh.dev/code"]] | join(",")')" CADiffers

# A second control plane while spec.controlPlane.count is 1: refused, nothing planned for it.
CP2=$(addr prod-cp-2)
expect_eq "second control plane: refused" "$(out plan | jq -r --arg a "$CP2" '.results[] | select(.tags["ichor.maesh.dev/node"] == $a) | .tags["ichor.maesh.dev/code"]')" ControlPlaneCount
expect_contains "second control plane: raise the count first" "$(out plan | jq -r --arg a "$CP2" '.results[] | select(.tags["ichor.maesh.dev/node"] == $a) | .message')" "raise the count first; hint: kubectl patch taloscluster prod -n $NS --type merge -p '{\"spec\":{\"controlPlane\":{\"count\":2}}}'"
expect_eq "second control plane: no TalosMachine" "$(out plan | jq '[.items[] | select(.kind == "TalosMachine" and .spec.address == "'"$CP2"'")] | length')" 0
expect_eq "planned machines" "$(out plan | jq -r '[.items[] | select(.kind == "TalosMachine") | .metadata.name] | join(",")')" "prod-w-2,prod-w-mirror,prod-w-14"
# drift has no write path; adopt has: with --yes, the refused control plane writes nothing.
A=$ICHOR_BIN/kubectl-ichor-adopt
run addcp "$A" --cluster prod -n "$NS" --add-machine "$CP2" --talosconfig "$STATE/clusters/prod/talosconfig" \
  --yes --backup-dir "$OUT/backups" -o json
expect_eq "adopt of the second control plane: exit 1" "$(rc addcp)" 1
expect_eq "adopt of the second control plane: refused for the count" \
  "$(out addcp | jq -r --arg a "$CP2" '.results[] | select(.tags["ichor.maesh.dev/node"] == $a and .severity == "error") | .tags["ichor.maesh.dev/code"]')" ControlPlaneCount
expect_eq "adopt of the second control plane: nothing was written" \
  "$(kubectl get -n "$NS" talosmachines,talosconfigpatches -o name | sort | tr '\n' ' ')" \
  "talosmachine.ichor.maesh.dev/prod-cp-1 talosmachine.ichor.maesh.dev/prod-w-1 "
expect_eq "adopt of the second control plane: not even a backup" "$(ls "$OUT/backups" 2> /dev/null | wc -l)" 0

# After raising the count, the control plane is planned (its own drift is class B only).
kubectl patch -n "$NS" taloscluster prod --type merge -p '{"spec":{"controlPlane":{"count":2}}}' > /dev/null
run_in raised "$OUT/trusted.json" "$D" --cluster prod -n "$NS" -o json
expect_eq "count raised: prod-cp-2 planned" "$(out raised | jq -r '.items[] | select(.kind == "TalosMachine" and .metadata.name == "prod-cp-2") | .spec.role')" controlplane

# At the cluster's contract 1.14 the render is Talos's own 1.14: the node Talos configured at 1.14
# has no drift at all, not even the contract's defaults.
kubectl patch -n "$NS" taloscluster prod --type merge -p '{"spec":{"versionContract":"1.14"}}' > /dev/null
run_in at14 "$OUT/trusted.json" "$D" --cluster prod -n "$NS" -o json
expect_eq "contract 1.14: the v1.14 node has no drift" "$(out at14 | jq -r --arg a "$W14" '[.results[] | select(.tags["ichor.maesh.dev/node"] == $a and .field) | .field.path + "=" + .tags["ichor.maesh.dev/class"]] | join(",")')" ""
expect_eq "contract 1.14: the v1.14 node is planned without a patch" "$(out at14 | jq -r '[.items[] | select(.kind == "TalosMachine" and .metadata.name == "prod-w-14")] | length'),$(out at14 | jq -r '[.items[] | select(.kind == "TalosConfigPatch" and .spec.machine == "prod-w-14")] | length')" "1,0"
finish
