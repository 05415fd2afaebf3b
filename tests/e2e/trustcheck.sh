#!/usr/bin/env bash
# kubectl ichor trustcheck and the bundle sources against the lab's apiserver (ADR 0128 decision 1, step 2).
. "$(dirname "$0")/lib.sh"
I=$ICHOR_BIN/kubectl-ichor-inspect
T=$ICHOR_BIN/kubectl-ichor-trustcheck
TC=$(talosconfig prod)
CP=$(node_addr prod-cp-1); W2=$(node_addr prod-w-2); B=$(node_addr lab-b-cp-1); M=$(node_addr maint-1)
"$I" "$W2" --talosconfig "$TC" > "$OUT/w2.inspect" 2>/dev/null
"$I" "$B" --talosconfig "$(talosconfig lab-b)" > "$OUT/b.inspect" 2>/dev/null
"$I" "$B" "$M" --talosconfig "$TC" > "$OUT/bm.inspect" 2>/dev/null

# The bundle from the TalosCluster's Secret (the default).
run secret "$T" --cluster prod -f "$OUT/w2.inspect" -o json
expect_eq "bundle Secret: exit 0" "$(rc secret)" 0
expect_eq "bundle Secret: member" "$(out secret | jq -r '.items[0].status.trust.verdict')" Member
expect_eq "bundle Secret: cluster ID and CA" "$(out secret | jq -r '.items[0].status.trust | [.clusterID, .talosCA] | map(tostring) | join(",")')" "true,true"

# From a file.
run file "$T" --cluster prod --secrets-bundle "$(cluster_field prod secretsBundle)" -f "$OUT/w2.inspect" -o json
expect_eq "bundle file: member" "$(out file | jq -r '.items[0].status.trust.verdict')" Member

# Recovered from the prod control plane, written 0600, never over a file.
rm -f "$OUT/recovered.yaml"
run recover "$T" --cluster prod --recover-secrets --recover-from "$CP" --talosconfig "$TC" --recover-to "$OUT/recovered.yaml" -f "$OUT/w2.inspect" -o json
expect_eq "recovered: exit 0" "$(rc recover)" 0
expect_eq "recovered: member" "$(out recover | jq -r '.items[0].status.trust.verdict')" Member
expect_eq "recovered: file mode" "$(stat -c %a "$OUT/recovered.yaml")" 600
same=$(/usr/bin/python3 - "$OUT/recovered.yaml" "$(cluster_field prod secretsBundle)" <<'PY'
import sys, yaml
a, b = (yaml.safe_load(open(p)) for p in sys.argv[1:3])
print("same" if a == b else "differs: %s" % [k for k in b if a.get(k) != b.get(k)])
PY
)
expect_eq "recovered: equals Talos's bundle" "$same" same
run recover_again "$T" --cluster prod --recover-secrets --recover-from "$CP" --talosconfig "$TC" --recover-to "$OUT/recovered.yaml" -f "$OUT/w2.inspect"
expect_eq "recover over a file: exit 3" "$(rc recover_again)" 3
expect_contains "recover over a file: says so" "$(err recover_again)" "never overwritten"
run recover_worker "$T" --cluster prod --recover-secrets --recover-from "$W2" --talosconfig "$TC" --recover-to "$OUT/recovered-w.yaml" -f "$OUT/w2.inspect"
expect_eq "recover from a worker: exit 3" "$(rc recover_worker)" 3
expect_contains "recover from a worker: needs a control plane" "$(err recover_worker)" "needs a control plane"
expect_eq "recover from a worker: nothing written" "$(ls "$OUT/recovered-w.yaml" 2>/dev/null)" ""

# Another cluster's node read with its own talosconfig: the exact refusal.
run labb "$T" --cluster prod -f "$OUT/b.inspect" -o json
expect_eq "lab-b: exit 1" "$(rc labb)" 1
expect_eq "lab-b: verdict" "$(out labb | jq -r '.items[0].status.trust.verdict')" OtherCluster
msg=$(out labb | jq -r '.results[-1].message')
expect_contains "lab-b: names its cluster" "$msg" "$B: belongs to cluster \"lab-b\", not to \"prod\""
expect_contains "lab-b: names reclaim" "$msg" "kubectl ichor reclaim $B --talosconfig $(talosconfig lab-b) --cluster prod"
# Unknown authority (read with prod's talosconfig) and maintenance.
run bm "$T" --cluster prod -f "$OUT/bm.inspect" -o json
expect_eq "unknown authority + maintenance: verdicts" "$(out bm | jq -r '[.items[].status.trust.verdict] | join(",")')" "UnknownAuthority,Maintenance"
expect_contains "unknown authority: wrong talosconfig" "$(out bm | jq -r '[.results[].message] | join("\n")')" "--talosconfig is the wrong one"
expect_contains "maintenance: discovery and approval" "$(out bm | jq -r '[.results[].message] | join("\n")')" "discovery and approval"

# A CA rotation under way refuses.
kubectl -n ichor-system patch secret prod-secrets --type merge -p '{"stringData":{"rotation.yaml":"x: y"}}' > /dev/null
run rotation "$T" --cluster prod -f "$OUT/w2.inspect"
kubectl -n ichor-system patch secret prod-secrets --type json -p '[{"op":"remove","path":"/data/rotation.yaml"}]' > /dev/null
expect_eq "rotation: exit 1" "$(rc rotation)" 1
expect_contains "rotation: says so" "$(err rotation)" "a CA rotation is under way"

# A user without access to Secrets: a clear error, exit 3.
run noaccess "$T" --cluster prod --kubeconfig "$ICHOR_LAB_STATE/kubeconfig-noaccess" -f "$OUT/w2.inspect"
expect_eq "no access: exit 3" "$(rc noaccess)" 3
expect_contains "no access: forbidden" "$(err noaccess)" "forbidden"

# A kubeconfig whose user authenticates only through an exec plugin.
crt=$(kubectl config view --raw -o jsonpath='{.users[0].user.client-certificate-data}' | base64 -d | jq -Rs .)
key=$(kubectl config view --raw -o jsonpath='{.users[0].user.client-key-data}' | base64 -d | jq -Rs .)
cat > "$OUT/plugin" <<PLUGIN
#!/bin/sh
cat <<JSON
{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":$crt,"clientKeyData":$key}}
JSON
PLUGIN
chmod +x "$OUT/plugin"
server=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')
cadata=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
cat > "$OUT/exec-kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: lab, cluster: {server: "$server", certificate-authority-data: "$cadata"}}]
users: [{name: plugin, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: "$OUT/plugin", interactiveMode: Never}}}]
contexts: [{name: lab, context: {cluster: lab, user: plugin}}]
current-context: lab
KC
run exec "$T" --cluster prod --kubeconfig "$OUT/exec-kubeconfig" -f "$OUT/w2.inspect" -o json
expect_eq "exec plugin: exit 0" "$(rc exec)" 0
expect_eq "exec plugin: member" "$(out exec | jq -r '.items[0].status.trust.verdict')" Member
rm -f "$OUT/plugin" "$OUT/exec-kubeconfig" "$OUT/recovered.yaml"

# A cluster that does not exist: exit 3 naming it and the namespace.
run nocluster "$T" --cluster nope -f "$OUT/w2.inspect"
expect_eq "no such cluster: exit 3" "$(rc nocluster)" 3
expect_contains "no such cluster: names it" "$(err nocluster)" "TalosCluster \"nope\" not found in namespace \"ichor-system\""
finish
