#!/usr/bin/env bash
# The clusters people run (issue 26, "What it must show") on the realistic scenarios
# (tests/lab/scenarios/real-*.yaml, docs/lab.md "The realistic scenarios"): for each, the whole
# cluster's adopt --plan blocks no machine, writes nothing and asks no node to change anything but
# the plan's class B; the adoption writes the layered patches, releases every machine after its
# zero-drift check, each Ready, with no ApplyConfiguration and no Reset on any node; a rerun exits
# 0 with nothing new. On larch the node that joined later is then adopted with --add-machine, its
# own differences in its machine patch. The plans of birch, cedar and larch are golden
# (tests/golden/plans/, normalised by normalize.jq there). The credentials scenario is
# tests/e2e/real_credentials.sh.
. "$(dirname "$0")/home_lab.inc"
A=$ICHOR_BIN/kubectl-ichor-adopt

# The nodes of CLUSTER in the lab, less SKIP (names or addresses, comma-separated).
nodes_of() { jq -r --arg c "$1" --arg s ",${2:-}," '[.nodes[] | .name as $n | select(.cluster == $c and ($s | contains(",\($n),") | not)) | .name] | join(" ")' "$LAB"; }
addrs_of() { jq -r --arg c "$1" --arg s ",${2:-}," '[.nodes[] | .name as $n | select(.cluster == $c and ($s | contains(",\($n),") | not)) | .address] | join(",")' "$LAB"; }
written() { k get secret,taloscluster,talosmachine,talosconfigpatch -l "ichor.maesh.dev/cluster=$1" -o name 2> /dev/null | sort | tr '\n' ' '; }
calls() { # calls CLUSTER JQ-FILTER: how many calls of every node of CLUSTER the filter keeps
  local n total=0
  for n in $(nodes_of "$1"); do
    total=$((total + $(sim GET "/nodes/$n/calls" | jq "[.[] | select($2)] | length")))
  done
  echo "$total"
}
writes() { # real ApplyConfiguration calls (a dry run is not one) and Resets
  echo "$(calls "$1" '(.method | endswith("/ApplyConfiguration")) and (.request.dryRun != true)') $(calls "$1" '.method | endswith("/Reset")')"
}
blocking() { # what blocks, one line per code and path, with its nodes (the lead's list)
  out "$1" | jq -r '[.results[] | select(.severity == "error") | {c: .tags["ichor.maesh.dev/code"], p: (.field.path // "-"), n: (.tags["ichor.maesh.dev/node"] // "-")}] | group_by([.c, .p]) | .[] | "\(.[0].c) \(.[0].p) [\([.[].n] | unique | join(","))]"'
}
machines() { out "$1" | jq -r '[.items[] | select(.kind == "TalosMachine") | .metadata.name] | sort | join(" ")'; }
patches() { out "$1" | jq -r '[.items[] | select(.kind == "TalosConfigPatch") | "\(.metadata.name)=\(.spec.layer)"] | sort | join(" ")'; }
patch_text() { out "$1" | jq -r --arg n "$2" '.items[] | select(.kind == "TalosConfigPatch" and .metadata.name == $n) | .spec.patch'; }
node_checks() { # one line per NodeCheck* result: node code
  out "$1" | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] | startswith("NodeCheck") or . == "NodeRejected") | "\(.tags["ichor.maesh.dev/node"]) \(.tags["ichor.maesh.dev/code"])"' | sort
}
docs_of() { # docs_of KIND: the documents of that kind in the YAML stream on stdin
  awk -v k="kind: $1" '/^---/ { if (hit) printf "%s", buf; buf = ""; hit = 0; next }
    { buf = buf $0 "\n"; if ($0 == k) hit = 1 } END { if (hit) printf "%s", buf }'
}
sorted() { tr ' ' '\n' | grep . | sort | tr '\n' ' ' | sed 's/ $//'; }

