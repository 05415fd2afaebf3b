#!/usr/bin/env bash
# The node confirms the plan (docs/stream.md): kubectl ichor adopt --add-machine dry-runs each planned
# machine's rendered configuration on its node before consent. --plan shows the node's answer,
# the nodes see dry runs only, and a render the node rejects blocks the machine with its words.
# Leaves the lab as it found it (the patch it adds is removed again).
. "$(dirname "$0")/lib.sh"
A=$ICHOR_BIN/kubectl-ichor-adopt
TC=$(talosconfig prod)
W2=$(node_addr prod-w-2); CP1=$(node_addr prod-cp-1); CP2=$(node_addr prod-cp-2)
NS=ichor-system
objects() { kubectl get talosmachines,talosconfigpatches -n $NS -o name | sort | tr '\n' ' '; }
applies() { sim GET "/nodes/$1/calls" | jq -c '[.[] | select(.method == "/machine.MachineService/ApplyConfiguration") | .request.dryRun]'; }
results() { out "$1" | jq -r --arg c "$2" '.results[] | select(.tags["ichor.maesh.dev/code"] == $c) | .message'; }
cleanup() {
  kubectl annotate talosconfigpatch -n $NS no-urls-for-none ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
  kubectl delete talosconfigpatch -n $NS no-urls-for-none --ignore-not-found > /dev/null 2>&1
  kubectl patch taloscluster -n $NS prod --type merge -p '{"spec":{"controlPlane":{"count":1}}}' > /dev/null
}
cleanup
before=$(objects)
sim DELETE /nodes/prod-w-2/calls > /dev/null

# --plan: the node's answer beside the drift; its changes are the plan's class B (CNI, kube-proxy).
run plan "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json
expect_eq "plan: exit 0" "$(rc plan)" 0
expect_eq "plan: the node's answer" "$(results plan NodeCheck)" \
  "prod-w-2 ($W2): the node accepts the rendered configuration; it would change network.cni.name, proxy.disabled"
expect_eq "plan: its stage" "$(out plan | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "NodeCheck") | .tags["ichor.maesh.dev/stage"]')" node-check
answer=$(out plan | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "NodeCheck") | .tags["ichor.maesh.dev/node-answer"]')
expect_contains "plan: machined's dry-run text" "$answer" "Dry run summary:
Applied configuration without a reboot (skipped in dry-run).
Config diff:

--- a
+++ b
@@ "
expect_contains "plan: the diff shows the CNI Ichor renders" "$answer" "+        cni:
+            name: none"
expect_contains "plan: and kube-proxy off" "$answer" "+    proxy:
+        disabled: true"
expect_eq "plan: the node agrees with class B" "$(results plan NodeCheckMismatch)" ""
expect_eq "plan: the machine stays in the plan" "$(out plan | jq -r '[.items[] | select(.kind == "TalosMachine") | .metadata.name] | join(",")')" prod-w-2
expect_eq "plan: dry runs only on the node" "$(applies prod-w-2)" "[true]"
expect_eq "plan: nothing written" "$(objects)" "$before"

# The same stage alone: drift --node-check over the pipe gives the same plan.
"$ICHOR_BIN/kubectl-ichor-inspect" "$W2" --talosconfig "$TC" 2>/dev/null \
  | "$ICHOR_BIN/kubectl-ichor-trustcheck" --cluster prod 2>/dev/null \
  | "$ICHOR_BIN/kubectl-ichor-drift" --cluster prod --add-machine --node-check --talosconfig "$TC" -o json > "$OUT/pipe.json" 2>/dev/null
norm() { jq -S 'del(.items[].status.timings)' "$1"; }
if diff <(norm "$OUT/plan.out") <(norm "$OUT/pipe.json") > "$OUT/same-bytes.diff"; then
  pass "pipe: drift --node-check gives the same plan"
else
  fail "pipe: differs: $(head -c 600 "$OUT/same-bytes.diff")"
