#!/usr/bin/env bash
# The CNI on adoption (issue 13, "End-to-end tests"; ADR 0128 decisions 3 and 4, E6, E7) on the
# home scenarios: a Cilium takeover behind the preflight diff gate (cilium-inline, cilium-helm),
# the non-Cilium refusal with the ADR's words (home: flannel; calico) and --cni-unmanaged, and a
# cluster without a CNI adopted as managed Cilium (lab-controller stands in for the ichor-cni Job).
. "$(dirname "$0")/home_lab.inc"
A=$ICHOR_BIN/kubectl-ichor-adopt
written() { k get secret,taloscluster,talosmachine,talosconfigpatch -l ichor.maesh.dev/cluster=home -o name 2>/dev/null | sort | tr '\n' ' '; }
codes() { out "$1" | jq -r '[.results[] | .tags["ichor.maesh.dev/code"]] | join(" ")'; }
adopt() { # adopt NAME FLAGS...: the whole home cluster, consented
  local name=$1; shift
  run "$name" "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --yes --timeout 60s --parallel 3 -o json "$@"
}
ready_machines() { k get tm -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True; }
NO_MIGRATION="Ichor does not migrate a CNI. To have Ichor manage Cilium you need a cluster whose CNI is Cilium with ipam.mode: kubernetes, or none; see the adopt guide, 'Moving from flannel'."
RELAY=$OUT/relay.yaml
printf 'hubble:\n  relay:\n    enabled: true\n' > "$RELAY"
OWNED=$OUT/owned.yaml
printf 'ipam:\n  mode: kubernetes\n' > "$OWNED"

# --- E6: cilium-inline, the Talos guide's Cilium with hubble.relay.enabled=true, no record -----
home_up cilium-inline
TC=$(talosconfig home)
cd "$PRIV" || exit 1 # backups and recovered bundles stay in the private state (they hold secrets)
adopt inline-nofile
expect_eq "cilium-inline without --cilium-values: refused" "$(rc inline-nofile)" 1
expect_contains "the plan says what was detected" "$(codes inline-nofile)" "CniDetected"
expect_eq "the gate names hubble.relay.enabled, live true, rendered false" \
  "$(out inline-nofile | jq -r '[.results[] | select(.tags["ichor.maesh.dev/code"] == "CiliumDiff") | "\(.tags["ichor.maesh.dev/path"]) \(.tags["ichor.maesh.dev/live"]) \(.tags["ichor.maesh.dev/rendered"]) \(.severity)"] | join(";")')" \
  "hubble.relay.enabled true false error"
expect_contains "the gate's refusal" "$(codes inline-nofile)" "CiliumDiffRefused"
expect_eq "the gate refuses before any write" "$(written)" ""

run inline-owned "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cilium-values "$OWNED" --plan
expect_eq "an Ichor-owned key in --cilium-values: refused (usage)" "$(rc inline-owned)" 2
expect_contains "the owned key named" "$(err inline-owned)" "ipam.mode"
expect_eq "owned key: nothing written" "$(written)" ""

run inline-unmanaged "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --cilium-values "$RELAY" --plan
expect_eq "--cni-unmanaged --cilium-values: refused (usage)" "$(rc inline-unmanaged)" 2
expect_contains "--cni-unmanaged --cilium-values: why" "$(err inline-unmanaged)" "--cilium-values cannot be used with --cni-unmanaged"

adopt inline --cilium-values "$RELAY"
expect_eq "cilium-inline with the values file: adopted" "$(rc inline)" 0
expect_eq "no difference left" "$(out inline | jq '[.results[] | select(.tags["ichor.maesh.dev/code"] == "CiliumDiff")] | length')" 0
expect_eq "the TalosCluster: preset cilium, the values in spec.cni.cilium.values" \
  "$(k get taloscluster home -o jsonpath='{.spec.cni.preset} {.spec.cni.cilium.values.hubble.relay.enabled}')" "cilium true"
expect_eq "six machines Ready" "$(ready_machines)" 6
expect_contains "the plan said the agents restart" "$(err inline) $(out inline)" "restarts the Cilium agents"

# --- E6: cilium-helm, a release record whose values set hubble.relay.enabled --------------------
home_up cilium-helm
TC=$(talosconfig home)
run helm-flag "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cilium-values "$RELAY" --plan -o json
expect_eq "cilium-helm with --cilium-values: refused" "$(rc helm-flag)" 1
expect_eq "the ADR's text" \
  "$(out helm-flag | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "ReleaseHasValues") | .message')" \
  "the existing release already carries values; drop --cilium-values or remove them from the plan; hint: drop --cilium-values"
adopt helm
expect_eq "cilium-helm without the flag: adopted" "$(rc helm)" 0
expect_eq "with the record's values" \
  "$(k get taloscluster home -o jsonpath='{.spec.cni.preset} {.spec.cni.cilium.values.hubble.relay.enabled}')" "cilium true"
expect_contains "the values' source named" "$(out helm | jq -r '.results[].message' 2>/dev/null; out helm-flag | jq -r '.results[].message')" "release record"

# --- E7: home (flannel): the refusal with the ADR's words --------------------------------------
home_up home
TC=$(talosconfig home)
run flannel "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --plan -o json
expect_eq "flannel: refused" "$(rc flannel)" 1
expect_eq "flannel: the refusal word for word" \
  "$(out flannel | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "CniNotCilium") | .message')" \
  "cni: the cluster's CNI is flannel, not Cilium: rerun with --cni-unmanaged to adopt the cluster and leave its CNI as it is. $NO_MIGRATION; hint: rerun with --cni-unmanaged"
expect_eq "flannel: nothing written" "$(written)" ""

# --- Calico: refused; with --cni-unmanaged adopted unmanaged -------------------------------------
home_up calico
TC=$(talosconfig home)
run calico "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --plan -o json
expect_eq "calico: refused" "$(rc calico)" 1
expect_contains "calico: the refusal names it" \
  "$(out calico | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "CniNotCilium") | .message')" "CNI is calico"
expect_contains "calico: and the ADR's sentence" "$(out calico | jq -r '.results[].message')" "$NO_MIGRATION"
adopt calico-unmanaged --cni-unmanaged
expect_eq "calico --cni-unmanaged: adopted" "$(rc calico-unmanaged)" 0
expect_eq "calico: spec.cni.preset unmanaged" "$(k get taloscluster home -o jsonpath='{.spec.cni.preset}')" "unmanaged"
expect_eq "calico: six machines Ready" "$(ready_machines)" 6

# --- no CNI: adopted as managed Cilium --------------------------------------------------------
home_up no-cni
TC=$(talosconfig home)
expect_eq "no-cni: every Node NotReady" "$(kubectl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | sort -u)" False
adopt nocni
expect_eq "no-cni: adopted" "$(rc nocni)" 0
expect_eq "no-cni: spec.cni.preset cilium" "$(k get taloscluster home -o jsonpath='{.spec.cni.preset}')" "cilium"
expect_contains "no-cni: the CLI waited for Ichor's Cilium" "$(err nocni)" "every Node is Ready"
expect_eq "no-cni: Cilium runs (the stand-in's objects)" "$(kubectl -n kube-system get ds cilium -o name)" "daemonset.apps/cilium"
expect_eq "no-cni: every Node Ready" "$(kubectl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | sort -u)" True
expect_eq "no-cni: six machines Ready" "$(ready_machines)" 6
finish