# adopt_real SCENARIO CLUSTER SKIP [ADOPT FLAGS...]: the whole cluster (less SKIP) planned,
# checked and adopted; leaves the lab up with the cluster adopted (TC set).
adopt_real() {
  local s=$1 c=$2 skip=$3 n names addrs
  shift 3
  home_up "$s"
  TC=$(talosconfig "$c")
  names=$(nodes_of "$c" "$skip")
  addrs=$(addrs_of "$c" "$skip")
  expect_eq "$s: the lab has the cluster's nodes" "$([ -n "$names" ] && [ -n "$addrs" ] && echo yes)" yes

  run "$s-plan" "$A" --talosconfig "$TC" --nodes "$addrs" "$@" --plan -o json
  expect_eq "$s: --plan exit 0" "$(rc "$s-plan")" 0
  expect_eq "$s: --plan blocks nothing" "$(blocking "$s-plan")" ""
  expect_eq "$s: --plan holds a TalosMachine for every node" "$(machines "$s-plan")" "$(echo "$names" | sorted)"
  expect_eq "$s: no class C result" \
    "$(out "$s-plan" | jq -r '[.results[] | select(.tags["ichor.maesh.dev/class"] == "C") | .tags["ichor.maesh.dev/code"]] | unique | join(" ")')" ""
  expect_contains "$s: a cluster-layer patch" "$(patches "$s-plan")" "$c-adopted=cluster"
  # The node check: every node answered, and what it would change is the plan's class B exactly.
  local want=""
  for n in $(echo "$addrs" | tr ',' ' '); do want+="$n NodeCheck"$'\n'; done
  expect_eq "$s: every node accepts its configuration, changing only the class B list" \
    "$(node_checks "$s-plan")" "$(printf '%s' "$want" | sort)"
  expect_eq "$s: --plan writes nothing" "$(written "$c")" ""
  expect_eq "$s: --plan: no write to any node" "$(writes "$c")" "0 0"

  run "$s-adopt" "$A" --talosconfig "$TC" --nodes "$addrs" "$@" --yes --timeout 90s --parallel 3 -o json
  expect_eq "$s: the adoption: exit 0" "$(rc "$s-adopt")" 0
  expect_eq "$s: the plan's patches written" \
    "$(k get talosconfigpatch -l "ichor.maesh.dev/cluster=$c" -o json | jq -r '[.items[] | "\(.metadata.name)=\(.spec.layer)"] | sort | join(" ")')" "$(patches "$s-plan")"
  local released="" ready=""
  for n in $names; do
    grep -q "released the hold on $n\b" "$OUT/$s-adopt.err" && released+="$n "
    [ "$(condition "$n" Ready | cut -d/ -f1)" = True ] && ready+="$n "
  done
  expect_eq "$s: every machine released after its zero-drift check" "$(echo "$released" | sorted)" "$(echo "$names" | sorted)"
  expect_eq "$s: every machine Ready" "$(echo "$ready" | sorted)" "$(echo "$names" | sorted)"
  expect_eq "$s: no machine held" \
    "$(k get talosmachine -l "ichor.maesh.dev/cluster=$c" -o json | jq '[.items[] | select(.metadata.annotations["ichor.maesh.dev/hold-apply"])] | length')" 0
  expect_eq "$s: no ApplyConfiguration and no Reset on any node" "$(writes "$c")" "0 0"

  local before
  before=$(written "$c")
  run "$s-again" "$A" --talosconfig "$TC" --nodes "$addrs" "$@" --yes --timeout 60s
  expect_eq "$s: a rerun: exit 0" "$(rc "$s-again")" 0
  expect_contains "$s: a rerun: nothing held" "$(out "$s-again")" "no held machine of cluster $c"
  expect_eq "$s: a rerun: nothing new" "$(written "$c")" "$before"
}

# --- birch: Talos 1.12, the v1alpha1 forms, flannel ----------------------------------------------
adopt_real real-legacy birch "" --cni-unmanaged
expect_contains "birch: the VIP is each control plane's own (machine layer)" "$(patch_text real-legacy-plan birch-cp-2-adopted)" "10.26.1.10"
expect_contains "birch: the etcd metrics listener in the control planes' patch" "$(patch_text real-legacy-plan birch-controlplanes-adopted)" "listen-metrics-urls"
expect_contains "birch: the time servers in the cluster patch" "$(patch_text real-legacy-plan birch-adopted)" "0.de.pool.ntp.org"
# the mirror every node holds in v1alpha1 stays there (docs/drift-rules.md, "Layout moves"): not
# the TalosCluster's spec.registries, whose render writes RegistryMirrorConfig documents, but
# captured in the cluster patch where the nodes hold it
expect_eq "birch: the TalosCluster takes no registries from v1alpha1 mirrors" \
  "$(out real-legacy-plan | jq -c '[.items[] | select(.kind == "TalosCluster") | .spec.registries]')" "[null]"
