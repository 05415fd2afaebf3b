#!/usr/bin/env bash
# Whole-cluster adoption (docs/adopt-guide.md) on the home scenario: --plan writes
# nothing and layers the drift; the tool killed between two writes and hold abort while all is
# held; the adoption (six machines Ready, no ApplyConfiguration and no Reset on any node); a
# rerun that exits 0 with nothing new; then every refusal variant: its text, its exit code, and
# nothing written.
. "$(dirname "$0")/home_lab.inc"
A=$ICHOR_BIN/kubectl-ichor-adopt
H=$ICHOR_BIN/kubectl-ichor-hold

home_up home
TC=$(talosconfig home)
cd "$PRIV" || exit 1 # backups and recovered bundles stay in the private state (they hold secrets)
written() { k get secret,taloscluster,talosmachine,talosconfigpatch -l ichor.maesh.dev/cluster=home -o name 2>/dev/null | sort | tr '\n' ' '; }
calls() { # calls METHOD-SUFFIX: how many calls of that method every home node logged
  local n total=0
  for n in $HOME_NODES; do
    total=$((total + $(sim GET "/nodes/$n/calls" | jq --arg m "$1" '[.[] | select(.method | endswith($m))] | length')))
  done
  echo "$total"
}
applies() { # real ApplyConfiguration calls (a dry run is not one)
  local n total=0
  for n in $HOME_NODES; do
    total=$((total + $(sim GET "/nodes/$n/calls" | jq '[.[] | select((.method | endswith("/ApplyConfiguration")) and (.request.dryRun != true))] | length')))
  done
  echo "$total"
}

# --- --plan: layered, nothing written --------------------------------------------------------
run plan "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --plan -o json
expect_eq "--plan: exit 0" "$(rc plan)" 0
patches() { out plan | jq -r '[.items[] | select(.kind == "TalosConfigPatch") | "\(.metadata.name)=\(.spec.layer)"] | join(" ")'; }
expect_eq "--plan: one patch per layer" "$(patches)" \
  "home-adopted=cluster home-controlplanes-adopted=role home-workers-adopted=role home-w-3-adopted=machine"
layer_text() { out plan | jq -r --arg n "$1" '.items[] | select(.metadata.name == $n) | .spec.patch'; }
expect_contains "the cluster patch: the sysctl" "$(layer_text home-adopted)" "vm.max_map_count"
expect_contains "the workers' patch: the module" "$(layer_text home-workers-adopted)" "nvme_tcp"
expect_contains "the control planes' patch: the SANs" "$(layer_text home-controlplanes-adopted)" "home-api.lab.example"
expect_contains "home-w-3's patch: the mirror" "$(layer_text home-w-3-adopted)" "mirror.home.lab.example"
expect_not_contains "home-w-3's patch: not the sysctl" "$(layer_text home-w-3-adopted)" "max_map_count"
expect_eq "--plan: six held machines, control planes first" \
  "$(out plan | jq -r '[.items[] | select(.kind == "TalosMachine") | .metadata.name] | join(" ")')" "$HOME_NODES"
expect_eq "--plan: the TalosCluster from the live cluster" \
  "$(out plan | jq -r '.items[] | select(.kind == "TalosCluster") | "\(.spec.controlPlane.count) \(.spec.cni.preset) \(.spec.endpoint) \(.spec.talosVersion) \(.spec.kubernetesVersion) \(.spec.discovery.addresses | length)"')" \
  "3 unmanaged https://127.0.0.51:6443 v1.13.9 v1.34.4 6"
expect_eq "--plan: the Secret carries no data" "$(out plan | jq '[.items[] | select(.kind == "Secret") | has("data") or has("stringData")] | any')" false
expect_eq "--plan: nothing written" "$(written)" ""
expect_eq "--plan: no write to any node" "$(applies) $(calls /Reset)" "0 0"

