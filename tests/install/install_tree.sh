#!/usr/bin/env bash
# `cmake --install BUILD --prefix TMP` installs the eight executables into TMP/bin and their man
# pages into TMP/share/man/man1, and kubectl's completion shims (kubectl_complete-ichor and one
# kubectl_complete-ichor-VERB a verb) into TMP/bin; and what it installs works from there: each
# tool answers --version, the dispatcher finds its verbs next to itself, man(1) finds a page by
# name, a shim completes its verb.
#   install_tree.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
build=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" > "$tmp/log" 2>&1
expect_eq "cmake --install: exit 0" "$?" 0
expect_eq "8 binaries in bin" "$(ls "$prefix/bin" | grep -v '^kubectl_complete-' | LC_ALL=C sort | tr '\n' ' ')" "$ICHOR_TOOLS "
shims=kubectl_complete-ichor
for t in $ICHOR_TOOLS; do [ "$t" = kubectl-ichor ] || shims+=" kubectl_complete-ichor-${t#kubectl-ichor-}"; done
expect_eq "a completion shim for the plugin and each verb" "$(cd "$prefix/bin" && ls -d kubectl_complete-* | LC_ALL=C sort | tr '\n' ' ')" "$(tr ' ' '\n' <<< "$shims" | LC_ALL=C sort | tr '\n' ' ')"
pages=$(for t in $ICHOR_TOOLS; do echo "$t.1"; done | LC_ALL=C sort | tr '\n' ' ')
expect_eq "8 pages in share/man/man1" "$(ls "$prefix/share/man/man1" | LC_ALL=C sort | tr '\n' ' ')" "$pages"
expect_eq "nothing else installed" "$(cd "$prefix" && find . -type f | grep -cvE '^\./(bin/kubectl-ichor[a-z-]*|bin/kubectl_complete-ichor[a-z-]*|share/man/man1/kubectl-ichor[a-z-]*\.1)$')" 0

for t in $ICHOR_TOOLS; do
  v=$("$prefix/bin/$t" --version 2>&1)
  expect_contains "$t --version runs from the prefix" "$v" "$t "
done
# The dispatcher runs the installed sibling, not the one in the build tree.
v=$(PATH=/usr/bin:/bin "$prefix/bin/kubectl-ichor" inspect --version 2>&1)
expect_contains "kubectl-ichor inspect runs from the prefix" "$v" "kubectl-ichor-inspect "
expect_eq "every verb installed" "$("$prefix/bin/kubectl-ichor" --help | grep -c '(not installed)')" 0
# The shims ask the kubectl-ichor on PATH; one named for a verb completes that verb.
out=$(PATH=$prefix/bin:/usr/bin:/bin "$prefix/bin/kubectl_complete-ichor" ho)
expect_eq "kubectl_complete-ichor completes the verbs" "$(cut -f1 <<< "$out" | tr '\n' ' ')" "hold :4 "
out=$(PATH=$prefix/bin:/usr/bin:/bin "$prefix/bin/kubectl_complete-ichor-hold" '')
expect_eq "kubectl_complete-ichor-hold completes hold" "$(tr '\n' ' ' <<< "$out")" "apply release abort :4 "
if command -v man > /dev/null; then
  expect_eq "man finds the page by name" "$(MANPATH=$prefix/share/man man -w kubectl-ichor-adopt 2>&1)" \
    "$prefix/share/man/man1/kubectl-ichor-adopt.1"
fi
finish