expect_contains "birch: the mirror in the cluster patch" "$(patch_text real-legacy-plan birch-adopted)" "mirror.lab.example:5000"
expect_eq "birch: in v1alpha1, no RegistryMirrorConfig in any patch" \
  "$(for p in birch-adopted birch-controlplanes-adopted birch-workers-adopted; do patch_text real-legacy-plan $p; echo ---; done | docs_of RegistryMirrorConfig)" ""
expect_golden_plan "real-legacy: the plan is the golden one" real-legacy-plan real-legacy.json

# --- cedar: Talos 1.13, the network and volume documents, Cilium by Helm taken over ------------
adopt_real real-netdocs cedar ""
expect_contains "cedar: the bond in the cluster patch" "$(patch_text real-netdocs-plan cedar-adopted)" "BondConfig"
expect_contains "cedar: the VIP in the control planes' patch" "$(patch_text real-netdocs-plan cedar-controlplanes-adopted)" "Layer2VIPConfig"
expect_contains "cedar: the raw volume is cedar-w-2's own" "$(patch_text real-netdocs-plan cedar-w-2-adopted)" "RawVolumeConfig"
expect_not_contains "cedar: cedar-w-2's patch holds none of the cluster layer" "$(patch_text real-netdocs-plan cedar-w-2-adopted)" "BondConfig"
# host DNS in v1alpha1 beside a ResolverConfig document: captured in v1alpha1, where the render
# holds it (into ResolverConfig, every node rejected it: "already set in v1alpha1 config")
expect_contains "cedar: host DNS's member names in the cluster patch" "$(patch_text real-netdocs-plan cedar-adopted)" "resolveMemberNames: true"
expect_eq "cedar: no ResolverConfig of the patches holds host DNS" \
  "$(for p in cedar-adopted cedar-controlplanes-adopted cedar-workers-adopted; do patch_text real-netdocs-plan $p; echo ---; done | docs_of ResolverConfig | grep -c hostDNS)" 0
# a DHCPv4Config that is only its name is a setting (DHCP on eth3), not an empty value
expect_eq "cedar: the control planes' DHCPv4Config that is only its name, kept" \
  "$(patch_text real-netdocs-plan cedar-controlplanes-adopted | docs_of DHCPv4Config | grep '^name:')" "name: eth3"
expect_golden_plan "real-netdocs: the plan is the golden one" real-netdocs-plan real-netdocs.json

# --- maple: a hand-written base, flannel -----------------------------------------------------------
adopt_real real-handwritten maple "" --cni-unmanaged

# --- larch: Talos 1.14's documents; larch-w-2 joined later and comes in with --add-machine ------
adopt_real real-docs14 larch larch-w-2 --cni-unmanaged
expect_contains "larch: the kubelet's documents in the cluster patch" "$(patch_text real-docs14-plan larch-adopted)" "KubeletConfig"
# no PodSecurity admission on 1.14: the render's KubeAdmissionControlConfig deleted as that
# document (a delete of v1alpha1's list, which the 1.14 render does not have, never applied)
expect_eq "larch: the control planes' patch deletes PodSecurity's admission document" \
  "$(patch_text real-docs14-plan larch-controlplanes-adopted | docs_of KubeAdmissionControlConfig | grep -E '^(name|[$]patch):' | tr '\n' ' ')" 'name: PodSecurity $patch: delete '
# the etcd EncryptionConfiguration of the owner's form (an identity provider after the key): in
# the control planes' patch as the node has it, the render's form deleted first, its key carried
# in the patch's credentials Secret, never in the text
enc=$(patch_text real-docs14-plan larch-controlplanes-adopted | docs_of KubeEtcdEncryptionConfig)
expect_contains "larch: the control planes' patch holds the owner's encryption form" "$enc" "identity: {}"
expect_contains "larch: the render's encryption form is deleted first" "$enc" 'config:
  $patch: delete'
