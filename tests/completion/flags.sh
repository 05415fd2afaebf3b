#!/usr/bin/env bash
# A verb's completion is its flags: every long flag the Flags table of `kubectl ichor VERB --help`
# lists is offered by `kubectl-ichor __complete VERB --`, and nothing else; the verb's binary
# answers the same when asked directly, on stdout only, exit 0. Then exact candidates and
# directives for the values its --help says it takes (-o, -f, --cluster, the talosconfig's
# contexts and nodes, positional arguments).
#   flags.sh BIN_DIR VERB
. "$(dirname "$0")/../install/lib.sh"
. "$(dirname "$0")/lib.sh"
export PATH=$(cd "$1" && pwd):$PATH
verb=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$COMP_OPTS"' EXIT
# No API and no talosconfig unless a case gives one.
export KUBECONFIG=$tmp/no-kubeconfig HOME=$tmp TALOSCONFIG=
write_talosconfig "$tmp/talosconfig"
ask() { kubectl-ichor __completeNoDesc "$verb" "$@"; }
one_line() { tr '\n' ' '; }

want=$(help_flags "$verb")
n=$(wc -w <<< "$want")
[ "$n" -ge 5 ] && pass "$verb --help lists $n long flags" || fail "$verb --help: only $n long flags read"
kubectl-ichor __complete "$verb" -- > "$tmp/out" 2> "$tmp/err"
expect_eq "__complete $verb --: exit 0" "$?" 0
expect_eq "__complete $verb --: nothing on stderr" "$(cat "$tmp/err")" ""
expect_eq "__complete $verb --: directive 4 (no file completion)" "$(tail -1 "$tmp/out")" ":4"
expect_eq "__complete $verb --: every flag of --help, and no other" "$(sed '$d' "$tmp/out" | cut -f1 | line_set)" "$want"
expect_eq "__complete $verb --: each with its description" "$(sed '$d' "$tmp/out" | grep -cv $'\t.')" 0
expect_eq "kubectl-ichor-$verb __complete answers the same" "$(kubectl-ichor-"$verb" __complete -- 2>&1)" "$(cat "$tmp/out")"
expect_eq "__completeNoDesc: values alone" "$(ask -- | grep -c $'\t')" 0
# A short flag is offered beside its long one.
help=$(kubectl-ichor "$verb" --help)
for s in -o -f -n; do
  if grep -qE -- "^ +$s, --" <<< "$help"; then
    expect_contains "__complete $verb -: $s" " $(ask - | one_line)" " $s "
  fi
done

if grep -q -- '--output FORMAT' <<< "$help"; then
  expect_eq "-o: the formats" "$(ask -o '' | one_line)" "yaml json table objects :4 "
  expect_eq "--output=j: json" "$(ask --output=j | one_line)" "json :4 "
fi
if grep -q -- '--filename FILE' <<< "$help"; then
  expect_eq "-f: the shell's files (directive 0)" "$(ask -f '' | one_line)" ":0 "
fi
if grep -q -- '--cluster NAME' <<< "$help"; then
  start=$(date +%s%N)
  expect_eq "--cluster without an API: nothing" "$(ask --cluster '' | one_line)" ":4 "
  ms=$((($(date +%s%N) - start) / 1000000))
  [ "$ms" -lt 1000 ] && pass "--cluster without a kubeconfig answers at once (${ms} ms)" || fail "--cluster took $ms ms"
fi
ctx=
grep -q -- '--talos-context NAME' <<< "$help" && ctx=--talos-context
grep -q -- '--context NAME' <<< "$help" && ! grep -q -- '--kubeconfig' <<< "$help" && ctx=--context
if [ -n "$ctx" ]; then
  expect_eq "$ctx: the talosconfig's contexts" "$(ask --talosconfig "$tmp/talosconfig" "$ctx" '' | one_line)" "prod staging :4 "
  expect_eq "$ctx: from \$TALOSCONFIG" "$(TALOSCONFIG=$tmp/talosconfig ask "$ctx" st | one_line)" "staging :4 "
fi

case $verb in
  hold)
    expect_eq "hold: the actions" "$(ask '' | one_line)" "apply release abort :4 "
    expect_eq "hold: only the first argument is an action" "$(ask apply '' | one_line)" ":4 "
    expect_eq "hold --backup-dir: directories (16)" "$(ask --backup-dir '' | one_line)" ":16 " ;;
  inspect | reclaim)
    expect_eq "$verb ADDRESS: the current context's nodes" "$(ask --talosconfig "$tmp/talosconfig" '' | one_line)" "127.0.0.21 127.0.0.22:50001 :4 "
    expect_eq "$verb ADDRESS: the chosen context's endpoints" "$(ask --talosconfig "$tmp/talosconfig" "$ctx" staging 127 | one_line)" "127.0.1.11 :4 " ;;
  adopt)
    expect_eq "adopt --add-machine: nodes" "$(TALOSCONFIG=$tmp/talosconfig ask --add-machine 127.0.0.2 | one_line)" "127.0.0.21 127.0.0.22:50001 :4 "
    expect_eq "adopt --recover-from: nodes" "$(TALOSCONFIG=$tmp/talosconfig ask --recover-from '' | one_line)" "127.0.0.21 127.0.0.22:50001 :4 "
    expect_eq "adopt --keep-stages: directories" "$(ask --keep-stages '' | one_line)" ":16 " ;;
  credentials)
    expect_eq "credentials --output-file: files" "$(ask --output-file '' | one_line)" ":0 "
    expect_eq "credentials --ttl: nothing" "$(ask --ttl '' | one_line)" ":4 " ;;
esac
# After --help, nothing: a completion never runs the tool.
expect_eq "after --help: nothing" "$(ask --help '' | one_line)" ":4 "
finish
