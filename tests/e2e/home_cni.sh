#!/usr/bin/env bash
# The CNI on adoption (ADR 0128 decisions 3 and 4, E6, E7; docs/adr-departures.md, 4) on the
# home scenarios: a Cilium takeover behind the preflight diff gate (cilium-inline, cilium-helm),
# the non-Cilium refusal with the ADR's words (home: flannel; calico) and --cni-unmanaged, and a
# cluster without a CNI adopted as managed Cilium (lab-controller stands in for the ichor-cni Job),
# and E7's planned outage from flannel done as the adopt guide tells a person ("Moving from
# flannel"): cni.name none patched through the Talos API, flannel deleted, the nodes rebooted,
# flannel's CNI file that survives on Talos 1.13 removed, then the adoption; it prints the outage.
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

run inline-plan "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cilium-values "$RELAY" --plan -o json
expect_eq "the plan with the values file: no refusal" "$(out inline-plan | jq '[.results[] | select(.severity == "error")] | length')" 0
expect_eq "the inline manifest's removal: class B on each control plane, for consent" \
  "$(out inline-plan | jq -r '[.results[] | select(.tags["ichor.maesh.dev/code"] == "CiliumInlineManifest") | "\(.tags["ichor.maesh.dev/class"]) \(.severity) \(.field.path)"] | unique | join(";")')" \
  "B warning cluster.inlineManifests"
expect_eq "three control planes carry it, no worker" \
  "$(out inline-plan | jq -r '[.results[] | select(.tags["ichor.maesh.dev/code"] == "CiliumInlineManifest") | .tags["ichor.maesh.dev/node"]] | sort | join(" ")')" \
  "127.0.0.51 127.0.0.52 127.0.0.53"
expect_eq "no inline manifest blocks a machine" \
  "$(out inline-plan | jq '[.results[] | select(.tags["ichor.maesh.dev/code"] == "InlineManifests")] | length')" 0
expect_contains "the plan says why it goes" "$(out inline-plan | jq -r '.results[].message')" \
  "the Talos inline manifest cilium delivers Cilium and the next talosctl upgrade-k8s would apply it again"
expect_eq "the planned TalosCluster records the manifest" \
  "$(out inline-plan | jq -c '.items[] | select(.kind == "TalosCluster") | .spec.cni.cilium.inlineManifests')" '["cilium"]'
adopt inline --cilium-values "$RELAY"
expect_eq "cilium-inline with the values file: adopted" "$(rc inline)" 0
expect_eq "no difference left" "$(out inline | jq '[.results[] | select(.tags["ichor.maesh.dev/code"] == "CiliumDiff")] | length')" 0
expect_eq "the TalosCluster: preset cilium, the values in spec.cni.cilium.values" \
  "$(k get taloscluster home -o jsonpath='{.spec.cni.preset} {.spec.cni.cilium.values.hubble.relay.enabled}')" "cilium true"
expect_eq "six machines Ready" "$(ready_machines)" 6
expect_contains "the plan said the agents restart" "$(err inline) $(out inline)" "restarts the Cilium agents"
expect_eq "the consent listed the removal on each control plane" \
  "$(err inline | grep -c '^  127\.0\.0\.5[123]: cluster\.inlineManifests: ')" 3
expect_eq "the TalosCluster records the manifest for the render" \
  "$(k get taloscluster home -o jsonpath='{.spec.cni.cilium.inlineManifests}')" '["cilium"]'
