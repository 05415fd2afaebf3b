#!/usr/bin/env bash
# kubectl ichor adopt --add-machine and kubectl ichor hold on the lab (ADR 0128 E1, E2, E4).
# Leaves the lab as it found it: the machines it adds are removed again at the end.
. "$(dirname "$0")/lib.sh"
A=$ICHOR_BIN/kubectl-ichor-adopt
H=$ICHOR_BIN/kubectl-ichor-hold
TC=$(talosconfig prod)
W2=$(node_addr prod-w-2); CP2=$(node_addr prod-cp-2); B=$(node_addr lab-b-cp-1)
NS=ichor-system
objects() { kubectl get talosmachines,talosconfigpatches -n $NS -o name | sort | tr '\n' ' '; }
# The node check's dry runs apply nothing: only the other calls count.
calls_of() { sim GET "/nodes/$1/calls" | jq -r '[.[] | select(.method | test("ApplyConfiguration|Reset")) | select(.request.dryRun != true)] | length'; }
cleanup() {
  for m in prod-w-2 prod-cp-2; do
    kubectl annotate talosmachine -n $NS $m ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
    kubectl delete talosmachine -n $NS $m --ignore-not-found > /dev/null 2>&1
    kubectl annotate talosconfigpatch -n $NS $m-adopted ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
    kubectl delete talosconfigpatch -n $NS $m-adopted --ignore-not-found > /dev/null 2>&1
  done
  kubectl patch taloscluster -n $NS prod --type merge -p '{"spec":{"controlPlane":{"count":1}}}' > /dev/null
}
cleanup
sim DELETE /nodes/prod-w-2/calls > /dev/null
before=$(objects)

# E1 --plan: role worker, the install disk from its configuration, class A/B drift only.
run plan "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json
expect_eq "E1 plan: exit 0" "$(rc plan)" 0
expect_eq "E1 plan: a worker" "$(out plan | jq -r '.items[] | select(.kind == "TalosMachine") | .spec.role')" worker
expect_eq "E1 plan: install disk" "$(out plan | jq -r '.items[] | select(.kind == "TalosMachine") | .spec.install.disk')" "$(node_field prod-w-2 installDisk)"
expect_eq "E1 plan: held" "$(out plan | jq -r '.items[] | select(.kind == "TalosMachine") | .metadata.annotations["ichor.maesh.dev/hold-apply"] != null')" true
expect_eq "E1 plan: no class C" "$(out plan | jq -r '[.results[] | select(.tags["ichor.maesh.dev/class"] == "C")] | length')" 0
expect_eq "E1 plan: nothing written" "$(objects)" "$before"

# The wrapper and the pipe of single tools give the same bytes (timings aside: they are measured).
"$ICHOR_BIN/kubectl-ichor-inspect" "$W2" --talosconfig "$TC" 2>/dev/null \
  | "$ICHOR_BIN/kubectl-ichor-trustcheck" --cluster prod 2>/dev/null \
  | "$ICHOR_BIN/kubectl-ichor-drift" --cluster prod --add-machine --node-check --talosconfig "$TC" -o json > "$OUT/pipe.json" 2>/dev/null
norm() { jq -S 'del(.items[].status.timings)' "$1"; }
if diff <(norm "$OUT/plan.out") <(norm "$OUT/pipe.json") > "$OUT/same-bytes.diff"; then
  pass "E1: wrapper and pipe give the same plan"
else
  fail "E1: wrapper and pipe differ: $(head -c 600 "$OUT/same-bytes.diff")"
fi
run explain "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan --explain
expect_contains "explain: the pipeline" "$(out explain)" "| kubectl ichor drift --cluster prod --add-machine"
run stages "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan --keep-stages "$OUT/stages"
expect_eq "keep-stages: four documents" "$(ls "$OUT/stages" | tr '\n' ' ')" "1-inspect.yaml 2-trustcheck.yaml 3-plan.yaml 4-node-check.yaml "

# E1 for real: held, released, Ready; the CLI applied nothing to the node.
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {net.core.somaxconn: "65535"}}' > /dev/null
run e1 "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" --timeout 60s -o json
expect_eq "E1: exit 0" "$(rc e1)" 0
expect_eq "E1: Ready" "$(kubectl get talosmachine -n $NS prod-w-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" True
expect_eq "E1: hold released" "$(kubectl get talosmachine -n $NS prod-w-2 -o jsonpath='{.metadata.annotations.ichor\.maesh\.dev/hold-apply}')" ""
expect_eq "E1: class A captured" "$(kubectl get talosconfigpatch -n $NS prod-w-2-adopted -o jsonpath='{.spec.patch}' | grep -c somaxconn)" 1
expect_eq "E1: backup 0600" "$(stat -c %a "$OUT"/backups/*.yaml | sort -u)" 600
expect_eq "E1: backup folder 0700" "$(stat -c %a "$OUT/backups")" 700
BK=$(ls "$OUT"/backups/"$W2"-*.yaml | head -1)
expect_contains "E1: the terminal says where the backup is and that it holds secrets" "$(err e1)" \
  "saved the configuration of $W2 as the node returned it to $BK (0600); it holds the machine's secrets: keep it safe"
