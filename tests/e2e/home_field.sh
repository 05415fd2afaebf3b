#!/usr/bin/env bash
# What the field knows (issue 22) on the home lab, one private lab (home-staged.yaml): a staged
# configuration leaves a worker out (exit 5) and refuses the cluster for a control plane; an
# install disk selector that matches no disk of the node refuses it, one that matches does not; a
# bond over links the node has passes, one over a link it lacks is a warning; hold release's
# zero-drift check reads the persistent configuration too. --plan runs but the last: quick.
. "$(dirname "$0")/home_lab.inc"
A=$ICHOR_BIN/kubectl-ichor-adopt
H=$ICHOR_BIN/kubectl-ichor-hold

home_up home-staged
TC=$(talosconfig home)
cd "$PRIV" || exit 1 # recovered bundles stay in the private state (they hold secrets)
written() { k get secret,taloscluster,talosmachine,talosconfigpatch -l ichor.maesh.dev/cluster=home -o name 2>/dev/null | sort | tr '\n' ' '; }
plan() { run "$1" "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --plan -o json; }
# codes RUN ADDRESS: the codes of the results that name the node, comma-separated
codes() { out "$1" | jq -r --arg a "$2" '[.results[] | select(.tags["ichor.maesh.dev/node"] == $a) | .tags["ichor.maesh.dev/code"]] | unique | join(",")'; }
# message RUN CODE: the first message of that code
message() { out "$1" | jq -r --arg c "$2" '[.results[] | select(.tags["ichor.maesh.dev/code"] == $c) | .message][0] // ""'; }
severity() { out "$1" | jq -r --arg c "$2" '[.results[] | select(.tags["ichor.maesh.dev/code"] == $c) | .severity][0] // ""'; }

# --- a staged worker: left out, the others planned --------------------------------------------
plan staged-w
expect_eq "a staged worker: exit 5 (partial)" "$(rc staged-w)" 5
expect_contains "a staged worker: refused as StagedConfig" "$(codes staged-w 127.0.0.55)" StagedConfig
expect_contains "a staged worker: names the path that differs" "$(message staged-w StagedConfig)" \
  "127.0.0.55: its persistent configuration differs from the one it runs (an apply-config --mode staged not yet rebooted into, or a --mode try window still open) at machine.sysctls.vm.nr_hugepages"
expect_contains "a staged worker: the two ways on" "$(message staged-w StagedConfig)" \
  "hint: talosctl -n 127.0.0.55 reboot; or talosctl -n 127.0.0.55 get machineconfig v1alpha1 -o jsonpath='{.spec}' > running.yaml && talosctl -n 127.0.0.55 apply-config --mode no-reboot -f running.yaml"
expect_eq "a staged worker: five machines planned" \
  "$(out staged-w | jq -r '[.items[] | select(.kind == "TalosMachine") | .metadata.name] | join(" ")')" "home-cp-1 home-cp-2 home-cp-3 home-w-1 home-w-3"

# --- a staged control plane: the whole cluster refused ---------------------------------------
sim POST /nodes/home-cp-2/staged 'cluster: {apiServer: {extraArgs: {audit-log-maxage: "30"}}}' > /dev/null
plan staged-cp
expect_eq "a staged control plane: exit 1" "$(rc staged-cp)" 1
expect_contains "a staged control plane: StagedConfig" "$(codes staged-cp 127.0.0.52)" StagedConfig
expect_contains "a staged control plane: the path" "$(message staged-cp StagedConfig)" "cluster.apiServer.extraArgs.audit-log-maxage"
expect_eq "a staged control plane: ControlPlaneBlocked" "$(out staged-cp | jq '[.results[] | select(.tags["ichor.maesh.dev/code"] == "ControlPlaneBlocked")] | length')" 1
expect_eq "a staged control plane: no object planned" "$(out staged-cp | jq '[.items[] | select(.kind != "Inspection")] | length')" 0
sim DELETE /nodes/home-cp-2/staged > /dev/null

# --- install disks: a selector that matches no disk, then one that matches ---------------------
sim POST /nodes/home-w-1/config 'machine: {install: {disk: {$patch: delete}, diskSelector: {model: "Samsung*"}}}' > /dev/null
plan nodisk
expect_contains "a selector that matches no disk: refused" "$(codes nodisk 127.0.0.54)" InstallDiskMissing
expect_contains "a selector that matches no disk: says so" "$(message nodisk InstallDiskMissing)" \
  '127.0.0.54: machine.install.diskSelector {"model":"Samsung*"} matches no disk of the node (its disks: /dev/nvme0n1, /dev/sda)'
sim POST /nodes/home-w-1/config 'machine: {install: {diskSelector: {model: "QEMU NVMe*"}}}' > /dev/null
plan nvme
expect_not_contains "a selector that matches the NVMe disk: not refused for its disk" "$(codes nvme 127.0.0.54)" InstallDiskMissing
sim POST /nodes/home-w-1/config 'machine: {install: {diskSelector: {$patch: delete}, disk: /dev/vdb}}' > /dev/null
plan vdb
expect_contains "an install disk the node lacks: refused" "$(message vdb InstallDiskMissing)" \
  "127.0.0.54: machine.install.disk /dev/vdb is not a disk of the node (its disks: /dev/nvme0n1, /dev/sda)"
sim POST /nodes/home-w-1/config 'machine: {install: {disk: /dev/sda}}' > /dev/null

# --- links: a bond over links the node has, then over one it lacks -----------------------------
sim POST /nodes/home-w-3/config 'machine: {network: {interfaces: [{interface: bond0, bond: {mode: active-backup, interfaces: [eth1, eth2]}, vlans: [{vlanId: 10, dhcp: true}]}]}}' > /dev/null
plan bond
expect_not_contains "a bond over eth1 and eth2: no UnknownLink" "$(codes bond 127.0.0.56)" UnknownLink
sim POST /nodes/home-w-3/config 'machine: {network: {interfaces: [{interface: bond1, bond: {interfaces: [eth9]}}]}}' > /dev/null
plan bond9
expect_eq "a bond over eth9: a warning" "$(severity bond9 UnknownLink)" warning
expect_contains "a bond over eth9: names it" "$(message bond9 UnknownLink)" \
  "127.0.0.56: machine.network.interfaces[1].bond.interfaces names link \"eth9\", which is neither a link of the node (its links: eth0, eth1, eth2, eth3, lo) nor one the configuration creates"
expect_eq "--plan: nothing written" "$(written)" ""
sim POST /nodes/home-w-3/config 'machine: {network: {$patch: delete}}' > /dev/null

# --- hold release: the zero-drift check reads the persistent configuration too ----------------
run planfile "$A" --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --recover-secrets --recover-to "$PRIV/bundle.yaml" --plan -o yaml
out planfile > "$PRIV/plan.yaml"
run happly "$H" apply -f "$PRIV/plan.yaml" --talosconfig "$TC" --secrets-bundle "$PRIV/bundle.yaml" --yes
expect_eq "hold apply of the five: exit 5 (the plan left home-w-2 out)" "$(rc happly)" 5
expect_eq "hold apply: five held machines" "$(k get talosmachine -o name | wc -l)" 5
sim POST /nodes/home-w-1/staged 'machine: {sysctls: {vm.nr_hugepages: "32"}}' > /dev/null
run release "$H" release --cluster home --talosconfig "$TC" --timeout 60s
expect_eq "hold release with a node staged since the plan: not all released" "$(rc release)" 5
expect_contains "hold release: the staged node's hold stays, for its persistent configuration" "$(out release)" \
  "home-w-1: the live zero-drift check failed; the hold stays: 127.0.0.54: its persistent configuration differs from the one it runs"
expect_contains "hold release: names the staged path" "$(out release)" "at machine.sysctls.vm.nr_hugepages"
expect_eq "hold release: home-w-1 still held" "$(k get tm home-w-1 -o jsonpath='{.metadata.annotations.ichor\.maesh\.dev/hold-apply}')" true
finish