# The takeover itself (E6's "a takeover that keeps Hubble"): the stand-in for the ichor-cni Job
# renders Cilium from spec.cni.cilium.values and replaces the live objects; a render without the
# stored values would prune hubble-relay.
managers() { kubectl -n kube-system get "$1" -o json --show-managed-fields 2>/dev/null | jq -r '[.metadata.managedFields[]?.manager] | unique | join(",")'; }
wait_taken_over() { # until the DaemonSet, the ConfigMap and hubble-relay are the stand-in's (the
  # stand-in writes them one after the other; at most 30 s); prints the DaemonSet's managers
  local until=$((SECONDS + 30)) m=""
  while [ $SECONDS -lt $until ]; do
    m=$(managers ds/cilium)
    [[ "$m" == *ichor-cni* && "$(managers cm/cilium-config)" == *ichor-cni* &&
       "$(managers deployment/hubble-relay)" == *ichor-cni* ]] && break
    sleep 0.3
  done
  echo "$m"
}
expect_contains "E6 takeover: the DaemonSet cilium replaced by the ichor-cni stand-in" "$(wait_taken_over)" ichor-cni
expect_contains "E6 takeover: the ConfigMap cilium-config replaced too" "$(managers cm/cilium-config)" ichor-cni
expect_contains "E6 takeover: Hubble relay on after it (its Deployment rendered again)" "$(managers deployment/hubble-relay)" ichor-cni
# The live ConfigMap says Hubble on too: it is read only once the stand-in replaced it.
hubble_in_replaced() {
  [[ "$(managers cm/cilium-config)" == *ichor-cni* ]] || { echo "not replaced"; return; }
  kubectl -n kube-system get cm cilium-config -o jsonpath='{.data.enable-hubble}'
}
expect_eq "E6 takeover: Hubble on in the replaced ConfigMap" "$(hubble_in_replaced)" true

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
expect_contains "the values' source named: the release record's values" \
  "$(out helm-flag | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "CniDetected") | .message')" \
  "(release record sh.helm.release.v1.cilium.v1 with values)"
# Each check reads one object: the DaemonSet's managers (ichor-cni after any takeover) must not
# stand in for hubble-relay's, which a render without the record's values deletes.
expect_contains "E6 takeover (helm): the DaemonSet cilium replaced by the ichor-cni stand-in" "$(wait_taken_over)" ichor-cni
expect_contains "E6 takeover (helm): Hubble relay on after it, from the record's values" \
  "$(managers deployment/hubble-relay)" ichor-cni

# --- E7: home (flannel): the refusal with the ADR's words --------------------------------------
home_up home
TC=$(talosconfig home)
run flannel "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --plan -o json
expect_eq "flannel: refused" "$(rc flannel)" 1
expect_eq "flannel: the refusal word for word" \
  "$(out flannel | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "CniNotCilium") | .message')" \
  "cni: the cluster's CNI is flannel, not Cilium: rerun with --cni-unmanaged to adopt the cluster and leave its CNI as it is. $NO_MIGRATION; hint: rerun with --cni-unmanaged"
expect_eq "flannel: nothing written" "$(written)" ""

