// The scripts of `kubectl-ichor completion SHELL`. They hold no flag, verb or value: each asks
// `kubectl-ichor __complete ARGS... WORD` (cobra's protocol, cli/complete.h) and shows what it
// answers, honouring the directive as cobra's own scripts do (error: nothing; no-file: no file
// completion when there is no candidate; filter-dirs: directories; default: files when there is
// no candidate).
#include "common/cli/complete.h"

namespace ichor::cli {

namespace {

constexpr std::string_view k_bash =
    R"ICHOR(# bash completion for kubectl-ichor, written by `kubectl-ichor completion bash`.
# Load it from ~/.bashrc:  source <(kubectl-ichor completion bash)
# Every answer comes from `kubectl-ichor __complete ARGS... WORD` (cobra's protocol: a candidate
# per line, VALUE<TAB>DESCRIPTION, then :DIRECTIVE). For `kubectl ichor ...`, kubectl's own
# completion runs kubectl_complete-ichor instead (`kubectl-ichor completion kubectl-shim`).

__kubectl_ichor_complete() {
    local cur words cword out directive line value desc tab=$'\t' i longest=0
    local -a matches=()
    COMPREPLY=()
    # The words up to the cursor, with '=' and ':' kept inside a word (COMP_WORDBREAKS splits
    # them): bash-completion's reader when it is loaded, else the line itself.
    if declare -F _get_comp_words_by_ref > /dev/null 2>&1; then
        _get_comp_words_by_ref -n =: cur words cword
        words=("${words[@]:0:cword}" "$cur")
    else
        line=${COMP_LINE:0:COMP_POINT}
        read -ra words <<< "$line"
        if [[ -z $line || $line == *[[:space:]] ]]; then
            words+=("")
        fi
    fi
    cur=${words[${#words[@]}-1]}
    for ((i = 1; i < ${#words[@]}; i++)); do
        if [[ ${words[i]} == "~/"* ]]; then
            words[i]=$HOME/${words[i]#"~/"}
        fi
    done

    out=$("${words[0]}" __complete "${words[@]:1}" 2> /dev/null) || return
    directive=${out##*:}
    out=${out%:*}
    [[ $directive =~ ^[0-9]+$ ]] || directive=0
    if ((directive & 1)); then
        return
    fi
    if ((directive & 2)); then
        compopt -o nospace 2> /dev/null
    fi
    if ((directive & 32)); then
        compopt -o nosort 2> /dev/null
    fi
    if ((directive & 4)); then
        compopt +o default 2> /dev/null
    fi
    # --flag=VALUE: readline replaces only what follows the '='.
    if [[ $cur == -*=* ]]; then
        cur=${cur#*=}
    fi
    if ((directive & 24)); then
        compopt -o filenames 2> /dev/null
        if ((directive & 16)); then
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return
    fi

    while IFS= read -r line; do
        value=${line%%"$tab"*}
        if [[ -n $value && $value == "$cur"* ]]; then
            matches+=("$line")
            ((${#value} > longest)) && longest=${#value}
        fi
    done <<< "$out"
    if ((${#matches[@]} == 1)) || [[ ${COMP_TYPE:-9} == 37 || ${COMP_TYPE:-9} == 42 ]]; then
        # One candidate, or candidates inserted as they are: values alone.
        for line in "${matches[@]}"; do
            COMPREPLY+=("${line%%"$tab"*}")
        done
        if ((${#COMPREPLY[@]} == 1)); then
            printf -v 'COMPREPLY[0]' %q "${COMPREPLY[0]}"
        fi
    else
        # A list to show: each value padded, then its description cut to the terminal's width.
        for line in "${matches[@]}"; do
            value=${line%%"$tab"*}
            if [[ $line == *"$tab"* ]]; then
                desc=${line#*"$tab"}
                i=$((${COLUMNS:-80} - longest - 4))
                if ((i > 8 && ${#desc} > i)); then
                    desc=${desc:0:i-1}…
                fi
                printf -v value '%-*s  (%s)' "$longest" "$value" "$desc"
            fi
            COMPREPLY+=("$value")
        done
    fi
    # A value with ':' (os:admin, host:port): readline replaces only what follows the last ':'.
    if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
        line=${cur%"${cur##*:}"}
        COMPREPLY=("${COMPREPLY[@]#"$line"}")
    fi
}

complete -o default -F __kubectl_ichor_complete kubectl-ichor
)ICHOR";

constexpr std::string_view k_zsh = R"ICHOR(#compdef kubectl-ichor
# zsh completion for kubectl-ichor, written by `kubectl-ichor completion zsh`.
# Load it from ~/.zshrc after compinit:  source <(kubectl-ichor completion zsh)
# or save it as _kubectl-ichor in a directory of $fpath. Every answer comes from
# `kubectl-ichor __complete ARGS... WORD` (cobra's protocol: a candidate per line,
# VALUE<TAB>DESCRIPTION, then :DIRECTIVE).
compdef _kubectl_ichor kubectl-ichor

_kubectl_ichor() {
    local out directive cur line value tab=$'\t'
    local -a args lines comps opts
    args=("${(@Q)words[1,CURRENT]}")
    cur=${args[-1]}
    args=("${(@)args/#\~\//$HOME/}")
    out=$("${args[1]}" __complete "${(@)args[2,-1]}" 2> /dev/null) || return 1
    lines=("${(@f)out}")
    directive=0
    if [[ ${lines[-1]} == :<-> ]]; then
        directive=${lines[-1]#:}
        lines=("${(@)lines[1,-2]}")
    fi
    (( directive & 1 )) && return 1
    # --flag=VALUE: the candidates are values; the flag stays on the line.
    [[ $cur == -*=* ]] && compset -P '*='
    if (( directive & 16 )); then
        _files -/
        return
    fi
    if (( directive & 8 )); then
        _files
        return
    fi
    for line in "${lines[@]}"; do
        [[ -z $line ]] && continue
        value=${line%%$tab*}
        value=${value//:/\\:}
        if [[ $line == *$tab* ]]; then
            comps+=("$value:${line#*$tab}")
        else
            comps+=("$value")
        fi
    done
    (( directive & 2 )) && opts+=(-S '')
    if (( ${#comps} )); then
        if (( directive & 32 )); then
            _describe -V kubectl-ichor comps "${opts[@]}" && return 0
        else
            _describe kubectl-ichor comps "${opts[@]}" && return 0
        fi
    fi
    (( directive & 4 )) && return 1
    _files
}

# Autoloaded from $fpath, the file's body runs as the function _kubectl-ichor: complete now.
if [[ $funcstack[1] == _kubectl-ichor ]]; then
    _kubectl_ichor "$@"
fi
)ICHOR";

constexpr std::string_view k_fish =
    R"ICHOR(# fish completion for kubectl-ichor, written by `kubectl-ichor completion fish`.
# Load it with:  kubectl-ichor completion fish | source
# or save it as ~/.config/fish/completions/kubectl-ichor.fish. Every answer comes from
# `kubectl-ichor __complete ARGS... WORD` (cobra's protocol: a candidate per line,
# VALUE<TAB>DESCRIPTION, then :DIRECTIVE).

# Sets __kubectl_ichor_results; false when fish should complete files instead.
function __kubectl_ichor_prepare
    set -g __kubectl_ichor_results
    set -l args (commandline -opc)
    set -l cur (commandline -ct)
    set -l out ($args[1] __complete $args[2..-1] "$cur" 2> /dev/null)
    or return 1
    set -l directive 0
    if string match -qr '^:[0-9]+$' -- "$out[-1]"
        set directive (string sub --start 2 -- $out[-1])
        set -e out[-1]
    end
    if test (math (math --scale 0 $directive / 1) % 2) -eq 1
        return 1
    end
    if test (math (math --scale 0 $directive / 16) % 2) -eq 1
        set -g __kubectl_ichor_results (__fish_complete_directories "$cur")
        return 0
    end
    if test (math (math --scale 0 $directive / 8) % 2) -eq 1
        return 1
    end
    # --flag=VALUE: fish replaces the whole token, so the flag goes before each value.
    set -l prefix (string match -r -- '^-[^=]*=' "$cur")
    for line in $out
        test -n "$line"; and set -a __kubectl_ichor_results "$prefix$line"
    end
    if test (count $__kubectl_ichor_results) -eq 0
        and test (math (math --scale 0 $directive / 4) % 2) -eq 0
        return 1
    end
    return 0
end

complete -c kubectl-ichor -e
complete -c kubectl-ichor -f -n __kubectl_ichor_prepare -a '$__kubectl_ichor_results'
)ICHOR";

constexpr std::string_view k_shim = R"ICHOR(#!/bin/sh
# kubectl_complete-ichor: shell completion of `kubectl ichor ...`. kubectl (1.26 and later) runs
# kubectl_complete-<plugin> from PATH with the words typed after the plugin's name; every answer
# comes from the installed kubectl-ichor itself (`kubectl-ichor __complete`, cobra's protocol).
# Written by `kubectl ichor completion kubectl-shim`. Under the name kubectl_complete-ichor-VERB
# it completes that verb: kubectl asks for that name when kubectl-ichor-VERB is on PATH itself.
name=${0##*/}
verb=${name#kubectl_complete-ichor}
exec kubectl-ichor __complete ${verb:+"${verb#-}"} "$@"
)ICHOR";

} // namespace

const std::vector<std::string_view>& completion_shells() {
    static const std::vector<std::string_view> k_shells = {"bash", "zsh", "fish", "kubectl-shim"};
    return k_shells;
}

std::string_view completion_script(std::string_view shell) {
    if (shell == "bash") {
        return k_bash;
    }
    if (shell == "zsh") {
        return k_zsh;
    }
    if (shell == "fish") {
        return k_fish;
    }
    if (shell == "kubectl-shim") {
        return k_shim;
    }
    return {};
}

} // namespace ichor::cli