expect_eq "E1: no Reset or ApplyConfiguration" "$(calls_of prod-w-2)" 0
# The backup is the node's configuration byte for byte, secrets included: it restores. The node is
# changed, the backup applied back with Talos's own client (talosctl apply-config's call), and the
# node's configuration is the backup's bytes again.
live=$(mktemp) # the node's configuration holds secrets: outside $OUT, which the secrets scan reads
sim GET /nodes/prod-w-2/config > "$live"
expect_eq "E1: the backup is the node's configuration, byte for byte" "$(cmp -s "$BK" "$live" && echo same)" same
token=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["machine"]["token"])' "$live")
expect_eq "E1: the backup holds the machine token in the clear" "$(grep -qF "token: $token" "$BK" && echo yes)" yes
rm -f "$live"
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {vm.swappiness: "7"}}' > /dev/null
expect_eq "E1: the node changed since the backup" "$(sim GET /nodes/prod-w-2/config | cmp -s "$BK" - && echo same || echo changed)" changed
run restore "$ICHOR_ROOT/build/lab/talos-ref" --talosconfig "$TC" --apply-config "$BK" "$W2"
expect_eq "E1: the backup applies back" "$(rc restore)" 0
expect_eq "E1: restored, byte for byte" "$(sim GET /nodes/prod-w-2/config | cmp -s "$BK" - && echo same)" same
sim DELETE /nodes/prod-w-2/calls > /dev/null # the restore's ApplyConfiguration is the test's, not the CLI's

# A rerun: already a TalosMachine, skipped, exit 0.
run rerun "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json
expect_eq "rerun: exit 0" "$(rc rerun)" 0
expect_eq "rerun: skipped as the TalosMachine it already is" \
  "$(out rerun | jq -r --arg a "$W2" '[.results[] | select(.tags["ichor.maesh.dev/node"] == $a) | "\(.tags["ichor.maesh.dev/code"]): \(.message)"] | join("\n")')" \
  "AlreadyAdopted: $W2: UUID $(node_field prod-w-2 uuid) is already TalosMachine prod-w-2 (cluster prod); skipped"
expect_eq "rerun: nothing planned" "$(out rerun | jq '[.items[] | select(.kind == "TalosMachine" or .kind == "TalosConfigPatch")] | length')" 0

# E4: the TalosMachine deleted (with allow-delete), then added again: no reset, Ready again.
kubectl annotate talosmachine -n $NS prod-w-2 ichor.maesh.dev/allow-delete=true > /dev/null
kubectl delete talosmachine -n $NS prod-w-2 > /dev/null
run e4 "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" --timeout 60s
expect_eq "E4: exit 0" "$(rc e4)" 0
expect_eq "E4: Ready again" "$(kubectl get talosmachine -n $NS prod-w-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" True
expect_eq "E4: no reset" "$(calls_of prod-w-2)" 0

# Another cluster's node: refused, naming reclaim; nothing written.
before=$(objects)
run labb "$A" --cluster prod --add-machine "$B" --talosconfig "$TC" --yes
expect_eq "lab-b: exit 1" "$(rc labb)" 1
expect_contains "lab-b: names reclaim" "$(out labb)" "kubectl ichor reclaim $B"
expect_eq "lab-b: nothing written" "$(objects)" "$before"
# One finding per cause: inspect's unknown authority is folded into trustcheck's refusal, and the
# plan's own refusal is the one "nothing was written".
expect_eq "lab-b: one unknown-authority finding" "$(out labb | grep -c 'is not signed by the CA of')" 1
expect_eq "lab-b: it folds inspect's" "$(out labb | grep -c 'ichor.maesh.dev/folded: "inspect: UnknownAuthority"')" 1
expect_eq "lab-b: one nothing-was-written, on stdout" "$(grep -c 'nothing was written' "$OUT/labb.out")" 1
# stdout is a file, so the refusal also reaches the person, once, on stderr
expect_eq "lab-b: and once on stderr" "$(grep -c 'nothing was written' "$OUT/labb.err")" 1

# E2: a control plane while spec.controlPlane.count is 1: refused before any write; then adopted.
run e2 "$A" --cluster prod --add-machine "$CP2" --talosconfig "$TC" --yes
expect_eq "E2: exit 1" "$(rc e2)" 1
expect_contains "E2: raise the count first" "$(out e2 | jq -r '[.results[].message] | join("\n")' 2>/dev/null || out e2)" "controlPlane.count"
expect_eq "E2: nothing written" "$(objects)" "$before"
kubectl patch taloscluster -n $NS prod --type merge -p '{"spec":{"controlPlane":{"count":2}}}' > /dev/null
run e2b "$A" --cluster prod --add-machine "$CP2" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" --timeout 60s
expect_eq "E2 after raising the count: exit 0" "$(rc e2b)" 0
expect_eq "E2: Ready" "$(kubectl get talosmachine -n $NS prod-cp-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" True