# --- E7: the planned outage, done as the adopt guide ("Moving from flannel") tells a person -----
REF=$ICHOR_ROOT/build/lab/talos-ref
node_ready() { kubectl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | sort -u | tr '\n' ' '; }
confs() { for n in $HOME_NODES; do sim GET "/nodes/$n" | jq -r '.cniConfs // [] | join(",")'; done | sort -u | tr '\n' ' '; }
wait_nodes() { # wait_nodes WANT SECONDS: until every Node's Ready is WANT; prints the last value
  local until=$((SECONDS + $2)) s=""
  while [ $SECONDS -lt $until ]; do s=$(node_ready); [ "$s" = "$1 " ] && break; sleep 0.3; done
  echo "$s"
}
cni_workload() { kubectl -n kube-system get daemonsets -o name | grep -E '/(cilium|kube-flannel|kube-flannel-ds|calico-node)$' | tr '\n' ' '; }
# 1. talosctl patch mc --nodes ... --patch @cni-none.yaml
CNI_NONE=$OUT/cni-none.yaml
printf 'cluster:\n  network:\n    cni:\n      name: none\n' > "$CNI_NONE"
run e7-patch "$REF" --talosconfig "$TC" --patch "$CNI_NONE" ${HOME_ADDRS//,/ }
expect_eq "E7 step 1: cni.name none patched through the Talos API on every node" "$(rc e7-patch)" 0
expect_eq "E7 step 1: the nodes run it" \
  "$(for n in $HOME_NODES; do sim GET "/nodes/$n/config" | grep -A1 '^        cni:' | grep -c 'name: none'; done | sort -u)" 1
# 2. kubectl delete the flannel workload (the outage starts here)
T0=$(date +%s.%N)
kubectl -n kube-system delete daemonset/kube-flannel configmap/kube-flannel-cfg serviceaccount/flannel > "$OUT/e7-delete.out" 2>&1
kubectl delete clusterrole/flannel clusterrolebinding/flannel >> "$OUT/e7-delete.out" 2>&1
expect_eq "E7 step 2: no CNI workload left" "$(cni_workload)" ""
# 3. talosctl reboot, one node after the other (it waits for each to come back)
for n in $HOME_NODES; do
  before=$(sim GET "/nodes/$n" | jq .bootCount)
  "$REF" --talosconfig "$TC" --reboot "$(node_addr "$n")" >> "$OUT/e7-reboot.out" 2>&1
  until=$((SECONDS + 30))
  while [ $SECONDS -lt $until ] && [ "$(sim GET "/nodes/$n" | jq -r '"\(.bootCount > '"$before"') \(.power)"')" != "true up" ]; do sleep 0.2; done
done
expect_eq "E7 step 3: every node rebooted once and is up" \
  "$(for n in $HOME_NODES; do sim GET "/nodes/$n" | jq -r '"\(.bootCount) \(.power)"'; done | sort -u)" "2 up"
# Talos 1.13: /etc/cni is on EPHEMERAL, so flannel's file survived the reboot and the Nodes stay Ready.
sleep 2 # a few lab-controller passes
expect_eq "E7 on Talos 1.13: flannel's CNI file survived the reboot" "$(confs)" "10-flannel.conflist "
expect_eq "E7 on Talos 1.13: so every Node is still Ready" "$(node_ready)" "True "
run e7-leftover "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --plan -o json
expect_eq "E7 leftover: refused" "$(rc e7-leftover)" 1
expect_contains "E7 leftover: the plan names the file and what to do" \
  "$(out e7-leftover | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "CniLeftoverConfig") | .message')" \
  "flannel's /etc/cni/net.d/10-flannel.conflist survived the reboot and the container runtime still reports the network ready. Remove that file from every node (or wipe EPHEMERAL)"
expect_contains "E7 leftover: the hint is the command" "$(out e7-leftover | jq -r '.results[].message')" \
  "kubectl debug node/NODE -n kube-system --profile=sysadmin --image=busybox -- rm /host/etc/cni/net.d/10-flannel.conflist"
expect_eq "E7 leftover: nothing written" "$(written)" ""
# 4. remove the file on every node (the control API stands in for the guide's privileged pod)
for n in $HOME_NODES; do sim POST "/nodes/$n/cni" '{"remove": ["10-flannel.conflist"]}' > /dev/null; done
expect_eq "E7 step 4: the Nodes are NotReady" "$(wait_nodes False 15)" "False "
expect_eq "E7 step 4: for the network only" \
  "$(kubectl get nodes -o json | jq -r '[.items[].status.conditions[] | select(.type == "Ready") | .message | contains("NetworkPluginNotReady")] | unique | join(" ")')" true
expect_eq "E7 step 4: with no CNI workload" "$(cni_workload)" ""
# 5. adopt: managed Cilium (the plan first, read only)
run e7-plan "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --plan -o json
expect_eq "E7 plan: no refusal" "$(out e7-plan | jq '[.results[] | select(.severity == "error")] | length')" 0
expect_contains "E7 plan: detected as no CNI" \
  "$(out e7-plan | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "CniDetected") | .message')" "cni: detected no CNI"
expect_eq "E7 plan: kube-proxy disabled on every node, class B" \
  "$(out e7-plan | jq -r '[.results[] | select(.field.path == "cluster.proxy.disabled") | .tags["ichor.maesh.dev/class"]] | "\(length) \(unique | join(","))"')" "6 B"
adopt e7
T1=$(date +%s.%N)
expect_eq "E7: adopted" "$(rc e7)" 0
expect_eq "E7: spec.cni.preset cilium" "$(k get taloscluster home -o jsonpath='{.spec.cni.preset}')" "cilium"
expect_contains "E7: the CLI waited for Ichor's Cilium" "$(err e7)" "every Node is Ready"
expect_eq "E7: Cilium runs (the stand-in's objects)" "$(cni_workload)" "daemonset.apps/cilium "
expect_eq "E7: every Node Ready" "$(wait_nodes True 5)" "True "
expect_eq "E7: Cilium's CNI file on every node" "$(confs)" "05-cilium.conflist "
expect_eq "E7: six machines Ready" "$(ready_machines)" 6
OUTAGE=$(echo "$T1 - $T0" | bc)
printf 'E7 outage in the lab (flannel deleted to every Node Ready): %.1f s\n' "$OUTAGE" | tee "$OUT/e7-outage.txt"

# --- Calico: refused; with --cni-unmanaged adopted unmanaged -------------------------------------
home_up calico
TC=$(talosconfig home)
run calico "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --plan -o json
expect_eq "calico: refused" "$(rc calico)" 1
expect_contains "calico: the refusal names it" \
  "$(out calico | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "CniNotCilium") | .message')" "CNI is calico"
expect_contains "calico: and the ADR's sentence" "$(out calico | jq -r '.results[].message')" "$NO_MIGRATION"
# The whole cluster with the bundle from a file (--secrets-bundle), not recovered.
BUNDLE=$(cluster_field home secretsBundle)
adopt calico-unmanaged --cni-unmanaged --secrets-bundle "$BUNDLE"
expect_eq "calico --cni-unmanaged: adopted" "$(rc calico-unmanaged)" 0
expect_eq "--secrets-bundle: the bundle Secret says it came from the file" \
  "$(k get secret home-secrets -o jsonpath='{.metadata.annotations.ichor\.maesh\.dev/bundle-source}')" "from $BUNDLE"
bundle_id() { /usr/bin/python3 -c 'import hashlib, sys, yaml; print(hashlib.sha256(str(yaml.safe_load(sys.stdin)["cluster"]["id"]).encode()).hexdigest())'; }
expect_eq "--secrets-bundle: the Secret holds the file's cluster" \
  "$(k get secret home-secrets -o jsonpath='{.data.bundle\.yaml}' | base64 -d | bundle_id)" "$(bundle_id < "$BUNDLE")"
expect_not_contains "--secrets-bundle: nothing recovered" "$(err calico-unmanaged)" "recovered from"
expect_eq "calico: spec.cni.preset unmanaged" "$(k get taloscluster home -o jsonpath='{.spec.cni.preset}')" "unmanaged"
expect_eq "calico: six machines Ready" "$(ready_machines)" 6

# --- no CNI: adopted as managed Cilium --------------------------------------------------------
# The lab-controller's first pass comes after the adoption wrote its TalosCluster, as it did on a
# loaded machine (a flake of this case): the controller is stopped, the adoption started, and a
# new controller started once the TalosCluster exists. Its first look at the nodes then sees the
# Cilium it installs and the CNI file it writes in the same pass; the Nodes must still become Ready.
home_up no-cni
TC=$(talosconfig home)
expect_eq "no-cni: every Node NotReady" "$(kubectl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | sort -u)" False
ctl=$(awk '$2 == "lab-controller" {print $1}' "$PRIV/pids" | tail -1)
kill "$ctl" 2>/dev/null
for _ in $(seq 50); do kill -0 "$ctl" 2>/dev/null || break; sleep 0.1; done
adopt nocni &
adopt_pid=$!
until=$((SECONDS + 60))
until k get taloscluster home > /dev/null 2>&1 || [ $SECONDS -ge $until ]; do sleep 0.2; done
setsid "$ICHOR_ROOT/build/lab/lab-controller" --kubeconfig "$PRIV/kubeconfig" --sim "$PRIV/sim.json" \
  < /dev/null >> "$PRIV/logs/lab-controller.log" 2>&1 &
echo "$! lab-controller" >> "$PRIV/pids"
wait "$adopt_pid"
expect_eq "no-cni: adopted" "$(rc nocni)" 0
if [ "$(rc nocni)" != 0 ]; then # what was not reached
  echo "  adopt: $(grep -E 'error|hint' "$OUT/nocni.err" | tail -2 | tr '\n' ' ')"
  echo "  Nodes: $(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}')"
  echo "  CNI files: $(for n in $HOME_NODES; do printf '%s=%s ' "$n" "$(sim GET "/nodes/$n" | jq -r '.cniConfs // [] | join(",")')"; done)"
  echo "  lab-controller: $(tail -n 5 "$PRIV/logs/lab-controller.log" | tr '\n' ' ')"
fi
expect_eq "no-cni: spec.cni.preset cilium" "$(k get taloscluster home -o jsonpath='{.spec.cni.preset}')" "cilium"
expect_contains "no-cni: the CLI waited for Ichor's Cilium" "$(err nocni)" "every Node is Ready"
expect_eq "no-cni: Cilium runs (the stand-in's objects)" "$(kubectl -n kube-system get ds cilium -o name)" "daemonset.apps/cilium"
expect_eq "no-cni: every Node Ready" "$(kubectl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | sort -u)" True
expect_eq "no-cni: six machines Ready" "$(ready_machines)" 6
finish
