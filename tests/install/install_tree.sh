#!/usr/bin/env bash
# `cmake --install BUILD --prefix TMP` installs the eight executables into TMP/bin and their man
# pages into TMP/share/man/man1, and what it installs works from there: each tool answers
# --version, the dispatcher finds its verbs next to itself, man(1) finds a page by name.
#   install_tree.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
build=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" > "$tmp/log" 2>&1
expect_eq "cmake --install: exit 0" "$?" 0
expect_eq "8 binaries in bin" "$(ls "$prefix/bin" | LC_ALL=C sort | tr '\n' ' ')" "$ICHOR_TOOLS "
pages=$(for t in $ICHOR_TOOLS; do echo "$t.1"; done | LC_ALL=C sort | tr '\n' ' ')
expect_eq "8 pages in share/man/man1" "$(ls "$prefix/share/man/man1" | LC_ALL=C sort | tr '\n' ' ')" "$pages"
expect_eq "nothing else installed" "$(cd "$prefix" && find . -type f | grep -cvE '^\./(bin/kubectl-ichor[a-z-]*|share/man/man1/kubectl-ichor[a-z-]*\.1)$')" 0

for t in $ICHOR_TOOLS; do
  v=$("$prefix/bin/$t" --version 2>&1)
  expect_contains "$t --version runs from the prefix" "$v" "$t "
done
# The dispatcher runs the installed sibling, not the one in the build tree.
v=$(PATH=/usr/bin:/bin "$prefix/bin/kubectl-ichor" inspect --version 2>&1)
expect_contains "kubectl-ichor inspect runs from the prefix" "$v" "kubectl-ichor-inspect "
expect_eq "every verb installed" "$("$prefix/bin/kubectl-ichor" --help | grep -c '(not installed)')" 0
if command -v man > /dev/null; then
  expect_eq "man finds the page by name" "$(MANPATH=$prefix/share/man man -w kubectl-ichor-adopt 2>&1)" \
    "$prefix/share/man/man1/kubectl-ichor-adopt.1"
fi
finish
