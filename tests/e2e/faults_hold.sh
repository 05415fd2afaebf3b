#!/usr/bin/env bash
# The fault matrix for the writer (kubectl ichor hold): each Kubernetes API fault
# injected from the test side by kube-fault-proxy (docs/lab.md) during hold apply of one saved
# plan (a TalosMachine and its TalosConfigPatch), then a rerun without the fault. Every case:
# nothing lost (no object half-written, nobody else's object touched), and the rerun converges
# to exactly the plan's two objects. Then hold release: the zero-drift check failing because drift
# appeared after the plan (the hold stays, the machine named), and a control plane and a worker
# released in one run (the API log shows the control plane first). Last, adopt --add-machine --yes
# killed after its later writes, and its rerun.
. "$(dirname "$0")/lib.sh"
A=$ICHOR_BIN/kubectl-ichor-adopt
H=$ICHOR_BIN/kubectl-ichor-hold
TC=$(talosconfig prod)
W2=$(node_addr prod-w-2); CP2=$(node_addr prod-cp-2)
NS=ichor-system
FP=$ICHOR_LAB_STATE/fault-proxy/$test_name
mine() { kubectl get talosmachines,talosconfigpatches -n $NS -o name | grep -E 'prod-(w|cp)-2' | sort | tr '\n' ' '; }
digest_of() { kubectl get "$1" -n $NS "$2" -o jsonpath='{.metadata.annotations.ichor\.maesh\.dev/plan-digest}'; }
cleanup() {
  for m in prod-w-2 prod-cp-2; do
    for o in talosmachine/$m talosconfigpatch/$m-adopted; do
      kubectl annotate -n $NS "$o" ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
      kubectl delete -n $NS "$o" --ignore-not-found --wait=true > /dev/null 2>&1
    done
  done
  kubectl patch taloscluster -n $NS prod --type merge -p '{"spec":{"controlPlane":{"count":1}}}' > /dev/null
}
restore_nodes() { # the scenario's configurations again
  sim POST /nodes/prod-w-2/config 'machine: {sysctls: {vm.overcommit_memory: {$patch: delete}, net.core.somaxconn: {$patch: delete}}}' > /dev/null 2>&1
}
trap 'fault_proxy_stop "$FP"; restore_nodes; cleanup' EXIT
cleanup
# A class A setting on the node, so that the plan has a patch to write as well as the machine.
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {net.core.somaxconn: "65535"}}' > /dev/null
run plan "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json
expect_eq "the plan: exit 0" "$(rc plan)" 0
PLAN=$OUT/plan.out
expect_eq "the plan: a machine's patch, then the machine" "$(jq -r '[.items[] | select(.apiVersion == "ichor.maesh.dev/v1alpha1") | .kind] | join(",")' "$PLAN")" "TalosConfigPatch,TalosMachine"
WANT="talosconfigpatch.ichor.maesh.dev/prod-w-2-adopted talosmachine.ichor.maesh.dev/prod-w-2 "

# apply_through NAME FLAGS...: hold apply of the plan through a proxy with FLAGS.
apply_through() {
  local name=$1; shift
  fault_proxy "$FP" "$@" || fail "$name: kube-fault-proxy did not start"
  run "$name" env KUBECONFIG="$FP/kubeconfig" "$H" apply -f "$PLAN" --talosconfig "$TC" --yes --backup-dir "$OUT/backups"
  fault_proxy_stop "$FP"
}
# converges NAME: the rerun, straight to the apiserver, ends with exactly the plan's objects.
converges() {
  run "$1-rerun" "$H" apply -f "$PLAN" --talosconfig "$TC" --yes --backup-dir "$OUT/backups"
  expect_eq "$1: the rerun exits 0" "$(rc "$1-rerun")" 0
  expect_eq "$1: the rerun converges to the plan's objects" "$(mine)" "$WANT"
  expect_eq "$1: both from this plan" "$(digest_of talosmachine prod-w-2)" "$(digest_of talosconfigpatch prod-w-2-adopted)"
  cleanup
}

# A node that hangs on one call (the fresh read of its configuration): bounded by the call
# timeout, nothing written, not even a backup; the rerun converges.
sim POST /nodes/prod-w-2/faults '{"method":"/cosi.resource.State/Get","kind":"hang"}' > /dev/null
t0=$SECONDS
run hang "$H" apply -f "$PLAN" --talosconfig "$TC" --call-timeout 3s --yes --backup-dir "$OUT/hang-backups"
took=$((SECONDS - t0))
sim DELETE /nodes/prod-w-2/faults > /dev/null
expect_eq "node hangs: exit 4" "$(rc hang)" 4
expect_contains "node hangs: names the node and the read" "$(err hang)" \
  "kubectl ichor hold: error: reading the configuration of $W2 before the first write (nothing was written): $W2 did not answer within 3s"