# hold apply killed between its writes, then run again: converges, no duplicates. The kill comes
# from the test side: hold talks to the apiserver through kube-fault-proxy, which SIGKILLs it once
# the apiserver has committed its first write, before hold gets the answer.
cleanup
"$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan > "$OUT/kill-plan.yaml" 2>/dev/null
FP=$ICHOR_LAB_STATE/fault-proxy/$test_name
fault_proxy "$FP" --kill-after-writes 1 --kill-pid-file "$FP/hold.pid" || fail "kube-fault-proxy did not start"
KUBECONFIG=$FP/kubeconfig "$H" apply -f "$OUT/kill-plan.yaml" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" \
  > "$OUT/killed.out" 2> "$OUT/killed.err" < /dev/null &
hold_pid=$!
echo "$hold_pid" > "$FP/hold.pid.tmp" && mv "$FP/hold.pid.tmp" "$FP/hold.pid" # the proxy waits for it
wait "$hold_pid"
killed=$?
fault_proxy_stop "$FP"
expect_eq "killed after one write" "$killed" 137
expect_eq "killed by the proxy once the apiserver committed the TalosConfigPatch (written before its machine)" \
  "$(fault_proxy_log "$FP" '[.[] | select(.write > 0) | "\(.method) \(.path | split("/") | last) \(.upstream) \(.fault)"] | join(", ")')" \
  "POST talosconfigpatches 201 kill pid=$hold_pid"
expect_eq "killed: the patch was written, not the machine" "$(objects | grep -c 'talosmachine\..*prod-w-2')" 0
run again "$H" apply -f "$OUT/kill-plan.yaml" --talosconfig "$TC" --yes --backup-dir "$OUT/backups"
expect_eq "rerun after the kill: exit 0" "$(rc again)" 0
expect_contains "rerun after the kill: the patch is recognised" "$(err again)" "already exists from this plan"
expect_eq "rerun after the kill: both objects, once" "$(objects | grep -o 'prod-w-2[a-z-]*' | sort | tr '\n' ' ')" "prod-w-2 prod-w-2-adopted "
run release "$H" release --cluster prod --talosconfig "$TC" --timeout 60s
expect_eq "hold release: exit 0" "$(rc release)" 0
# hold abort removes only held machines: hold a fresh plan, then abort it.
cleanup
run held "$H" apply -f "$OUT/kill-plan.yaml" --talosconfig "$TC" --yes --backup-dir "$OUT/backups"
expect_eq "hold abort: the plan was held first" "$(rc held) $(objects | grep -o 'prod-w-2[a-z-]*' | sort | tr '\n' ' ')" "0 prod-w-2 prod-w-2-adopted "
run abort "$H" abort --cluster prod
expect_eq "hold abort: exit 0" "$(rc abort)" 0
expect_eq "hold abort: removed" "$(objects | grep -c 'prod-w-2')" 0
expect_eq "hold abort: approved machines stay" "$(objects | grep -c 'prod-w-1')" 1

# No terminal and no --yes: refused, nothing written.
run noconsent "$H" apply -f "$OUT/kill-plan.yaml"
expect_eq "no consent: exit 1" "$(rc noconsent)" 1
expect_contains "no consent: says so" "$(err noconsent)" "consent needed"

# A saved plan is applied only while the world is as it was: the node's configuration and the
# TalosCluster changed since the plan, so hold apply refuses, names both, and writes nothing.
cleanup
"$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json > "$OUT/stale-plan.json" 2>/dev/null
expect_eq "stale: the plan records the node's configuration digest" \
  "$(jq -r '.items[] | select(.kind == "PlanBasis") | .spec.nodes[0].configDigest' "$OUT/stale-plan.json" | cut -c1-7)" "sha256:"
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {vm.swappiness: "9"}}' > /dev/null
rv=$(kubectl get taloscluster -n $NS prod -o jsonpath='{.metadata.resourceVersion}')
kubectl annotate taloscluster -n $NS prod e2e.ichor.maesh.dev/touched=yes --overwrite > /dev/null
rv2=$(kubectl get taloscluster -n $NS prod -o jsonpath='{.metadata.resourceVersion}')
before=$(objects)
run stale "$H" apply -f "$OUT/stale-plan.json" --talosconfig "$TC" --yes --backup-dir "$OUT/stale-backups"
expect_eq "stale: exit 1" "$(rc stale)" 1
expect_contains "stale: refused, the TalosCluster named" "$(err stale)" \
  "kubectl ichor hold: error: the plan is stale: TalosCluster $NS/prod changed (resourceVersion $rv, now $rv2); the configuration of $W2 changed (sha256:"
expect_contains "stale: nothing was written" "$(err stale)" "); nothing was written"
expect_eq "stale: no object written" "$(objects)" "$before"
expect_eq "stale: no backup written" "$(ls "$OUT/stale-backups" 2> /dev/null | wc -l)" 0
kubectl annotate taloscluster -n $NS prod e2e.ichor.maesh.dev/touched- > /dev/null
"$ICHOR_ROOT/build/lab/talos-ref" --talosconfig "$TC" --apply-config "$BK" "$W2" > /dev/null # as before
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {net.core.somaxconn: {$patch: delete}}}' > /dev/null
cleanup
finish
