#!/usr/bin/env bash
# The scripts of `kubectl-ichor completion bash|zsh|fish`, each loaded into its shell and asked
# to complete lines as the shell would (tests/completion/lib.sh): verbs, flags (every flag of a
# verb's --help), values, `--flag=VALUE`, host:port values, files and directories as the
# directive says, descriptions. bash is asked twice: with its own word reader and with
# bash-completion's.
#   shells.sh BIN_DIR
. "$(dirname "$0")/../install/lib.sh"
. "$(dirname "$0")/lib.sh"
export PATH=$(cd "$1" && pwd):$PATH
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$COMP_OPTS"' EXIT
export KUBECONFIG=$tmp/no-kubeconfig HOME=$tmp TALOSCONFIG=$tmp/talosconfig
write_talosconfig "$TALOSCONFIG"
mkdir "$tmp/work" "$tmp/work/backups"
touch "$tmp/work/plan.yaml"
cd "$tmp/work" || exit 1
verbs=$(sorted adopt inspect trustcheck drift hold reclaim credentials discovery completion)

shells=()
for s in bash zsh fish; do
  if command -v "$s" > /dev/null; then shells+=("$s"); else fail "$s is not installed (scripts/setup installs it)"; fi
done
[ -r /usr/share/bash-completion/bash_completion ] && shells+=(bash-completion) || fail "bash-completion is not installed (scripts/setup installs it)"

for sh in "${shells[@]}"; do
  c() { # c LINE: the candidates, as a sorted set
    case $sh in
      bash) comp_bash "$1" | line_set ;;
      bash-completion) COMP_BASH_COMPLETION=1 comp_bash "$1" | line_set ;;
      zsh) comp_zsh "$1" | line_set ;;
      fish) comp_fish "$1" | line_set ;;
    esac
  }
  expect_eq "$sh: the verbs" "$(c 'kubectl-ichor ')" "$verbs"
  expect_eq "$sh: a verb by its prefix" "$(c 'kubectl-ichor ho')" "hold "
  expect_eq "$sh: hold's actions" "$(c 'kubectl-ichor hold ')" "$(sorted apply release abort)"
  expect_eq "$sh: discovery's action" "$(c 'kubectl-ichor discovery ')" "add "
  expect_eq "$sh: completion's shells" "$(c 'kubectl-ichor completion ')" "$(sorted bash zsh fish kubectl-shim)"
  expect_eq "$sh: adopt's flags, all of --help" "$(c 'kubectl-ichor adopt --')" "$(help_flags adopt)"
  expect_eq "$sh: a flag by its prefix" "$(c 'kubectl-ichor hold --ti')" "--timeout "
  expect_eq "$sh: -o's values" "$(c 'kubectl-ichor inspect -o ')" "$(sorted yaml json table objects)"
  # fish replaces the whole token, so its candidates keep the flag; bash and zsh keep it on the
  # line and complete what follows the '='.
  eq=; [ "$sh" = fish ] && eq=--output=
  expect_eq "$sh: --output=" "$(c 'kubectl-ichor drift --output=')" "$(sorted ${eq}yaml ${eq}json ${eq}table ${eq}objects)"
  expect_eq "$sh: --output=y" "$(c 'kubectl-ichor drift --output=y')" "${eq}yaml "
  expect_eq "$sh: the talosconfig's contexts" "$(c 'kubectl-ichor inspect --context ')" "$(sorted prod staging)"
  expect_eq "$sh: the context's nodes" "$(c 'kubectl-ichor inspect --context prod ')" "$(sorted 127.0.0.21 127.0.0.22:50001)"
  # bash's word breaks at ':': readline replaces what follows the last ':'.
  port=127.0.0.22:50001; [[ $sh == bash* ]] && port=50001
  expect_eq "$sh: a host:port node" "$(c 'kubectl-ichor inspect 127.0.0.22:')" "$port "
  expect_eq "$sh: a node for --add-machine" "$(c 'kubectl-ichor adopt --add-machine 127.0.0.2')" "$(sorted 127.0.0.21 127.0.0.22:50001)"
  # Values the shell completes: bash leaves them to readline (complete -o default), which it
  # does when the script did not turn default off.
  case $sh in
    bash*)
      expect_eq "$sh: -f: no candidate" "$(c 'kubectl-ichor hold -f ')" ""
      expect_eq "$sh: -f: file completion left on" "$(grep -c '+o default' "$COMP_OPTS")" 0
      expect_eq "$sh: --timeout: nothing" "$(c 'kubectl-ichor hold --timeout ')" ""
      expect_eq "$sh: --timeout: file completion off" "$(cat "$COMP_OPTS")" "+o default"
      expect_eq "$sh: --backup-dir: directories" "$(c 'kubectl-ichor hold --backup-dir ')" "backups " ;;
    zsh)
      expect_eq "zsh: -f: the files" "$(c 'kubectl-ichor hold -f ')" "$(sorted backups plan.yaml)"
      expect_eq "zsh: --timeout: nothing" "$(c 'kubectl-ichor hold --timeout ')" ""
      expect_eq "zsh: --backup-dir: directories" "$(c 'kubectl-ichor hold --backup-dir ')" "backups " ;;
    fish)
      expect_eq "fish: -f: the files" "$(c 'kubectl-ichor hold -f ')" "$(sorted backups/ plan.yaml)"
      expect_eq "fish: --timeout: nothing" "$(c 'kubectl-ichor hold --timeout ')" ""
      expect_eq "fish: --backup-dir: directories" "$(c 'kubectl-ichor hold --backup-dir ')" "backups/ " ;;
  esac
done

# Descriptions: bash lists them after the values on a TAB, fish beside them; cobra's variable
# turns them off.
out=$(comp_bash 'kubectl-ichor ' 9)
expect_contains "bash: a description beside each verb" "$out" "hold         (apply a plan as held machines"
expect_eq "bash: one candidate: the value alone" "$(comp_bash 'kubectl-ichor ho' 9)" "hold"
expect_eq "fish: the description" "$(COMP_FISH_DESC=1 comp_fish 'kubectl-ichor ho')" \
  "hold	apply a plan as held machines, release them after a zero-drift check, or abort"
expect_eq "fish: KUBECTL_ICHOR_COMPLETION_DESCRIPTIONS=false" \
  "$(KUBECTL_ICHOR_COMPLETION_DESCRIPTIONS=false COMP_FISH_DESC=1 comp_fish 'kubectl-ichor hold --ti')" "--timeout"
finish