[ "$took" -le 10 ] && pass "node hangs: ended in ${took}s" || fail "node hangs: took ${took}s"
expect_eq "node hangs: nothing written" "$(mine)" ""
expect_eq "node hangs: no backup" "$(ls "$OUT/hang-backups" 2> /dev/null | wc -l)" 0
converges hang

# 429 with Retry-After, then 503, on the first create: retried after the wait, created once.
# Retry-After is 2 s, not the client's default wait of 1 s, so that the gap shows it was honoured.
apply_through busy --fail 'POST:/talosmachines$:429:1' --fail 'POST:/talosconfigpatches$:503:1' --retry-after 2
expect_eq "429/503: exit 0" "$(rc busy)" 0
expect_eq "429/503: the objects, once" "$(mine)" "$WANT"
expect_eq "429/503: each create retried once" \
  "$(fault_proxy_log "$FP" '[.[] | select(.method == "POST") | "\(.path | split("/") | last) \(.status)"] | join(", ")')" \
  "talosconfigpatches 503, talosconfigpatches 201, talosmachines 429, talosmachines 201"
# The seconds from each refused create to its retry (the log's times are RFC 3339 with nanoseconds).
expect_eq "429/503: each retry waited the Retry-After of 2 s" \
  "$(fault_proxy_log "$FP" 'def secs: (.time[0:19] + "Z" | fromdate) + ("0" + (.time[19:] | rtrimstr("Z")) | tonumber);
     [.[] | select(.method == "POST")] | [range(0; length; 2) as $i | (.[$i + 1] | secs) - (.[$i] | secs)]
     | map(if . >= 2 and . < 4 then "waited" else "after \(.)s" end) | join(",")')" \
  "waited,waited"
cleanup

# 403 on the machine: its patch (written first) is there, the error names the machine; nothing else
# tried.
apply_through forbidden --fail 'POST:/talosmachines$:403'
expect_eq "403: exit 3" "$(rc forbidden)" 3
expect_contains "403: names what was refused" "$(err forbidden)" "creating TalosMachine $NS/prod-w-2:"
expect_eq "403: the patch only" "$(mine)" "talosconfigpatch.ichor.maesh.dev/prod-w-2-adopted "
converges forbidden

# 409 on a create: someone else made the patch first. It is left as it is, named; the rest goes on.
kubectl create -n $NS -f - > /dev/null <<YAML
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosConfigPatch
metadata: {name: prod-w-2-adopted, labels: {ichor.maesh.dev/cluster: prod}}
spec: {cluster: prod, layer: machine, machine: prod-w-2, order: 0, patch: "machine: {}"}
YAML
run conflict "$H" apply -f "$PLAN" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" -o json
expect_eq "409: exit 5 (partial)" "$(rc conflict)" 5
expect_eq "409: named" "$(out conflict | jq -r '.results[] | select(.tags["ichor.maesh.dev/code"] == "Conflict") | .message')" \
  "TalosConfigPatch $NS/prod-w-2-adopted already exists and was not written by this plan; it was left as it is"
expect_eq "409: the other's patch untouched" "$(kubectl get talosconfigpatch -n $NS prod-w-2-adopted -o jsonpath='{.spec.patch}')" "machine: {}"
expect_eq "409: the machine written" "$(mine)" "$WANT"
kubectl annotate -n $NS talosconfigpatch/prod-w-2-adopted ichor.maesh.dev/allow-delete=true > /dev/null
kubectl delete -n $NS talosconfigpatch/prod-w-2-adopted --wait=true > /dev/null
converges conflict

# The apiserver gone between two writes: the first committed, the tool stops Unreachable.
apply_through gone --gone-after-writes 1
expect_eq "gone: exit 4" "$(rc gone)" 4
expect_contains "gone: names the API" "$(err gone)" "cannot reach the Kubernetes API at"
expect_eq "gone: the first write only" "$(mine)" "talosconfigpatch.ichor.maesh.dev/prod-w-2-adopted "
converges gone

# The tool killed after its Nth write, for every write it makes.
for n in 1 2; do
  fault_proxy "$FP" --kill-after-writes "$n" --kill-pid-file "$FP/hold.pid" || fail "kill $n: kube-fault-proxy did not start"
  KUBECONFIG=$FP/kubeconfig "$H" apply -f "$PLAN" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" \
    > "$OUT/kill-$n.out" 2> "$OUT/kill-$n.err" < /dev/null &
  pid=$!
  echo "$pid" > "$FP/hold.pid.tmp" && mv "$FP/hold.pid.tmp" "$FP/hold.pid"
  wait "$pid"; killed=$?
  fault_proxy_stop "$FP"
  expect_eq "killed after write $n: SIGKILL" "$killed" 137
  expect_eq "killed after write $n: $n object(s) committed" "$(mine | wc -w)" "$n"
  converges "kill-$n"
done

