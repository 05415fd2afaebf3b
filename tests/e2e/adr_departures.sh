#!/usr/bin/env bash
# Issue 14, "Where the suite departs from the ADR", items 1-4 and 6 on the default lab: a rerun is
# idempotent and releases a machine an interrupted run left held; the namespace is ichor-system
# whatever the kubeconfig context says; class C blocks that machine, not the run; a CA rotation
# refuses whatever the bundle's source; a pending TalosMachine of the UUID does not make the node
# an Ichor machine. Leaves the lab as it found it.
. "$(dirname "$0")/lib.sh"
A=$ICHOR_BIN/kubectl-ichor-adopt
TC=$(talosconfig prod)
W2=$(node_addr prod-w-2); CP2=$(node_addr prod-cp-2); CP1=$(node_addr prod-cp-1)
NS=ichor-system
PRIVATE=$ICHOR_LAB_STATE/private/$test_name # kubeconfigs with the admin key: not under $OUT
rm -rf "$PRIVATE"; mkdir -p "$PRIVATE"
objects() { kubectl get talosmachines,talosconfigpatches -n $NS -o name | sort | tr '\n' ' '; }
ready() { kubectl get talosmachine -n $NS "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null; }
held() { kubectl get talosmachine -n $NS "$1" -o jsonpath='{.metadata.annotations.ichor\.maesh\.dev/hold-apply}' 2>/dev/null; }
codes() { out "$1" | jq -r '[.results[].tags["ichor.maesh.dev/code"]] | join(" ")'; }
remove_tm() {
  kubectl annotate talosmachine -n $NS "$1" ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
  kubectl delete talosmachine -n $NS "$1" --ignore-not-found > /dev/null 2>&1
}
cleanup() {
  for m in prod-w-2 prod-cp-2 stale-w-2; do
    remove_tm $m
    kubectl annotate talosconfigpatch -n $NS $m-adopted ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
    kubectl delete talosconfigpatch -n $NS $m-adopted --ignore-not-found > /dev/null 2>&1
  done
  kubectl patch taloscluster -n $NS prod --type merge -p '{"spec":{"controlPlane":{"count":1}}}' > /dev/null
  kubectl -n $NS patch secret prod-secrets --type json -p '[{"op":"remove","path":"/data/rotation.yaml"}]' > /dev/null 2>&1
  sim POST /nodes/prod-cp-2/config "$(other_ca_delete)" > /dev/null 2>&1
}
cleanup
before=$(objects)

# --- 2. the namespace: a context that says `namespace: default` does not move Ichor's objects ---
kubectl config view --raw --minify > "$PRIVATE/kubeconfig-default-ns"
kubectl --kubeconfig "$PRIVATE/kubeconfig-default-ns" config set-context --current --namespace default > /dev/null
run ns env KUBECONFIG="$PRIVATE/kubeconfig-default-ns" "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json
expect_eq "namespace: exit 0 with a context in namespace default" "$(rc ns)" 0
expect_not_contains "namespace: not looked up in default" "$(err ns)" "not found in namespace \"default\""
expect_eq "namespace: planned in ichor-system" "$(out ns | jq -r '.items[] | select(.kind == "TalosMachine") | .metadata.namespace')" $NS
run ns_n env KUBECONFIG="$PRIVATE/kubeconfig-default-ns" "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -n default
expect_eq "namespace: -n still wins" "$(rc ns_n)" 3
expect_contains "namespace: -n default is looked up there" "$(err ns_n)" "TalosCluster \"prod\" not found in namespace \"default\""

# --- 4. a CA rotation under way refuses whatever the bundle's source ---------------------------
kubectl -n $NS patch secret prod-secrets --type merge -p '{"stringData":{"rotation.yaml":"x: y"}}' > /dev/null
run rot_secret "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan
expect_eq "rotation, bundle Secret: exit 1" "$(rc rot_secret)" 1
run rot_file "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan --secrets-bundle "$(cluster_field prod secretsBundle)"
expect_eq "rotation, --secrets-bundle: exit 1" "$(rc rot_file)" 1
expect_contains "rotation, --secrets-bundle: says so" "$(err rot_file)" "holds rotation.yaml: a CA rotation is under way"
rm -f "$PRIVATE/recovered.yaml"
run rot_recover "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan --recover-secrets --recover-from "$CP1" --recover-to "$PRIVATE/recovered.yaml"
expect_eq "rotation, --recover-secrets: exit 1" "$(rc rot_recover)" 1
expect_contains "rotation, --recover-secrets: says so" "$(err rot_recover)" "a CA rotation is under way"
[ ! -e "$PRIVATE/recovered.yaml" ] && pass "rotation, --recover-secrets: nothing recovered to disk" || fail "rotation: a bundle was recovered"
kubectl -n $NS patch secret prod-secrets --type json -p '[{"op":"remove","path":"/data/rotation.yaml"}]' > /dev/null
expect_eq "rotation: nothing written" "$(objects)" "$before"

# --- 6. a pending TalosMachine of the UUID is stale: the node is added, the record named --------
kubectl apply -f - > /dev/null <<EOF
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosMachine
metadata: {name: stale-w-2, namespace: $NS, labels: {ichor.maesh.dev/cluster: prod}}
spec: {cluster: prod, approval: Pending, address: "$W2", identity: {uuid: "$(node_field prod-w-2 uuid)"}}
EOF
run stale "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json
expect_eq "pending of the UUID: exit 0" "$(rc stale)" 0
expect_eq "pending of the UUID: planned, not skipped" "$(out stale | jq -r '[.items[] | select(.kind == "TalosMachine") | .metadata.name] | join(" ")')" prod-w-2
expect_contains "pending of the UUID: the stale record is named" "$(codes stale)" StaleMachine
expect_contains "pending of the UUID: with how to remove it" "$(out stale | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "StaleMachine") | .message')" \
  "kubectl delete talosmachine stale-w-2 -n $NS"
remove_tm stale-w-2

# --- 3. class C blocks that machine, not the run --------------------------------------------------
kubectl patch taloscluster -n $NS prod --type merge -p '{"spec":{"controlPlane":{"count":2}}}' > /dev/null
sim POST /nodes/prod-cp-2/config "$(other_ca_patch)" > /dev/null
run partial "$A" --cluster prod --add-machine "$W2" --add-machine "$CP2" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" --timeout 60s -o json
expect_eq "class C: exit 5 (partial)" "$(rc partial)" 5
expect_eq "class C: the worker is written and released" "$(ready prod-w-2)/$(held prod-w-2)" "True/"
expect_eq "class C: nothing for the blocked control plane" "$(objects | grep -c prod-cp-2)" 0
expect_contains "class C: the blocked machine is named" "$(out partial | jq -r '[.results[].message] | join("\n")')" "$CP2: cluster.acceptedCAs"
expect_contains "class C: it says how to wipe it" "$(out partial | jq -r '[.results[].message] | join("\n")')" "kubectl ichor reclaim $CP2 --talosconfig FILE --cluster prod"
expect_not_contains "class C: no whole-run refusal" "$(out partial; err partial)" "every machine is blocked"
run allblocked "$A" --cluster prod --add-machine "$CP2" --talosconfig "$TC" --yes -o json
expect_eq "class C, none writable: exit 1" "$(rc allblocked)" 1
expect_contains "class C, none writable: nothing was written" "$(out allblocked | jq -r '.results[-1].message')" "every machine is blocked ($CP2): nothing was written"
sim POST /nodes/prod-cp-2/config "$(other_ca_delete)" > /dev/null

# --- 1. a rerun is idempotent; it releases a machine an interrupted run left held ---------------
run rerun "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --yes --timeout 60s -o json
expect_eq "rerun: exit 0" "$(rc rerun)" 0
expect_eq "rerun: reported as already adopted and skipped" "$(codes rerun)" AlreadyAdopted
expect_contains "rerun: names the machine" "$(out rerun | jq -r '.results[0].message')" "is already TalosMachine prod-w-2 (cluster prod); skipped"
expect_not_contains "rerun: no consent asked for nothing" "$(err rerun)" "create 0 held"
kubectl annotate talosmachine -n $NS prod-w-2 ichor.maesh.dev/hold-apply=true > /dev/null # as an interrupted run leaves it
sleep 1.5
expect_eq "interrupted: held again" "$(held prod-w-2)" true
run resume "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --yes --timeout 60s -o json
expect_eq "interrupted, rerun: exit 0" "$(rc resume)" 0
expect_eq "interrupted, rerun: released after the zero-drift check, Ready" "$(ready prod-w-2)/$(held prod-w-2)" "True/"
expect_contains "interrupted, rerun: the release is reported" "$(out resume | jq -r '[.results[].tags["ichor.maesh.dev/code"]] | join(" ")')" Released

cleanup
expect_eq "the lab is as it was" "$(objects)" "$before"
rm -rf "$PRIVATE"
finish
