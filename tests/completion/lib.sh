# Sourced by the completion tests (tests/completion, tests/e2e/completion.sh): each shell loading
# the script `kubectl-ichor completion SHELL` prints and completing a line non-interactively, the
# way the shell itself would call it. kubectl-ichor must be on PATH.
#   comp_bash LINE [COMP_TYPE]   COMPREPLY, one per line; COMP_TYPE 37 (menu-complete, values
#                                alone) unless given (9: a TAB, descriptions shown); the script's
#                                compopt calls go to $COMP_OPTS. COMP_BASH_COMPLETION=1 loads
#                                bash-completion first (its word reader instead of the script's).
#   comp_zsh LINE                the matches zsh's completion system adds (compinit, through a
#                                zpty terminal, compadd recorded)
#   comp_fish LINE               `complete -C LINE`, values only (COMP_FISH_DESC=1: with the
#                                descriptions)
COMP_OPTS=${COMP_OPTS:-$(mktemp)}

comp_bash() {
  : > "$COMP_OPTS"
  COMP_OPTS=$COMP_OPTS bash --norc --noprofile -c '
    line=$1 type=$2
    if [ "${COMP_BASH_COMPLETION:-}" = 1 ]; then
      . /usr/share/bash-completion/bash_completion || exit 1
    fi
    source <(kubectl-ichor completion bash)
    compopt() { printf "%s\n" "$*" >> "$COMP_OPTS"; }
    # The words as bash splits them: at blanks, and around the = and : of COMP_WORDBREAKS.
    COMP_LINE=$line COMP_POINT=${#line} COMP_TYPE=$type COMP_WORDS=()
    for w in $line; do
      while [[ $w =~ ^([^=:]*)([=:])(.*)$ ]]; do
        [ -n "${BASH_REMATCH[1]}" ] && COMP_WORDS+=("${BASH_REMATCH[1]}")
        COMP_WORDS+=("${BASH_REMATCH[2]}")
        w=${BASH_REMATCH[3]}
      done
      [ -n "$w" ] && COMP_WORDS+=("$w")
    done
    [[ $line == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    __kubectl_ichor_complete
    [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"
  ' comp_bash "$1" "${2:-37}"
}

comp_zsh() {
  local cap
  cap=$(mktemp -u)
  zsh -f -c '
    zmodload zsh/zpty || exit 1
    cap=$1 line=$2
    zpty z zsh -f -i
    zpty -w z "PS1=\"> \"; autoload -Uz compinit && compinit -u -D"
    zpty -w z "source <(kubectl-ichor completion zsh)"
    # Mark the end of the completion function, and record what it adds (compadd -O: the
    # matches, without adding them twice).
    zpty -w z "functions -c _kubectl_ichor _kubectl_ichor_real"
    zpty -w z "_kubectl_ichor() { _kubectl_ichor_real \"\$@\"; local r=\$?; print ok > $cap.done; return r; }"
    zpty -w z "compadd() { if [[ \${(j: :)@} == *-[OAD]\\ * ]]; then builtin compadd \"\$@\"; return; fi; local -a h; builtin compadd -O h \"\$@\"; print -rl -- \"\${h[@]}\" >> $cap; builtin compadd \"\$@\"; }"
    zpty -w -n z "$line"$'"'"'\t'"'"'
    for i in {1..150}; do
      zpty -r -t z out 2> /dev/null
      [[ -e $cap.done ]] && break
      sleep 0.1
    done
    zpty -d z
    [[ -e $cap.done ]] || { print -u2 "zsh: the completion function did not run"; exit 1; }
    [[ -e $cap ]] && cat $cap
    exit 0
  ' comp_zsh "$cap" "$1"
  local rc=$?
  rm -f "$cap" "$cap.done"
  return $rc
}

comp_fish() {
  fish --no-config -c 'kubectl-ichor completion fish | source; complete -C $argv[1]' "$1" |
    if [ "${COMP_FISH_DESC:-}" = 1 ]; then cat; else cut -f1; fi
}

# sorted WORDS...: the words, sorted, on one line (for comparing sets).
sorted() { tr ' ' '\n' <<< "$*" | sed '/^$/d' | LC_ALL=C sort | tr '\n' ' '; }
# line_set: stdin's lines as a sorted set on one line.
line_set() { sed '/^$/d' | LC_ALL=C sort -u | tr '\n' ' '; }
# help_flags VERB: the long flags the Flags table of `kubectl-ichor VERB --help` lists.
help_flags() {
  kubectl-ichor "$1" --help | sed -n '/^Flags:$/,/^Exit status:$/p' | grep -E '^ {1,8}-' |
    sed -E 's/^ +//; s/  .*//' | grep -oE -- '--[a-z][a-z0-9-]*' | LC_ALL=C sort -u | tr '\n' ' '
}
# A talosconfig with two contexts (credentials are not read by completion).
write_talosconfig() {
  cat > "$1" << 'EOF'
context: prod
contexts:
  prod:
    endpoints: [127.0.0.11]
    nodes: [127.0.0.21, "127.0.0.22:50001"]
  staging:
    endpoints: [127.0.1.11]
EOF
}
