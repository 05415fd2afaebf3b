#!/usr/bin/env bash
# The lab's Kubernetes side, checked with the real kubectl: the CRDs (round trip, the CEL rule on
# spec.cni.preset, strict unknown-field refusal), RBAC (a user without bindings is Forbidden),
# lab-seed's objects, and lab-controller's Ready on the approved machines of prod.
#
# Needs a lab that is up:  eval "$(tests/lab/up)"  (KUBECONFIG and ICHOR_LAB_STATE set).
# Writes only a TalosMachine of its own (deleted at the end) and server-side dry runs.
set -uo pipefail
state=${ICHOR_LAB_STATE:?ICHOR_LAB_STATE is not set: eval \"\$(tests/lab/up)\" first}
export KUBECONFIG=${KUBECONFIG:-$state/kubeconfig}
lab=$state/lab.json
kubectl=${KUBECTL:-kubectl}
ns=ichor-system
fails=0
ok()   { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; fails=$((fails + 1)); }
k()    { "$kubectl" -n "$ns" "$@"; }
command -v jq >/dev/null || { echo "FAIL jq is needed to read $lab"; exit 1; }
[ -s "$lab" ] || { echo "FAIL no $lab: is the lab up?"; exit 1; }

# --- the CRDs are served --------------------------------------------------------------------
for crd in talosclusters talosmachines talosconfigpatches; do
  if "$kubectl" get crd "$crd.ichor.maesh.dev" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null | grep -qx True; then
    ok "crd $crd.ichor.maesh.dev Established"
  else
    fail "crd $crd.ichor.maesh.dev not Established"
  fi
done

# --- a TalosMachine round trip (short name, defaults, printer columns) -----------------------
tm=e2e-lab-kubectl-$$
trap 'k delete talosmachine "$tm" --ignore-not-found --wait=false >/dev/null 2>&1' EXIT
if out=$(k apply -f - 2>&1 <<EOF
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosMachine
metadata:
  name: $tm
  annotations: {ichor.maesh.dev/hold-apply: "true"}
  labels: {ichor.maesh.dev/cluster: e2e-none}
spec:
  cluster: e2e-none
  role: worker
  address: 127.0.0.250
  identity: {uuid: 0f0e0d0c-0000-4000-8000-000000000001, serial: E2E, macs: ["02:e2:e2:00:00:01"]}
  install: {disk: /dev/sda, image: "ghcr.io/siderolabs/installer:v1.13.9", wipe: false}
EOF
); then
  got=$(k get tm "$tm" -o jsonpath='{.spec.approval}|{.spec.role}|{.spec.identity.macs[0]}|{.spec.install.wipe}|{.metadata.annotations.ichor\.maesh\.dev/hold-apply}')
  if [ "$got" = 'Pending|worker|02:e2:e2:00:00:01|false|true' ]; then
    ok "TalosMachine created and read back (approval defaulted to Pending)"
  else
    fail "TalosMachine read back as '$got', want 'Pending|worker|02:e2:e2:00:00:01|false|true'"
  fi
  cols=$(k get tm "$tm" --no-headers -o wide 2>&1 | awk '{print $2, $3, $4, $5}')
  [ "$cols" = "e2e-none worker Pending 127.0.0.250" ] && ok "printer columns: $cols" || fail "printer columns: '$cols'"
else
  fail "kubectl apply of a TalosMachine: $out"
fi

# --- validation: enum, CEL immutability, unknown fields ---------------------------------------
if out=$(k patch tm "$tm" --type merge -p '{"spec":{"approval":"Maybe"}}' --dry-run=server 2>&1); then
  fail "approval Maybe accepted"
else
  [[ $out == *'Unsupported value: "Maybe"'* ]] && ok "approval enum enforced" || fail "approval Maybe refused, but: $out"
fi

cluster=$(jq -r '[.clusters[] | select(.ichor == true) | .name] | if index("prod") then "prod" else .[0] // empty end' "$lab")
if [ -z "$cluster" ]; then
  fail "lab.json has no cluster with \"ichor\": true"
else
  preset=$(k get tc "$cluster" -o jsonpath='{.spec.cni.preset}' 2>&1)
  other=unmanaged; [ "$preset" = unmanaged ] && other=cilium
  if out=$(k patch tc "$cluster" --type merge -p "{\"spec\":{\"cni\":{\"preset\":\"$other\"}}}" --dry-run=server 2>&1); then
    fail "spec.cni.preset of $cluster changed from $preset to $other (dry run) without refusal"
  elif [[ $out == *"spec.cni.preset is immutable"* ]]; then
    ok "spec.cni.preset $preset -> $other refused: spec.cni.preset is immutable"
  else
    fail "spec.cni.preset change refused without the CEL message: $out"
  fi
fi

if out=$(k apply --validate=strict --dry-run=server -f - 2>&1 <<EOF
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosMachine
metadata: {name: $tm-unknown}
spec: {cluster: e2e-none, bogusField: 1}
EOF
); then
  fail "unknown field spec.bogusField accepted with --validate=strict"
else
  [[ $out == *'unknown field "spec.bogusField"'* ]] && ok "unknown field refused (strict field validation)" || fail "unknown field refused, but: $out"
fi

if out=$(k apply --validate=strict --dry-run=server -f - 2>&1 <<EOF
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosConfigPatch
metadata: {name: $tm-patch}
spec: {cluster: e2e-none, layer: machine, patch: "machine: {}"}
EOF
); then
  fail "TalosConfigPatch layer machine without spec.machine accepted"
else
  [[ $out == *"spec.machine is required when spec.layer is machine"* ]] && ok "TalosConfigPatch layer rule enforced" || fail "layer rule: $out"
fi

# --- RBAC: the lab-noaccess user ---------------------------------------------------------------
if out=$("$kubectl" --kubeconfig "$state/kubeconfig-noaccess" get tm 2>&1); then
  fail "lab-noaccess could list talosmachines"
else
  [[ $out == *Forbidden* ]] && ok "lab-noaccess is Forbidden" || fail "lab-noaccess refused, but not Forbidden: $out"
fi

# --- lab-seed's objects ---------------------------------------------------------------------------
for c in $(jq -r '.clusters[] | select(.ichor == true) | .name' "$lab"); do
  bundle=$(jq -r --arg c "$c" '.clusters[] | select(.name == $c) | .secretsBundle' "$lab")
  want=$(sha256sum < "$bundle" | cut -d' ' -f1)
  got=$(k get secret "$c-secrets" -o jsonpath='{.data.bundle\.yaml}' 2>/dev/null | base64 -d | sha256sum | cut -d' ' -f1)
  [ "$got" = "$want" ] && ok "secret $c-secrets holds $bundle" || fail "secret $c-secrets missing or not the bundle file"
  spec=$(k get tc "$c" -o jsonpath='{.spec.talosVersion}|{.spec.kubernetesVersion}|{.spec.endpoint}|{.spec.versionContract}|{.spec.controlPlane.count}|{.spec.secretsBundleRef.name}' 2>&1)
  want=$(jq -r --arg c "$c" '(.clusters[] | select(.name == $c)) as $x
    | ([.nodes[] | select(.cluster == $c and .role == "controlplane" and .ichor == "approved")] | length | if . < 1 then 1 else . end) as $n
    | "\($x.talosVersion)|\($x.kubernetesVersion)|\($x.endpoint)|\($x.contract)|\($n)|\($c)-secrets"' "$lab")
  [ "$spec" = "$want" ] && ok "TalosCluster $c: $spec" || fail "TalosCluster $c: '$spec', want '$want'"
done
while IFS='|' read -r name c approval; do
  [ -n "$name" ] || continue
  want=Approved; [ "$approval" = pending ] && want=Pending
  got=$(k get tm "$name" -o jsonpath='{.spec.cluster}|{.spec.approval}|{.metadata.labels.ichor\.maesh\.dev/cluster}' 2>&1)
  [ "$got" = "$c|$want|$c" ] && ok "TalosMachine $name: $got" || fail "TalosMachine $name: '$got', want '$c|$want|$c'"
done < <(jq -r '(.clusters | map(select(.ichor == true) | .name)) as $ic
  | .nodes[] | select((.ichor == "approved" or .ichor == "pending") and (.cluster as $c | $ic | index($c)))
  | "\(.name)|\(.cluster)|\(.ichor)"' "$lab")

# --- lab-controller: Ready on the approved machines of the cluster ------------------------------
if [ -n "$cluster" ]; then
  mapfile -t approved < <(jq -r --arg c "$cluster" '.nodes[] | select(.cluster == $c and .ichor == "approved") | .name' "$lab")
  [ ${#approved[@]} -gt 0 ] || fail "no approved machine of $cluster in lab.json"
  deadline=$((SECONDS + 15))
  for m in "${approved[@]}"; do
    while :; do
      r=$(k get tm "$m" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)
      [ "$r" = True ] && break
      [ $SECONDS -lt $deadline ] || break
      sleep 0.5
    done
    if [ "$r" = True ]; then
      ok "lab-controller: $m Ready=True"
    else
      fail "lab-controller: $m not Ready within 15 s: $(k get tm "$m" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}; {end}' 2>&1)"
    fi
  done
fi

# --- lab-controller on our own machine: pending (ignored), approved + held, released ------------
cond() { k get tm "$tm" -o jsonpath="{.status.conditions[?(@.type==\"$1\")].$2}" 2>/dev/null; }
# wait_for WHAT EXPECTED COMMAND...: polls COMMAND's output for EXPECTED, up to 10 s
wait_for() {
  local what=$1 want=$2 got deadline=$((SECONDS + 10)); shift 2
  while got=$("$@"); [ "$got" != "$want" ] && [ $SECONDS -lt $deadline ]; do sleep 0.3; done
  [ "$got" = "$want" ] && ok "$what" || fail "$what: got '$got', want '$want'"
}
sleep 1.2   # more than two controller passes
[ -z "$(cond Ready status)$(cond AdoptionHeld status)" ] && ok "lab-controller leaves a pending machine alone" ||
  fail "pending machine got conditions: $(cond Ready status) $(cond AdoptionHeld status)"
held_state()     { echo "$(cond AdoptionHeld status) $(cond AdoptionHeld reason) $(cond Ready status)"; }
released_state() { echo "$(cond AdoptionHeld status)|$(cond Ready status)|$(cond Ready reason)"; }
k patch tm "$tm" --type merge -p '{"spec":{"approval":"Approved"}}' >/dev/null
wait_for "approved held machine: AdoptionHeld=True (HoldApply), Ready=False" "True HoldApply False" held_state
k annotate tm "$tm" ichor.maesh.dev/hold-apply- >/dev/null
wait_for "released machine of a missing cluster: AdoptionHeld removed, Ready=False (ClusterNotFound)" \
  "|False|ClusterNotFound" released_state

if [ $fails -gt 0 ]; then
  echo "lab_kubectl: $fails check(s) failed"
  exit 1
fi
echo "lab_kubectl: all checks passed"