# hold release: drift that appeared after the plan fails the zero-drift check; the hold stays.
run held "$H" apply -f "$PLAN" --talosconfig "$TC" --yes --backup-dir "$OUT/backups"
expect_eq "drift: held" "$(rc held)" 0
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {vm.overcommit_memory: "1"}}' > /dev/null
run drifted "$H" release --cluster prod --machine prod-w-2 --talosconfig "$TC" --timeout 30s -o json
expect_eq "drift: release refused (exit 1)" "$(rc drifted)" 1
expect_eq "drift: the machine named, DriftSincePlan" \
  "$(out drifted | jq -r '.results[] | select(.severity == "error") | "\(.tags["ichor.maesh.dev/code"]) \(.message | split(":")[0])"')" \
  "DriftSincePlan prod-w-2"
expect_contains "drift: the new setting named" "$(out drifted | jq -r '.results[].message')" "vm.overcommit_memory"
expect_eq "drift: the hold stays" "$(kubectl get talosmachine -n $NS prod-w-2 -o jsonpath='{.metadata.annotations.ichor\.maesh\.dev/hold-apply}')" true
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {vm.overcommit_memory: {$patch: delete}}}' > /dev/null
run undrifted "$H" release --cluster prod --machine prod-w-2 --talosconfig "$TC" --timeout 60s
expect_eq "drift gone: the rerun releases (exit 0)" "$(rc undrifted)" 0
expect_eq "drift gone: Ready" "$(kubectl get talosmachine -n $NS prod-w-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" True
cleanup

# A control plane and a worker released in one run: the control plane's hold comes off first.
kubectl patch taloscluster -n $NS prod --type merge -p '{"spec":{"controlPlane":{"count":2}}}' > /dev/null
run both "$A" --cluster prod --add-machine "$W2" --add-machine "$CP2" --talosconfig "$TC" --plan -o json
expect_eq "both: planned (worker listed first)" "$(out both | jq -r '[.items[] | select(.kind == "TalosMachine") | .metadata.name] | join(",")')" "prod-w-2,prod-cp-2"
run both-held "$H" apply -f "$OUT/both.out" --talosconfig "$TC" --yes --backup-dir "$OUT/backups"
expect_eq "both: held" "$(rc both-held)" 0
fault_proxy "$FP" || fail "release: kube-fault-proxy did not start"
run release env KUBECONFIG="$FP/kubeconfig" "$H" release --cluster prod --talosconfig "$TC" --timeout 60s
fault_proxy_stop "$FP"
expect_eq "both: released (exit 0)" "$(rc release)" 0
expect_eq "both: the API log shows the control plane's hold removed first" \
  "$(fault_proxy_log "$FP" '[.[] | select(.method == "PATCH" and (.path | test("/talosmachines/"))) | .path | split("/") | last] | join(",")')" \
  "prod-cp-2,prod-w-2"

# adopt --add-machine --yes killed after each of its three writes (its patch, its machine, the
# release), then run again: it converges to the plan's objects, released and Ready. The patch is
# written before the machine, so a run killed between the two leaves no held machine whose
# zero-drift check would wait for ever for a patch never written.
cleanup
ready_or_held() { # the machine's Ready status and hold, once Ready is set (at most 30 s)
  local v
  for _ in $(seq 60); do
    v=$(kubectl get talosmachine -n $NS prod-w-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.metadata.annotations.ichor\.maesh\.dev/hold-apply}')
    [ "${v%%/*}" = True ] && break
    sleep 0.5
  done
  echo "$v"
}
for n in 1 2 3; do
  fault_proxy "$FP" --kill-after-writes "$n" --kill-pid-file "$FP/adopt.pid" || fail "adopt kill $n: kube-fault-proxy did not start"
  KUBECONFIG=$FP/kubeconfig "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --yes --timeout 60s \
    --backup-dir "$OUT/backups" > "$OUT/adopt-kill-$n.out" 2> "$OUT/adopt-kill-$n.err" < /dev/null &
  pid=$!
  echo "$pid" > "$FP/adopt.pid.tmp" && mv "$FP/adopt.pid.tmp" "$FP/adopt.pid"
  wait "$pid"; killed=$?
  fault_proxy_stop "$FP"
  expect_eq "adopt killed after write $n: SIGKILL" "$killed" 137
  expect_eq "adopt killed after write $n: $n write(s) committed" \
    "$(fault_proxy_log "$FP" '[.[] | select(.write > 0) | (.path | split("/")) as $p | "\(.method) \(if .method == "POST" then $p[-1] else $p[-2:] | join("/") end)"] | join(", ")')" \
    "$(echo "POST talosconfigpatches, POST talosmachines, PATCH talosmachines/prod-w-2" | cut -d, -f1-$n)"
  run "adopt-kill-$n-rerun" "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --yes --timeout 60s --backup-dir "$OUT/backups"
  expect_eq "adopt killed after write $n: the rerun exits 0" "$(rc "adopt-kill-$n-rerun")" 0
  expect_eq "adopt killed after write $n: the plan's objects, once" "$(mine)" "$WANT"
  expect_eq "adopt killed after write $n: released and Ready" "$(ready_or_held)" "True/"
  cleanup
done
finish
