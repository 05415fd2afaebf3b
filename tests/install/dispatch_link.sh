#!/usr/bin/env bash
# The dispatcher finds its verbs next to its own file (/proc/self/exe), not next to the link it
# was started through and not on PATH: krew links only kubectl-ichor into KREW_ROOT/bin, a link
# to the install directory that holds the verbs (tests/e2e/krew.sh does it with krew itself).
#   dispatch_link.sh BIN_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# An absolute link alone in a directory on PATH, as krew makes it; and a relative link to it.
mkdir "$tmp/links" "$tmp/more"
ln -s "$bin/kubectl-ichor" "$tmp/links/kubectl-ichor"
ln -s ../links/kubectl-ichor "$tmp/more/kubectl-ichor"
out=$(PATH=$tmp/links:/usr/bin:/bin kubectl-ichor inspect --version 2>&1)
expect_eq "through a link on PATH: exit 0" "$?" 0
expect_contains "through a link on PATH: the verb ran" "$out" "kubectl-ichor-inspect "
out=$(cd "$tmp/more" && ./kubectl-ichor drift --version 2>&1)
expect_contains "through a relative link to a link: the verb ran" "$out" "kubectl-ichor-drift "
expect_eq "through a link: every verb found" "$("$tmp/links/kubectl-ichor" --help | grep -c '(not installed)')" 0

# A copy of the dispatcher without its siblings fails, even with them on PATH: it looks only
# next to itself.
mkdir "$tmp/alone"
cp "$bin/kubectl-ichor" "$tmp/alone/"
out=$(PATH=$bin:/usr/bin:/bin "$tmp/alone/kubectl-ichor" inspect --version 2>&1)
expect_eq "a dispatcher alone: exit 3" "$?" 3
expect_contains "a dispatcher alone: names the missing binary" "$out" "$tmp/alone/kubectl-ichor-inspect is not installed next to kubectl-ichor"
finish