fi
run explain "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan --explain
expect_contains "explain: the node check" "$(out explain)" "| kubectl ichor drift --cluster prod --add-machine --node-check --talosconfig $TC > plan.yaml"

# Through an endpoint: the control plane forwards the dry run to the node.
sim DELETE /nodes/prod-w-2/calls > /dev/null
run ep "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --endpoints "$CP1" --plan -o json
expect_eq "endpoint: exit 0" "$(rc ep)" 0
expect_eq "endpoint: the node's answer" "$(results ep NodeCheck)" "$(results plan NodeCheck)"
expect_eq "endpoint: forwarded by the control plane" "$(sim GET /nodes/prod-w-2/calls | jq -r '[.[] | select(.method | endswith("ApplyConfiguration")) | ((.proxyFrom // "") != "" and .request.dryRun) | tostring] | join(",")')" true

# --no-node-check: no call to the node at all, and no answer in the plan.
sim DELETE /nodes/prod-w-2/calls > /dev/null
run skip "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan --no-node-check -o json
expect_eq "skip: exit 0" "$(rc skip)" 0
expect_eq "skip: no answer" "$(out skip | jq '[.results[] | select(.tags["ichor.maesh.dev/stage"] == "node-check")] | length')" 0
expect_eq "skip: no ApplyConfiguration" "$(applies prod-w-2)" "[]"

# A layer the node refuses: Ichor renders the CNI "none", and a role patch gives it manifests.
# Drift sees class B only (the CNI is Ichor's); Talos's validation rejects the combination on a
# control plane (machined validates the CNI of control planes only), so prod-cp-2 is the machine.
kubectl patch taloscluster -n $NS prod --type merge -p '{"spec":{"controlPlane":{"count":2}}}' > /dev/null
kubectl apply -f - > /dev/null <<'YAML'
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosConfigPatch
metadata:
  name: no-urls-for-none
  namespace: ichor-system
  labels: {ichor.maesh.dev/cluster: prod}
spec:
  cluster: prod
  layer: role
  role: controlplane
  order: 0
  patch: |
    cluster:
      network:
        cni:
          urls:
            - https://cni.lab.example/cni.yaml
YAML
before=$(objects)
sim DELETE /nodes/prod-cp-2/calls > /dev/null
run rejected "$A" --cluster prod --add-machine "$CP2" --talosconfig "$TC" --plan -o json
expect_eq "rejected: exit 1" "$(rc rejected)" 1
expect_eq "rejected: drift alone would write it" "$(out rejected | jq -r '[.results[] | select(.tags["ichor.maesh.dev/class"] == "C")] | length')" 0
expect_eq "rejected: in the node's words" "$(results rejected NodeRejected)" \
  "prod-cp-2 ($CP2): the node rejects the rendered configuration: 1 error occurred: * v1alpha1.Config: 1 error occurred: * \"urls\" field should be empty for \"none\" CNI; this machine is blocked; hint: kubectl get talosconfigpatches -n $NS -l ichor.maesh.dev/cluster=prod (fix the patch the node's words point to)"
expect_eq "rejected: the machine leaves the plan" "$(out rejected | jq '[.items[] | select(.kind == "TalosMachine")] | length')" 0
expect_eq "rejected: the node saw a dry run only" "$(applies prod-cp-2)" "[true]"
run rejected_yes "$A" --cluster prod --add-machine "$CP2" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" -o json
expect_eq "rejected --yes: exit 1" "$(rc rejected_yes)" 1
expect_contains "rejected --yes: the node's words" "$(results rejected_yes NodeRejected)" "\"urls\" field should be empty for \"none\" CNI"
expect_contains "rejected --yes: nothing written" "$(err rejected_yes)" "nothing was written"
expect_eq "rejected --yes: nothing written" "$(objects)" "$before"
expect_eq "rejected --yes: dry runs only" "$(applies prod-cp-2)" "[true,true]"

cleanup
finish
