#!/usr/bin/env bash
# Completion against the lab (README.md, "Shell completion"): --cluster offers the TalosClusters the lab's API serves
# (kubectl get is the oracle), in each of bash, zsh and fish loading `kubectl-ichor completion
# SHELL`; the talosconfig's contexts and addresses come from the lab's talosconfig. Then kubectl's
# own plugin completion (kubectl >= 1.26 runs kubectl_complete-ichor from PATH), the krew way:
# PATH holds only a directory with the kubectl-ichor link and the shim installed as the README
# says (`kubectl ichor completion kubectl-shim`), and the system's directories for kubectl;
# without the shim kubectl completes nothing (krew links one bin: krew issue 812). Last, the
# cmake --install layout, where every kubectl-ichor-VERB is on PATH and kubectl asks for
# kubectl_complete-ichor-VERB, and kubectl's own bash script over the whole chain.
. "$(dirname "$0")/lib.sh"
. "$ICHOR_ROOT/tests/completion/lib.sh"
TC=$(talosconfig prod)
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$COMP_OPTS"' EXIT
one_line() { tr '\n' ' '; }

clusters=$(kubectl get talosclusters -n ichor-system -o jsonpath='{.items[*].metadata.name}')
[ -n "$clusters" ] && pass "the lab serves TalosClusters: $clusters" || fail "kubectl lists no TalosCluster"
want_clusters=$(sorted $clusters)
endpoints=$(python3 -c 'import sys, yaml; c = yaml.safe_load(open(sys.argv[1])); x = c["contexts"]["prod"]; print(" ".join(x.get("nodes") or x["endpoints"]))' "$TC")
want_ep=$(sorted $endpoints)

# The dispatcher and the verbs, through the kube flags on the line.
export PATH=$ICHOR_BIN:$PATH
run clusters kubectl-ichor __complete hold --cluster ''
expect_eq "__complete hold --cluster: the served clusters" "$(sed '$d' "$OUT/clusters.out" | cut -f1 | line_set)" "$want_clusters"
expect_eq "__complete hold --cluster: directive 4" "$(tail -1 "$OUT/clusters.out")" ":4"
expect_eq "__complete hold --cluster: described" "$(sed -n 1p "$OUT/clusters.out" | cut -f2)" "TalosCluster in ichor-system"
expect_eq "__complete hold --cluster: nothing on stderr" "$(err clusters)" ""
ctx=$(kubectl config current-context)
expect_eq "--kubeconfig and --context on the line are used" \
  "$(env -u KUBECONFIG kubectl-ichor __completeNoDesc adopt --kubeconfig "$KUBECONFIG" --context "$ctx" --cluster '' | sed '$d' | line_set)" "$want_clusters"
expect_eq "--context of no such context: none" \
  "$(kubectl-ichor __completeNoDesc adopt --context nowhere --cluster '' | one_line)" ":4 "
expect_eq "--context: the kubeconfig's contexts" "$(kubectl-ichor __completeNoDesc hold --context '' | sed '$d' | line_set)" \
  "$(kubectl config get-contexts -o name | line_set)"
expect_eq "-n of a namespace without clusters: none" "$(kubectl-ichor __completeNoDesc drift -n default --cluster '' | one_line)" ":4 "
expect_eq "credentials CLUSTER: the clusters" "$(kubectl-ichor __completeNoDesc credentials '' | sed '$d' | line_set)" "$want_clusters"
first=${clusters%% *}
expect_eq "a cluster by its prefix" "$(kubectl-ichor __completeNoDesc trustcheck --cluster="${first:0:2}" | sed '$d' | line_set)" \
  "$(sorted $(tr ' ' '\n' <<< "$clusters" | grep "^${first:0:2}"))"
# The API gone quiet: a kubeconfig at a loopback port that never answers TLS, within the bound.
python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8); print(s.getsockname()[1], flush=True); time.sleep(30)' > "$tmp/port" &
quiet=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
sed "s#server: .*#server: https://127.0.0.1:$(cat "$tmp/port")#" "$KUBECONFIG" > "$tmp/quiet-kubeconfig"
start=$(date +%s%N)
expect_eq "a silent API: nothing" "$(KUBECONFIG=$tmp/quiet-kubeconfig kubectl-ichor __completeNoDesc hold --cluster '' | one_line)" ":4 "
ms=$((($(date +%s%N) - start) / 1000000))
kill "$quiet" 2> /dev/null
[ "$ms" -lt 3500 ] && pass "a silent API: given up after ${ms} ms" || fail "a silent API held completion for $ms ms"

# Each shell.
for sh in bash zsh fish; do
  expect_eq "$sh: --cluster" "$(comp_$sh 'kubectl-ichor hold release --cluster ' | line_set)" "$want_clusters"
  expect_eq "$sh: --talos-context" "$(comp_$sh "kubectl-ichor adopt --talosconfig $TC --talos-context " | line_set)" "prod "
  expect_eq "$sh: --add-machine from the talosconfig" "$(comp_$sh "kubectl-ichor adopt --talosconfig $TC --add-machine " | line_set)" "$want_ep"
