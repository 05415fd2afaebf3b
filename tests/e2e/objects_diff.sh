#!/usr/bin/env bash
# -o objects with the real kubectl (docs/stream.md): a plan's objects alone, as a v1 List, go to
# kubectl diff (exit 1, the new TalosMachine and its patch shown) and to kubectl apply
# --dry-run=server (accepted); after hold apply of the same plan, kubectl diff finds nothing: the
# suite's own annotations (plan digest, applied-at, consented drift) are the live object's, which
# a diff keeps. Leaves the lab as it found it.
. "$(dirname "$0")/lib.sh"
I=$ICHOR_BIN/kubectl-ichor-inspect
T=$ICHOR_BIN/kubectl-ichor-trustcheck
D=$ICHOR_BIN/kubectl-ichor-drift
H=$ICHOR_BIN/kubectl-ichor-hold
TC=$(talosconfig prod)
W2=$(node_addr prod-w-2)
NS=ichor-system
cleanup() {
  kubectl annotate talosmachine -n $NS prod-w-2 ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
  kubectl delete talosmachine -n $NS prod-w-2 --ignore-not-found > /dev/null 2>&1
  kubectl annotate talosconfigpatch -n $NS prod-w-2-adopted ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
  kubectl delete talosconfigpatch -n $NS prod-w-2-adopted --ignore-not-found > /dev/null 2>&1
}
cleanup
# Class A drift on the node, so that the plan holds a TalosConfigPatch beside the TalosMachine.
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {net.core.somaxconn: "65535"}}' > /dev/null
"$I" "$W2" --talosconfig "$TC" 2> /dev/null | "$T" --cluster prod > "$OUT/trusted.yaml" 2> /dev/null
run plan "$D" --cluster prod -f "$OUT/trusted.yaml"
run objects "$D" --cluster prod -f "$OUT/trusted.yaml" -o objects
expect_eq "plan: exit 0" "$(rc plan)" 0
expect_eq "-o objects: exit 0" "$(rc objects)" 0
expect_eq "-o objects: a v1 List of the planned objects" \
  "$(out objects | "$I" -f - -o json | jq -r '[.items[] | .kind + "/" + .metadata.name] | join(",")')" \
  "TalosConfigPatch/prod-w-2-adopted,TalosMachine/prod-w-2"
expect_eq "-o objects: the plan's objects, unchanged" \
  "$(out objects | "$I" -f - -o json | jq -cS .items)" \
  "$(out plan | "$I" -f - -o json | jq -cS '[.items[] | select(.apiVersion == "ichor.maesh.dev/v1alpha1")]')"
expect_eq "-o objects: the class B warnings are counted on stderr" "$(err objects)" \
  "kubectl ichor drift: warning: -o objects leaves out 2 warning result(s); -o yaml shows every result"

# kubectl diff, through a pipe as the issue has it: differences (exit 1), the new objects shown.
"$D" --cluster prod -f "$OUT/trusted.yaml" -o objects 2> /dev/null | kubectl diff -f - > "$OUT/diff.out" 2> "$OUT/diff.err"
echo $? > "$OUT/diff.rc"
expect_eq "kubectl diff: exit 1 (differences)" "$(rc diff)" 1
expect_eq "kubectl diff: no error" "$(err diff)" ""
expect_contains "kubectl diff: the new TalosMachine" "$(out diff)" "+kind: TalosMachine"
expect_contains "kubectl diff: its name" "$(out diff)" "+  name: prod-w-2"
expect_contains "kubectl diff: its address" "$(out diff)" "+  address: $W2"
expect_contains "kubectl diff: the new TalosConfigPatch" "$(out diff)" "+kind: TalosConfigPatch"
expect_contains "kubectl diff: the captured drift" "$(out diff)" "net.core.somaxconn"
expect_eq "kubectl diff: both objects are new" "$(out diff | grep -c '^@@ -0,0 ')" 2

# kubectl apply --dry-run=server takes them, and nothing is written.
run_in dryrun "$OUT/objects.out" kubectl apply --dry-run=server -f -
expect_eq "kubectl apply --dry-run=server: exit 0" "$(rc dryrun)" 0
expect_eq "kubectl apply --dry-run=server: both created (server dry run)" "$(out dryrun)" \
  "$(printf 'talosconfigpatch.ichor.maesh.dev/prod-w-2-adopted created (server dry run)\ntalosmachine.ichor.maesh.dev/prod-w-2 created (server dry run)')"
expect_eq "dry run: nothing written" "$(kubectl get talosmachine -n $NS prod-w-2 --ignore-not-found -o name)" ""

# hold apply of the same plan; then kubectl diff of the objects finds no difference.
run apply "$H" apply -f "$OUT/plan.out" --talosconfig "$TC" --yes --backup-dir "$OUT/backups"
expect_eq "hold apply: exit 0" "$(rc apply)" 0
expect_eq "hold apply: the suite's annotations on the machine" \
  "$(kubectl get talosmachine -n $NS prod-w-2 -o json | jq -r '.metadata.annotations | keys | join(",")')" \
  "ichor.maesh.dev/applied-at,ichor.maesh.dev/consented-drift,ichor.maesh.dev/hold-apply,ichor.maesh.dev/plan-digest"
run_in after "$OUT/objects.out" kubectl diff -f -
expect_eq "kubectl diff after hold apply: exit 0 (no difference)" "$(rc after)" 0
expect_eq "kubectl diff after hold apply: nothing shown" "$(out after)" ""
run_in after_ss "$OUT/objects.out" kubectl diff --server-side -f -
expect_eq "kubectl diff --server-side after hold apply: exit 0" "$(rc after_ss)" 0
expect_eq "kubectl diff --server-side after hold apply: nothing shown" "$(out after_ss)" ""

run abort "$H" abort --cluster prod --machine prod-w-2
expect_eq "hold abort: exit 0" "$(rc abort)" 0
sim POST /nodes/prod-w-2/config 'machine: {sysctls: {net.core.somaxconn: {$patch: delete}}}' > /dev/null
cleanup
finish
