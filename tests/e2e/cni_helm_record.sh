#!/usr/bin/env bash
# The lab's Cilium for the CNI cases (docs/lab.md, "Cilium objects and Helm records"), on a private
# Kubernetes API of its own (tests/lab/kube/start; the shared lab's objects are not touched):
# helm-record writes a release record Helm's storage reads back, a second revision supersedes the
# first, the record's values are Helm's encoding (base64, gzip, JSON) under the API's base64, and
# the Cilium objects exist with the field manager and markers of the install they stand for.
set -uo pipefail
root=${ICHOR_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
kubectl=${KUBECTL:-kubectl}
hr=$root/build/lab/helm-record
fails=0
ok()   { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; fails=$((fails + 1)); }
command -v jq >/dev/null || { echo "FAIL jq is needed"; exit 1; }
[ -x "$hr" ] || { echo "FAIL $hr missing: build the lab (tests/lab/up does)"; exit 1; }

state=$(mktemp -d /tmp/ichor-e2e-cni.XXXXXX)
trap 'ICHOR_LAB_STATE="$state" "$root/tests/lab/down" >/dev/null 2>&1; rm -rf "$state"' EXIT
"$root/tests/lab/kube/start" "$state" 2>"$state/start.log" || { cat "$state/start.log"; echo "FAIL kube start"; exit 1; }
export KUBECONFIG=$state/kubeconfig
k() { "$kubectl" -n kube-system "$@"; }
printf 'hubble:\n  relay:\n    enabled: true\n' > "$state/values.yaml"

# cilium-inline: objects only, field manager talos, no record.
if "$hr" --kubeconfig "$KUBECONFIG" --objects --guide --values "$state/values.yaml" 2>"$state/hr.log"; then
  ok "helm-record --objects"
else
  fail "helm-record --objects: $(cat "$state/hr.log")"
fi
[ "$(k get cm cilium-config -o jsonpath='{.data.ipam}')" = kubernetes ] && ok "cilium-config ipam kubernetes" || fail "cilium-config ipam"
k get deploy hubble-relay >/dev/null 2>&1 && ok "hubble-relay Deployment (hubble.relay.enabled)" || fail "no hubble-relay"
[ "$(k get ds cilium -o jsonpath='{.metadata.managedFields[0].manager}')" = talos ] && ok "field manager talos" || fail "field manager"
[ -z "$(k get secrets -o name | grep sh.helm.release)" ] && ok "no release record" || fail "a record without --record"

# cilium-helm: two revisions through Helm's storage.
for i in 1 2; do
  "$hr" --kubeconfig "$KUBECONFIG" --record --objects --guide --values "$state/values.yaml" 2>>"$state/hr.log" ||
    fail "helm-record --record ($i): $(cat "$state/hr.log")"
done
[ "$(k get secret sh.helm.release.v1.cilium.v1 -o jsonpath='{.metadata.labels.status}')" = superseded ] &&
  ok "revision 1 superseded" || fail "revision 1 not superseded"
s2=$(k get secret sh.helm.release.v1.cilium.v2 -o json)
[ "$(jq -r .type <<<"$s2")" = helm.sh/release.v1 ] && [ "$(jq -r .metadata.labels.status <<<"$s2")" = deployed ] &&
  ok "revision 2 deployed, type helm.sh/release.v1" || fail "revision 2: $(jq -c '{type, labels: .metadata.labels}' <<<"$s2")"
rel=$(jq -r .data.release <<<"$s2" | base64 -d | base64 -d | gunzip | jq -c '{name, version, chart: .chart.metadata.version, config}')
[ "$rel" = '{"name":"cilium","version":2,"chart":"1.19.6","config":{"hubble":{"relay":{"enabled":true}}}}' ] &&
  ok "the record decodes to the chart and values" || fail "record: $rel"
[ "$(k get ds cilium -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}')" = cilium ] &&
  ok "Helm's markers on the objects" || fail "no meta.helm.sh annotations"

[ "$fails" -eq 0 ] && echo "cni_helm_record: all passed" || echo "cni_helm_record: $fails failed"
[ "$fails" -eq 0 ]
