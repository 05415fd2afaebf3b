#!/usr/bin/env bash
# Credentials outside the Talos bundle (issue 26, "The decision", and "What it must show") on
# tests/lab/scenarios/real-credentials.yaml (rowan): registry auth in both forms, WireGuard keys,
# an OIDC client secret in an inline manifest and a Tailscale auth key. The whole cluster's
# adopt --plan blocks no machine and prints none of those values; the adoption carries them in a
# Secret of the Ichor namespace that a patch references, never in a patch's text; every machine
# is released after its zero-drift check and Ready, no node written to; a rerun exits 0; hold
# abort of a held adoption removes that Secret too. Kept apart from real_clusters.sh so that the
# other scenarios do not wait for the credentials work.
. "$(dirname "$0")/home_lab.inc"
A=$ICHOR_BIN/kubectl-ichor-adopt
H=$ICHOR_BIN/kubectl-ichor-hold
C=rowan
written() { k get secret,taloscluster,talosmachine,talosconfigpatch -l "ichor.maesh.dev/cluster=$C" -o name 2> /dev/null | sort | tr '\n' ' '; }
blocking() { # what blocks, one line per code and path, with its nodes (the lead's list)
  out "$1" | jq -r '[.results[] | select(.severity == "error") | {c: .tags["ichor.maesh.dev/code"], p: (.field.path // "-"), n: (.tags["ichor.maesh.dev/node"] // "-")}] | group_by([.c, .p]) | .[] | "\(.[0].c) \(.[0].p) [\([.[].n] | unique | join(","))]"'
}
NODES="rowan-cp-1 rowan-cp-2 rowan-cp-3 rowan-w-1"
calls() {
  local n total=0
  for n in $NODES; do total=$((total + $(sim GET "/nodes/$n/calls" | jq "[.[] | select($1)] | length"))); done
  echo "$total"
}
writes() { echo "$(calls '(.method | endswith("/ApplyConfiguration")) and (.request.dryRun != true)') $(calls '.method | endswith("/Reset")')"; }

home_up real-credentials
TC=$(talosconfig $C)
ADDRS=$(jq -r '[.nodes[] | select(.cluster == "rowan") | .address] | join(",")' "$LAB")
cd "$PRIV" || exit 1
# The values that must never show: from the scenario's node configurations (they hold them).
values=$(for n in $NODES; do
  f=$(jq -r --arg n "$n" '.nodes[] | select(.name == $n) | .config' "$LAB")
  python3 - "$f" <<'PY'
import re, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    def walk(v, k=None):
        if isinstance(v, dict):
            for kk, x in v.items(): walk(x, kk)
        elif isinstance(v, list):
            for x in v: walk(x, k)
        elif isinstance(v, str):
            if k in ("password", "privateKey", "presharedKey"): print(v)
            for m in re.findall(r"client-secret: (\S+)|TS_AUTHKEY=(\S+)|ingest-token: (\S+)", v):
                print(m[0] or m[1] or m[2])
    walk(d)
PY
done | sort -u)
expect_eq "the scenario's credentials found (registry x2, WireGuard x5, OIDC, Tailscale, the shipper's token)" "$(echo "$values" | grep -c .)" 10
leaks() { # leaks FILE...: the credentials found in the files
  local v
  for v in $values; do grep -lF -- "$v" "$@" > /dev/null 2>&1 && echo "${v:0:4}..."; done
}

run plan "$A" --talosconfig "$TC" --nodes "$ADDRS" --cni-unmanaged --plan -o json
expect_eq "--plan: exit 0" "$(rc plan)" 0
expect_eq "--plan: blocks nothing" "$(blocking plan)" ""
expect_eq "--plan: a TalosMachine per node" \
  "$(out plan | jq -r '[.items[] | select(.kind == "TalosMachine") | .metadata.name] | join(" ")')" "$NODES"