expect_eq "larch: the encryption key is a credential of the control planes' patch" \
  "$(out real-docs14-plan | jq -r '.items[] | select(.kind == "TalosConfigPatch" and .metadata.name == "larch-controlplanes-adopted") | [.spec.secretValues[] | select(.kind == "KubeEtcdEncryptionConfig") | .path | join(".")] | join(" ")')" \
  "config.resources.0.providers.0.secretbox.keys.0.secret"
expect_eq "larch: the credentials Secret of the control planes' patch is planned" \
  "$(out real-docs14-plan | jq -r '[.items[] | select(.kind == "Secret" and .metadata.name == "larch-controlplanes-adopted-credentials")] | length')" 1
# the control planes hold the bundle's Kubernetes CA in v1alpha1's cluster.ca, the render at 1.14
# in KubeAPIServerCAConfig: a layout move of Ichor's own value, listed for consent (class B) and
# never captured, so the node check names it and no NodeCheckMismatch is left
expect_eq "larch: the CA's layout move is class B on each control plane" \
  "$(out real-docs14-plan | jq -r '[.results[] | select(.tags["ichor.maesh.dev/code"] == "Layout") | "\(.field.path)=\(.tags["ichor.maesh.dev/class"])"] | unique | join(" ")')" "cluster.ca=B"
expect_eq "larch: three control planes list it" \
  "$(out real-docs14-plan | jq -r '[.results[] | select(.tags["ichor.maesh.dev/code"] == "Layout") | .tags["ichor.maesh.dev/node"]] | unique | length')" 3
expect_not_contains "larch: no patch carries the CA" \
  "$(out real-docs14-plan | jq -r '.items[] | select(.kind == "TalosConfigPatch") | .spec.patch')" "KubeAPIServerCAConfig"
expect_golden_plan "real-docs14: the plan is the golden one" real-docs14-plan real-docs14.json
W2=$(node_addr larch-w-2)
run add-plan "$A" --cluster larch --add-machine "$W2" --talosconfig "$TC" --plan -o json
expect_eq "larch-w-2 --add-machine --plan: exit 0" "$(rc add-plan)" 0
expect_eq "larch-w-2 --add-machine --plan: blocks nothing" "$(blocking add-plan)" ""
expect_eq "larch-w-2 --add-machine --plan: its machine" "$(machines add-plan)" larch-w-2
# Its class B is discovery (the node has it off): the node would add the DiscoveryServiceConfig
# document, which the check names by the subtree it holds, cluster.discovery, and matches to the
# plan's class B: no mismatch.
expect_eq "larch-w-2: its node accepts, changing only the class B list" "$(node_checks add-plan)" "$W2 NodeCheck"
expect_eq "larch-w-2: the node's changes are the discovery document alone" \
  "$(out add-plan | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "NodeCheck") | .message | sub(".*it would change "; "")')" \
  "cluster.discovery"
expect_contains "larch-w-2: the plan's class B is discovery" \
  "$(out add-plan | jq -r '[.results[] | select(.tags["ichor.maesh.dev/class"] == "B") | .field.path] | unique | join(" ")')" "cluster.discovery"
own=$(patch_text add-plan larch-w-2-adopted)
expect_contains "larch-w-2's machine patch: its GPU taint" "$own" "nvidia.com/gpu"
expect_contains "larch-w-2's machine patch: its kernel module" "$own" "NVreg_OpenRmEnableUnsupportedGpus"
expect_not_contains "larch-w-2's machine patch: not the cluster layer's sysctl" "$own" "somaxconn"
run add "$A" --cluster larch --add-machine "$W2" --talosconfig "$TC" --yes --timeout 60s
expect_eq "larch-w-2 --add-machine: exit 0" "$(rc add)" 0
expect_eq "larch-w-2: Ready" "$(condition larch-w-2 Ready | cut -d/ -f1)" True
expect_eq "larch-w-2: its patch written" "$(k get talosconfigpatch larch-w-2-adopted -o jsonpath='{.spec.layer}')" machine
expect_eq "larch: still no ApplyConfiguration and no Reset on any node" "$(writes larch)" "0 0"
finish