# --- the same plan through the single tools: hold apply writes the Secret from --secrets-bundle --
run planfile "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --recover-secrets --recover-to "$PRIV/bundle.yaml" --plan -o yaml
out planfile > "$PRIV/plan.yaml"
run nobundle "$H" apply -f "$PRIV/plan.yaml" --talosconfig "$TC" --yes
expect_eq "hold apply of a cluster plan without a bundle: refused" "$(rc nobundle)" 2
expect_contains "hold apply without a bundle: names --secrets-bundle" "$(err nobundle)" "--secrets-bundle FILE"
expect_eq "hold apply without a bundle: nothing written" "$(written)" ""
run happly "$H" apply -f "$PRIV/plan.yaml" --talosconfig "$TC" --secrets-bundle "$PRIV/bundle.yaml" --yes
expect_eq "hold apply of a cluster plan: exit 0" "$(rc happly)" 0
expect_eq "hold apply: the Secret holds the bundle" \
  "$(k get secret home-secrets -o jsonpath='{.data.bundle\.yaml}' | base64 -d | grep -c '^cluster:')" 1
run habort "$H" abort --cluster home
expect_eq "then hold abort: nothing of it left" "$(written)" ""

# --- killed between two writes, then hold abort: the apiserver holds nothing of it -----------
FP=$PRIV/fault-proxy
kill_run() { # kill_run N: adopt through the proxy, SIGKILLed after the apiserver's Nth write
  fault_proxy "$FP" --kill-after-writes "$1" --kill-pid-file "$FP/adopt.pid" || fail "kube-fault-proxy did not start"
  KUBECONFIG=$FP/kubeconfig "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --yes --timeout 60s \
    > "$OUT/killed-$1.out" 2> "$OUT/killed-$1.err" < /dev/null &
  local pid=$!
  echo "$pid" > "$FP/adopt.pid.tmp" && mv "$FP/adopt.pid.tmp" "$FP/adopt.pid"
  wait "$pid"
  echo $? > "$OUT/killed-$1.rc"
  fault_proxy_stop "$FP"
}
ICHOR_LAB_STATE=$PRIV kill_run 4
expect_eq "killed after four writes" "$(cat "$OUT/killed-4.rc")" 137
expect_eq "killed: the Secret, the cluster and two patches written" "$(written)" \
  "secret/home-secrets taloscluster.ichor.maesh.dev/home talosconfigpatch.ichor.maesh.dev/home-adopted talosconfigpatch.ichor.maesh.dev/home-controlplanes-adopted "
run abort "$H" abort --cluster home
expect_eq "hold abort of a held adoption: exit 0" "$(rc abort)" 0
expect_eq "hold abort: the apiserver holds nothing of it" "$(written)" ""

ICHOR_LAB_STATE=$PRIV kill_run 9
expect_eq "killed again after nine writes" "$(cat "$OUT/killed-9.rc")" 137
expect_eq "killed: three machines written" "$(k get talosmachine -o name | wc -l)" 3

# --- the rerun converges ------------------------------------------------------------------------
run adopt "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --yes --timeout 60s --parallel 2
expect_eq "rerun after the kill: exit 0" "$(rc adopt)" 0
expect_contains "rerun: the objects written before the kill are recognised" "$(err adopt)" "TalosCluster ichor-system/home already exists from this plan"
expect_eq "six machines, each once" "$(k get talosmachine -o name | sort | tr '\n' ' ')" \
  "talosmachine.ichor.maesh.dev/home-cp-1 talosmachine.ichor.maesh.dev/home-cp-2 talosmachine.ichor.maesh.dev/home-cp-3 talosmachine.ichor.maesh.dev/home-w-1 talosmachine.ichor.maesh.dev/home-w-2 talosmachine.ichor.maesh.dev/home-w-3 "
expect_eq "four patches, each once" "$(k get talosconfigpatch -o name | wc -l)" 4
ready=""
for n in $HOME_NODES; do ready+="$(condition "$n" Ready) "; done
expect_eq "six machines Ready" "$(echo "$ready" | tr ' ' '\n' | grep -c '^True/')" 6
expect_eq "no machine held" "$(k get talosmachine -o json | jq '[.items[] | select(.metadata.annotations["ichor.maesh.dev/hold-apply"])] | length')" 0
expect_eq "control planes released one at a time before the workers" \
  "$(err adopt | grep -o 'released the hold on [a-z0-9-]*' | awk '{print $5}' | tr '\n' ' ')" \
  "home-cp-1 home-cp-2 home-cp-3 home-w-1 home-w-2 home-w-3 "
expect_eq "workers in waves of two: w-1 and w-2 released before either is Ready" \
  "$(err adopt | grep -E 'released the hold on home-w|home-w-[0-9] is Ready' | sed -n 1,2p | awk '{print $1}' | tr '\n' ' ')" "released released "
