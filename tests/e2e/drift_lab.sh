#!/usr/bin/env bash
# kubectl ichor drift against the default lab (issue 5): the E1 node, a registry mirror the
# cluster lacks, a setting outside every rule, a patch that does not apply, a rerun, a missing
# cluster. prod-w-2's configuration is changed out of band through the sim and put back.
. "$(dirname "$0")/lib.sh"
I=$ICHOR_BIN/kubectl-ichor-inspect
T=$ICHOR_BIN/kubectl-ichor-trustcheck
D=$ICHOR_BIN/kubectl-ichor-drift
TC=$(talosconfig prod)
W1=$(node_addr prod-w-1); W2=$(node_addr prod-w-2)
BUNDLE=$(cluster_field prod secretsBundle)

trusted() { # trusted NAME ADDRESS...: inspect | trustcheck into $OUT/NAME.trusted
  local name=$1; shift
  "$I" "$@" --talosconfig "$TC" 2>/dev/null | "$T" --cluster prod > "$OUT/$name.trusted" 2>/dev/null
}
classes() { out "$1" | jq -r '[.results[] | select(.tags["ichor.maesh.dev/class"]) | .tags["ichor.maesh.dev/class"] + ":" + .tags["ichor.maesh.dev/code"]] | unique | join(",")'; }
dry_run_create() { # every planned object, created with the API server's dry run
  out "$1" | jq -c '.items[] | select(.apiVersion == "ichor.maesh.dev/v1alpha1")' | while read -r obj; do
    printf '%s' "$obj" | kubectl create --dry-run=server -f - -o name 2>&1 || echo "REFUSED"
  done
}

# E1: prod-w-2, configured by Talos's plain generator: zero or class A/B drift only.
trusted e1 "$W2"
run_in e1 "$OUT/e1.trusted" "$D" --cluster prod -o json
expect_eq "E1: exit 0" "$(rc e1)" 0
expect_eq "E1: classes" "$(classes e1)" "B:CNI,B:KubeProxy"
expect_eq "E1: no class C" "$(out e1 | jq '[.results[] | select(.tags["ichor.maesh.dev/class"] == "C")] | length')" 0
expect_eq "E1: machine" "$(out e1 | jq -r '.items[] | select(.kind == "TalosMachine") | [.metadata.name, .spec.role, .spec.approval, .metadata.annotations["ichor.maesh.dev/hold-apply"], .metadata.labels["ichor.maesh.dev/cluster"]] | join(",")')" "prod-w-2,worker,Approved,true,prod"
expect_eq "E1: install disk from the node" "$(out e1 | jq -r '.items[] | select(.kind == "TalosMachine") | .spec.install.disk')" "$(node_field prod-w-2 installDisk)"
expect_eq "E1: identity" "$(out e1 | jq -r '.items[] | select(.kind == "TalosMachine") | .spec.identity.uuid')" "$(node_field prod-w-2 uuid)"
expect_eq "E1: no patch" "$(out e1 | jq '[.items[] | select(.kind == "TalosConfigPatch")] | length')" 0
expect_eq "E1: Inspection kept" "$(out e1 | jq -r '.items[0].kind')" Inspection
expect_not_contains "E1: the API server takes the objects" "$(dry_run_create e1)" REFUSED
run_in e1_table "$OUT/e1.trusted" "$D" --cluster prod -o table
expect_contains "E1: table names role and disk" "$(out e1_table)" "prod-w-2   worker   $W2   $(node_field prod-w-2 installDisk)"

# A registry mirror (and a sysctl) the cluster does not set: class A, captured and verified.
sim POST /nodes/prod-w-2/config "$(printf 'machine:\n  sysctls:\n    net.core.somaxconn: "65535"\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\nendpoints:\n  - url: https://mirror.lab.example:5000\n')" > /dev/null
trusted mirror "$W2"
run_in mirror "$OUT/mirror.trusted" "$D" --cluster prod -o json
expect_eq "mirror: exit 0" "$(rc mirror)" 0
expect_eq "mirror: classes" "$(classes mirror)" "A:RegistryMirror,A:Sysctl,B:CNI,B:KubeProxy"
expect_eq "mirror: patch name and layer" "$(out mirror | jq -r '.items[] | select(.kind == "TalosConfigPatch") | [.metadata.name, .spec.layer, .spec.machine] | join(",")')" "prod-w-2-adopted,machine,prod-w-2"
expect_contains "mirror: the patch holds the mirror" "$(out mirror | jq -r '.items[] | select(.kind == "TalosConfigPatch") | .spec.patch')" "url: https://mirror.lab.example:5000"
expect_not_contains "mirror: the API server takes the objects" "$(dry_run_create mirror)" REFUSED