expect_eq "--plan: no credential printed" "$(leaks "$OUT/plan.out" "$OUT/plan.err")" ""
secrets=$(out plan | jq -r --arg b "$C-secrets" '[.items[] | select(.kind == "Secret" and .metadata.name != $b) | .metadata.name] | join(" ")')
expect_eq "--plan: a credentials Secret beside the bundle's" "$([ -n "$secrets" ] && echo yes)" yes
expect_eq "--plan: a patch references it" \
  "$(out plan | jq -r --arg s "${secrets%% *}" '[.items[] | select(.kind == "TalosConfigPatch") | tostring | contains($s)] | any')" true
run tplan "$A" --talosconfig "$TC" --nodes "$ADDRS" --cni-unmanaged --plan -o table
expect_eq "--plan -o table: no credential printed" "$(leaks "$OUT/tplan.out" "$OUT/tplan.err")" ""
expect_eq "--plan: nothing written" "$(written)" ""

# Held (hold apply of the plan), then aborted: the credentials Secret goes with the rest.
run planfile "$A" --talosconfig "$TC" --nodes "$ADDRS" --cni-unmanaged --recover-secrets --recover-to "$PRIV/bundle.yaml" --plan -o yaml
out planfile > "$PRIV/plan.yaml"
expect_eq "the plan as YAML: no credential" "$(leaks "$PRIV/plan.yaml")" ""
run held "$H" apply -f "$PRIV/plan.yaml" --talosconfig "$TC" --secrets-bundle "$PRIV/bundle.yaml" --yes
expect_eq "hold apply: exit 0" "$(rc held)" 0
expect_contains "held: the credentials Secret written" "$(written)" "secret/${secrets%% *}"
run abort "$H" abort --cluster $C
expect_eq "hold abort: exit 0" "$(rc abort)" 0
expect_eq "hold abort: nothing of it left, the credentials Secret too" "$(written)" ""

run adopt "$A" --talosconfig "$TC" --nodes "$ADDRS" --cni-unmanaged --yes --timeout 90s --parallel 3
expect_eq "the adoption: exit 0" "$(rc adopt)" 0
expect_eq "the adoption: no credential printed" "$(leaks "$OUT/adopt.out" "$OUT/adopt.err")" ""
k get talosconfigpatch -l "ichor.maesh.dev/cluster=$C" -o yaml > "$PRIV/patches.yaml"
expect_eq "no credential in any patch's text" "$(leaks "$PRIV/patches.yaml")" ""
expect_eq "the credentials Secret written" "$(k get secret "${secrets%% *}" -o name 2> /dev/null)" "secret/${secrets%% *}"
# The log shipper's manifest (a DaemonSet beside its token's Secret) is carried whole, as the node
# has it, in the control planes' credentials: its text is the credential, digested in the plan.
carried=$(for s in $secrets; do k get secret "$s" -o json 2> /dev/null | jq -r '.data // {} | .[] | @base64d'; done)
expect_contains "the shipper's manifest carried in a credentials Secret" "$carried" "ingest-token: lab-shipper-ingest-token-7c1d"
expect_contains "the shipper's manifest carried whole" "$carried" "image: registry.lab.example/log-shipper:2.4.1"
released="" ready=""
for n in $NODES; do
  grep -q "released the hold on $n\b" "$OUT/adopt.err" && released+="$n "
  [ "$(condition "$n" Ready | cut -d/ -f1)" = True ] && ready+="$n "
done
expect_eq "every machine released after its zero-drift check" "$released" "$NODES "
expect_eq "every machine Ready" "$ready" "$NODES "
expect_eq "no ApplyConfiguration and no Reset on any node" "$(writes)" "0 0"
before=$(written)
run again "$A" --talosconfig "$TC" --nodes "$ADDRS" --cni-unmanaged --yes --timeout 60s
expect_eq "a rerun: exit 0" "$(rc again)" 0
expect_eq "a rerun: nothing new" "$(written)" "$before"
finish
