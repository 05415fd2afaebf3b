#!/usr/bin/env bash
# The home scenario (docs/lab.md, "The home scenarios") in a private lab: the cluster's own Kubernetes API
# holds six Ready Nodes and flannel, and lab-controller brings released machines of `home` to
# Ready when the TalosCluster, its bundle Secret and the machines were written as the
# whole-cluster adoption writes them (not seeded). Then home-nocrds: the Ichor API not served.
# The private lab and its helpers: home_lab.inc. Run by hand:  bash tests/e2e/home_lab.sh
. "$(dirname "$0")/home_lab.inc"

home_up home
NODES=$HOME_NODES

# --- the cluster's own Kubernetes API --------------------------------------------------------
run nodes kubectl get nodes --no-headers
expect_eq "kubectl get nodes: six Ready Nodes" "$(out nodes | awk '$2 == "Ready" {print $1}' | sort | tr '\n' ' ')" "$NODES "
expect_eq "control planes carry the role" "$(out nodes | awk '$3 == "control-plane" {print $1}' | tr '\n' ' ')" "home-cp-1 home-cp-2 home-cp-3 "
expect_eq "kubelet version" "$(kubectl get nodes -o jsonpath='{.items[*].status.nodeInfo.kubeletVersion}' | tr ' ' '\n' | sort -u)" "$(cluster_field home kubernetesVersion)"
expect_eq "InternalIP is the node's address" "$(kubectl get node home-w-3 -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')" "$(node_addr home-w-3)"
run flannel kubectl -n kube-system get daemonset/kube-flannel configmap/kube-flannel-cfg serviceaccount/flannel clusterrole/flannel clusterrolebinding/flannel -o name
expect_eq "flannel as Talos leaves it" "$(out flannel | tr '\n' ' ')" "daemonset.apps/kube-flannel configmap/kube-flannel-cfg serviceaccount/flannel clusterrole.rbac.authorization.k8s.io/flannel clusterrolebinding.rbac.authorization.k8s.io/flannel "
expect_eq "flannel: one pod per Node, ready" "$(kubectl -n kube-system get ds kube-flannel -o jsonpath='{.status.desiredNumberScheduled}/{.status.numberReady}')" "6/6"
expect_contains "the Ichor API is served" "$(kubectl api-resources --api-group=ichor.maesh.dev -o name)" "talosclusters.ichor.maesh.dev"
expect_eq "home is not recorded in Ichor" "$(k get tc,tm,tcp -o name | wc -l)" 0

# --- what the whole-cluster adoption writes, then its release one machine at a time ----------
# The bundle is the cluster's (trustcheck.sh shows the recovered bundle equals it). Its Secret is
# kept out of $OUT, which zz_secrets_scan reads.
kubectl -n ichor-system create secret generic home-secrets --from-file=bundle.yaml="$(cluster_field home secretsBundle)" \
  --dry-run=client -o json | jq '.metadata.labels = {"ichor.maesh.dev/cluster": "home"}' > "$PRIV/secret.json"
jq -n --slurpfile lab "$LAB" '{
  apiVersion: "ichor.maesh.dev/v1alpha1", kind: "TalosCluster",
  metadata: {name: "home", namespace: "ichor-system", labels: {"ichor.maesh.dev/cluster": "home"}},
  spec: ($lab[0].clusters[] | select(.name == "home") | {
    talosVersion, kubernetesVersion, endpoint, clusterName: "home", versionContract: .contract,
    controlPlane: {count: 3}, cni: {preset: "unmanaged"},
    discovery: {addresses: [$lab[0].nodes[] | select(.cluster == "home") | .address]},
    secretsBundleRef: {name: "home-secrets", key: "bundle.yaml"}})}' > "$OUT/cluster.json"
jq -n '{apiVersion: "ichor.maesh.dev/v1alpha1", kind: "TalosConfigPatch",
  metadata: {name: "home-cluster", namespace: "ichor-system", labels: {"ichor.maesh.dev/cluster": "home"}},
  spec: {cluster: "home", layer: "cluster", patch: "machine:\n  sysctls:\n    vm.max_map_count: \"262144\"\n"}}' > "$OUT/patch.json"
jq '[.nodes[] | select(.cluster == "home") | {
  apiVersion: "ichor.maesh.dev/v1alpha1", kind: "TalosMachine",
  metadata: {name, namespace: "ichor-system", labels: {"ichor.maesh.dev/cluster": "home"},
    annotations: {"ichor.maesh.dev/hold-apply": "true"}},
  spec: {cluster: "home", approval: "Approved", role, address,
    identity: {uuid, serial, macs}, install: {disk: .installDisk, image: .installImage, wipe: false}}}]
  | {apiVersion: "v1", kind: "List", items: .}' "$LAB" > "$OUT/machines.json"
run write sh -c "kubectl apply --server-side --field-manager=kubectl-ichor-adopt -f '$PRIV/secret.json' -f '$OUT/cluster.json' -f '$OUT/patch.json' -f '$OUT/machines.json'"
expect_eq "the adoption's objects are accepted" "$(rc write)" 0
[ "$(rc write)" = 0 ] || err write
sim DELETE /nodes/home-cp-1/calls > /dev/null
for m in $NODES; do
  expect_eq "$m held: AdoptionHeld" "$(wait_condition "$m" AdoptionHeld True/HoldApply 15)" "True/HoldApply"
done
expect_eq "held: Ready=False AdoptionHeld" "$(condition home-w-1 Ready)" "False/AdoptionHeld"
for m in $NODES; do
  k annotate tm "$m" ichor.maesh.dev/hold-apply- > /dev/null
  expect_eq "$m released: Ready" "$(wait_condition "$m" Ready True/IdentityVerified 15)" "True/IdentityVerified"
  expect_eq "$m released: AdoptionHeld gone" "$(condition "$m" AdoptionHeld)" "/"
  [ "$m" = home-w-3 ] || expect_eq "after $m: home-w-3 still held" "$(condition home-w-3 AdoptionHeld)" "True/HoldApply"
done
calls=$(for m in $NODES; do sim GET "/nodes/$m/calls"; done | jq -s -r '[.[][] | .method] | unique | join(",")')
expect_not_contains "no ApplyConfiguration" "$calls" ApplyConfiguration
expect_not_contains "no Reset" "$calls" Reset
expect_contains "lab-controller read the nodes" "$(sim GET /nodes/home-w-3/calls | jq -r '.[].method')" "/cosi.resource.State/Get"
ICHOR_LAB_STATE=$PRIV "$ICHOR_ROOT/tests/lab/down" > /dev/null 2>&1

# --- home-nocrds: the Ichor API not served ---------------------------------------------------
home_up home-nocrds
expect_eq "home-nocrds: no ichor.maesh.dev resources" "$(kubectl api-resources --api-group=ichor.maesh.dev -o name 2>&1)" ""
run nocrds_get kubectl -n ichor-system get talosclusters
expect_contains "home-nocrds: kubectl says the type is unknown" "$(err nocrds_get)" 'the server doesn'"'"'t have a resource type "talosclusters"'
expect_eq "home-nocrds: the Nodes are there" "$(kubectl get nodes --no-headers | awk '$2 == "Ready"' | wc -l)" 6
finish