# The same node when the cluster sets spec.registries: Ichor's, with consent, hint both ways.
kubectl get taloscluster prod -o json | jq '.spec.registries = {mirrors: {"ghcr.io": {endpoints: ["https://ghcr.lab.example"]}}}' > "$OUT/cluster-registries.json"
kubectl get talosconfigpatches,talosmachines -o json > "$OUT/objects.json"
run_in registries "$OUT/mirror.trusted" "$D" --cluster prod --cluster-file "$OUT/cluster-registries.json" --patches-file "$OUT/objects.json" --secrets-bundle "$BUNDLE" -o json
expect_eq "registries set: exit 0" "$(rc registries)" 0
expect_eq "registries set: class B" "$(out registries | jq -r '[.results[] | select(.field.path | tostring | startswith("machine.registries")) | .tags["ichor.maesh.dev/class"]] | unique | join(",")')" B
hint=$(out registries | jq -r '[.results[] | select(.tags["ichor.maesh.dev/code"] == "Registries")][0].message')
expect_contains "registries hint: add the cluster's mirrors to the node" "$hint" "add the cluster's mirrors to the node's configuration"
expect_contains "registries hint: or set spec.registries to the node's" "$hint" "set spec.registries of TalosCluster prod to the node's"

# A setting no patch can carry (another cluster's CA): class C, the machine is blocked.
sim POST /nodes/prod-w-2/config "$(other_ca_patch)" > /dev/null
trusted odd "$W2"
run_in odd "$OUT/odd.trusted" "$D" --cluster prod -o json
expect_eq "outside every rule: exit 1" "$(rc odd)" 1
expect_eq "outside every rule: C" "$(out odd | jq -r '.results[] | select(.tags["ichor.maesh.dev/class"] == "C") | .field.path + "=" + .tags["ichor.maesh.dev/code"]')" "cluster.acceptedCAs=CADiffers"
expect_eq "outside every rule: nothing planned" "$(out odd | jq '[.items[] | select(.kind != "Inspection" and .kind != "PlanBasis")] | length')" 0
expect_eq "outside every rule: closing words" "$(out odd | jq -r '.results[-1].message | split(";")[0]')" "nothing to adopt: $W2 blocked"
run_in odd_add "$OUT/odd.trusted" "$D" --cluster prod --add-machine -o json
expect_eq "--add-machine: exit 1" "$(rc odd_add)" 1
expect_eq "--add-machine: closing words" "$(out odd_add | jq -r '.results[-1].message | split(";")[0]')" "every machine is blocked ($W2): nothing was written"

# Back to the generator's configuration: class B only again.
sim POST /nodes/prod-w-2/config "$(printf 'machine:\n  sysctls:\n    net.core.somaxconn:\n      $patch: delete\ncluster:\n  acceptedCAs:\n    $patch: delete\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\n$patch: delete\n')" > /dev/null
trusted back "$W2"
run_in back "$OUT/back.trusted" "$D" --cluster prod -o json
expect_eq "restored: classes" "$(classes back)" "B:CNI,B:KubeProxy"

# A TalosConfigPatch that does not apply: named, with its path; the machine is blocked.
jq '.items += [{apiVersion: "ichor.maesh.dev/v1alpha1", kind: "TalosConfigPatch", metadata: {name: "broken", namespace: "ichor-system"}, spec: {cluster: "prod", layer: "cluster", patch: "machine:\n  sysctls: [a]\n"}}]' "$OUT/objects.json" > "$OUT/objects-broken.json"
run_in broken "$OUT/back.trusted" "$D" --cluster prod --cluster-file <(kubectl get taloscluster prod -o json) --patches-file "$OUT/objects-broken.json" --secrets-bundle "$BUNDLE" -o json
expect_eq "broken patch: exit 1" "$(rc broken)" 1
expect_eq "broken patch: message" "$(out broken | jq -r '.results[0].message | split(";")[0]')" "$W2: TalosConfigPatch broken: machine.sysctls: a list where the configuration has a mapping"

# A rerun over a node that is already a TalosMachine: reported and skipped.
trusted w1 "$W1"
run_in rerun "$OUT/w1.trusted" "$D" --cluster prod -o json
expect_eq "rerun: exit 0" "$(rc rerun)" 0
expect_eq "rerun: skipped" "$(out rerun | jq -r '.results[0].tags["ichor.maesh.dev/code"]')" AlreadyAdopted

# A TalosCluster that does not exist: exit 3, naming it and the namespace searched.
run_in nope "$OUT/e1.trusted" "$D" --cluster nope
expect_eq "no cluster: exit 3" "$(rc nope)" 3
expect_eq "no cluster: message" "$(err nope | head -1)" 'kubectl ichor drift: error: TalosCluster "nope" not found in namespace "ichor-system"'
expect_eq "no cluster: nothing on stdout" "$(out nope)" ""
finish