expect_eq "the bundle Secret holds the recovered bundle" \
  "$(k get secret home-secrets -o jsonpath='{.data.bundle\.yaml}' | base64 -d | grep -c '^cluster:')" 1
expect_eq "the call log: no ApplyConfiguration, no Reset" "$(applies) $(calls /Reset)" "0 0"

run again "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --yes --timeout 60s
expect_eq "a rerun when all is done: exit 0" "$(rc again)" 0
expect_contains "a rerun: nothing held" "$(out again)" "no held machine of cluster home"
expect_eq "a rerun: nothing new" "$(k get talosmachine,talosconfigpatch -o name | wc -l)" 10
run abort2 "$H" abort --cluster home
expect_eq "hold abort once released: refused" "$(rc abort2)" 1
expect_contains "hold abort once released: says why" "$(err abort2)" "is past hold abort"
expect_eq "hold abort once released: nothing removed" "$(k get talosmachine -o name | wc -l)" 6

# a TalosCluster of that name that this plan did not write: refused, naming --add-machine
k annotate taloscluster home ichor.maesh.dev/plan-digest- > /dev/null
run exists "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --plan
expect_eq "an existing TalosCluster: exit 1" "$(rc exists)" 1
expect_contains "an existing TalosCluster: names --add-machine" "$(out exists)" "kubectl ichor adopt --cluster home --add-machine ADDRESS"
expect_contains "an existing TalosCluster: names hold abort" "$(out exists)" "kubectl ichor hold abort --cluster home"

# --- refusals: text, exit code, nothing written -----------------------------------------------
refused() { # refused SCENARIO CODE TEXT [ADDRS]
  home_up "$1"
  local tc
  tc=$(talosconfig home)
  run "$1" "$A" --talosconfig "$tc" --nodes "${4:-$HOME_ADDRS}" --cni-unmanaged --yes --timeout 30s -o json
  expect_eq "$1: exit 1" "$(rc "$1")" 1
  expect_eq "$1: refused as $2" "$(out "$1" | jq -r --arg c "$2" '[.results[] | select(.tags["ichor.maesh.dev/code"] == $c)] | length > 0')" true
  expect_contains "$1: the refusal says what" "$(out "$1" | jq -r '.results[].message')" "$3"
  expect_eq "$1: nothing written" "$(written)" ""
}
refused home-twoids ClusterIDs "the nodes belong to 2 clusters"
refused home-twoversions TalosVersions "more than one Talos version"
refused home-old TalosTooOld "adoption needs Talos v1.12 or later"
refused home-etcd-extra EtcdMembers "etcd has members that are not among the control planes given: home-cp-4"
refused home-etcd-down EtcdUnhealthy "127.0.0.53: its etcd member is not healthy"
refused home-noquorum NoQuorum "etcd has no quorum"
refused home-nonode NoKubernetesNode "the cluster's Kubernetes API has no Node for it"
refused home-notready NodeNotReady "is NotReady"
refused home-nocrds IchorAPINotServed "the Ichor API is not served"
refused home-carotation CARotation "a Talos CA rotation is under way"
refused home-classc-cp ControlPlaneBlocked "a cluster is not adopted without all its control planes"
refused home-members MembersMissing "home-w-4"
refused home NoControlPlane "no control plane among the nodes given" "127.0.0.54,127.0.0.55,127.0.0.56"
run nocni "$A" --talosconfig "$(talosconfig home)" --nodes "$HOME_ADDRS" --plan -o json
expect_eq "without --cni-unmanaged: refused (flannel)" "$(out nocni | jq -r '[.results[] | .tags["ichor.maesh.dev/code"]] | index("CniNotCilium") != null')" true

# a blocked worker stays out, the others go on: exit 5
home_up home-classc-worker
run partial "$A" --talosconfig "$(talosconfig home)" --nodes "$HOME_ADDRS" --cni-unmanaged --yes --timeout 60s -o json
expect_eq "a blocked worker: exit 5 (partial)" "$(rc partial)" 5
expect_eq "a blocked worker: the five others adopted" "$(k get talosmachine -o name | wc -l)" 5
expect_eq "a blocked worker: no TalosMachine for it" "$(k get talosmachine -o json | jq -r '[.items[] | select(.spec.address == "127.0.0.55")] | length')" 0
expect_contains "a blocked worker: named in an error result" \
  "$(out partial | jq -r '.results[] | select(.severity == "error") | .message')" "127.0.0.55: "
finish