done

# kubectl's plugin completion, the krew way.
kubectl_dir=$(dirname "$(command -v kubectl)")
mkdir "$tmp/krew-bin"
ln -s "$ICHOR_BIN/kubectl-ichor" "$tmp/krew-bin/kubectl-ichor"
path=$tmp/krew-bin:$kubectl_dir:/usr/bin:/bin
run noshim env PATH="$path" kubectl __complete ichor hold ''
expect_eq "kubectl without the shim: no candidate" "$(grep -v '^:' "$OUT/noshim.out" | one_line)" ""
# As the README says: the shim beside krew's link.
env PATH="$path" kubectl ichor completion kubectl-shim > "$tmp/krew-bin/kubectl_complete-ichor" &&
  chmod +x "$tmp/krew-bin/kubectl_complete-ichor"
expect_eq "the shim written by kubectl ichor is completions/kubectl_complete-ichor" \
  "$(cat "$tmp/krew-bin/kubectl_complete-ichor")" "$(cat "$ICHOR_ROOT/completions/kubectl_complete-ichor")"
kc() { env PATH="$path" kubectl __complete ichor "$@" 2> /dev/null; }
expect_eq "kubectl: the verbs" "$(kc '' | sed '$d' | cut -f1 | line_set)" \
  "$(sorted adopt inspect trustcheck drift hold reclaim credentials completion discovery)"
expect_eq "kubectl: hold's actions" "$(kc hold '' | cut -f1 | one_line)" "apply release abort :4 "
expect_eq "kubectl: every flag of adopt --help" "$(kc adopt -- | sed '$d' | cut -f1 | line_set)" "$(help_flags adopt)"
expect_eq "kubectl: --cluster from the API" "$(kc hold abort --cluster '' | sed '$d' | cut -f1 | line_set)" "$want_clusters"
expect_eq "kubectl: -o" "$(kc inspect -o '' | sed '$d' | cut -f1 | one_line)" "yaml json table objects "
expect_eq "kubectl: --talos-context" "$(kc reclaim --talosconfig "$TC" --talos-context '' | sed '$d' | cut -f1 | one_line)" "prod "
expect_eq "kubectl: -f: files (directive 0)" "$(kc hold apply -f '' | tail -1)" ":0"

# The cmake --install layout: every verb's binary on PATH, so kubectl asks for
# kubectl_complete-ichor-VERB; the install puts the shim there under each name.
prefix=$tmp/prefix
mkdir -p "$prefix/bin"
cp -s "$ICHOR_BIN"/kubectl-ichor "$ICHOR_BIN"/kubectl-ichor-* "$prefix/bin/" 2> /dev/null
cp "$ICHOR_ROOT/completions/kubectl_complete-ichor" "$prefix/bin/"
ipath=$prefix/bin:$kubectl_dir:/usr/bin:/bin
expect_eq "install layout, kubectl_complete-ichor alone: nothing for a verb" \
  "$(env PATH="$ipath" kubectl __complete ichor hold '' 2> /dev/null | grep -v '^:' | one_line)" ""
for v in adopt inspect trustcheck drift hold reclaim credentials; do
  cp "$ICHOR_ROOT/completions/kubectl_complete-ichor" "$prefix/bin/kubectl_complete-ichor-$v"
done
expect_eq "install layout: kubectl asks kubectl_complete-ichor-hold" \
  "$(env PATH="$ipath" kubectl __complete ichor hold '' 2> /dev/null | cut -f1 | one_line)" "apply release abort :4 "
expect_eq "install layout: --cluster" \
  "$(env PATH="$ipath" kubectl __complete ichor drift --cluster '' 2> /dev/null | sed '$d' | cut -f1 | line_set)" "$want_clusters"

# kubectl's own bash completion over the chain: `kubectl ichor hold <TAB>` in bash.
out=$(env PATH="$path" bash --norc --noprofile -c '
  . /usr/share/bash-completion/bash_completion
  source <(kubectl completion bash)
  COMP_LINE="kubectl ichor hold release --cluster " COMP_POINT=${#COMP_LINE} COMP_TYPE=37
  COMP_WORDS=(kubectl ichor hold release --cluster "") COMP_CWORD=5
  __start_kubectl
  printf "%s\n" "${COMPREPLY[@]}"' 2> /dev/null)
expect_eq "bash over kubectl's script: kubectl ichor hold release --cluster" "$(line_set <<< "$out")" "$want_clusters"
out=$(env PATH="$path" bash --norc --noprofile -c '
  . /usr/share/bash-completion/bash_completion
  source <(kubectl completion bash)
  COMP_LINE="kubectl ichor hold " COMP_POINT=${#COMP_LINE} COMP_TYPE=37
  COMP_WORDS=(kubectl ichor hold "") COMP_CWORD=3
  __start_kubectl
  printf "%s\n" "${COMPREPLY[@]}"' 2> /dev/null)
expect_eq "bash over kubectl's script: kubectl ichor hold" "$(line_set <<< "$out")" "$(sorted apply release abort)"
finish
