#!/usr/bin/env bash
# The plugin as krew installs it (README.md, "Install"). scripts/release packages the build; krew's own
# validate-krew-manifest accepts the manifest: its structure, its platforms, and an install of
# each platform from the manifest's uri (a loopback HTTP server here) that must extract a
# LICENSE; `kubectl krew install --manifest --archive` installs it offline into a private
# KREW_ROOT; and `kubectl ichor adopt --plan` runs on the lab through krew's one link, with PATH
# holding only KREW_ROOT/bin and the system's directories. krew is built from its Go module
# (tests/krew/build, cached in .cache/krew-bin); the lab is only read.
. "$(dirname "$0")/lib.sh"
build=$(cd "$ICHOR_BIN/.." && pwd)
kbin=${ICHOR_KREW_BIN:-$ICHOR_ROOT/.cache/krew-bin}
TC=$(talosconfig prod)
W2=$(node_addr prod-w-2)
tmp=$(mktemp -d)
server=
cleanup() { [ -z "$server" ] || kill "$server" 2> /dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

if ! "$ICHOR_ROOT/tests/krew/build" > "$OUT/krew-build.log" 2>&1; then
  fail "tests/krew/build: $(tail -5 "$OUT/krew-build.log")"
  finish
fi
# `kubectl krew` is kubectl-krew on PATH, in a directory of its own (not KREW_ROOT/bin).
mkdir "$tmp/krew-path" "$tmp/dist"
ln -s "$kbin/krew" "$tmp/krew-path/kubectl-krew"
kubectl_dir=$(dirname "$(command -v kubectl)")
system=$kubectl_dir:/usr/local/bin:/usr/bin:/bin
krew_env=(KREW_NO_UPGRADE_CHECK=1 KREW_OS=linux KREW_ARCH=amd64 PATH="$tmp/krew-path:$system")

# The manifest's uri: the archive served on loopback, for validate-krew-manifest's install.
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$tmp/dist" > "$tmp/http.log" 2>&1 &
server=$!
port=
for _ in $(seq 50); do
  port=$(sed -n 's/^Serving HTTP on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$tmp/http.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { fail "no loopback HTTP server: $(cat "$tmp/http.log")"; finish; }

# The release, from the build the other tests use.
run release "$ICHOR_ROOT/scripts/release" --build-dir "$build" --out "$tmp/dist" --no-build \
  --url-base "http://127.0.0.1:$port"
expect_eq "release: exit 0" "$(rc release)" 0
manifest=$tmp/dist/plugins/ichor.yaml
version=$(sed -n 's/^project([^)]*VERSION \([0-9][0-9.]*\).*/\1/p' "$ICHOR_ROOT/CMakeLists.txt")
archive=$tmp/dist/ichor-v$version-linux-amd64.tar.gz
cp "$manifest" "$OUT/ichor.yaml" 2> /dev/null
expect_eq "manifest: the version of CMakeLists.txt" "$(sed -n 's/^  version: //p' "$manifest")" "v$version"
expect_eq "manifest: the archive's sha256" "$(sed -n 's/^    sha256: //p' "$manifest")" "$(sha256sum "$archive" | cut -d' ' -f1)"
expect_eq "manifest: bin" "$(sed -n 's/^    bin: //p' "$manifest")" kubectl-ichor
want="LICENSE README.md kubectl-ichor kubectl-ichor-adopt kubectl-ichor-credentials kubectl-ichor-discovery kubectl-ichor-drift kubectl-ichor-hold kubectl-ichor-inspect kubectl-ichor-reclaim kubectl-ichor-trustcheck "
expect_eq "archive: the eight binaries, LICENSE, README" "$(tar -tzf "$archive" | LC_ALL=C sort | tr '\n' ' ')" "$want"

# krew's validation, all of it (without -skip-install: it installs from the uri).
run validate env -u KREW_ROOT "${krew_env[@]}" "$kbin/validate-krew-manifest" -manifest "$manifest"
expect_eq "validate-krew-manifest: exit 0" "$(rc validate)" 0
expect_contains "validate-krew-manifest: installed" "$(err validate)" "all 1 spec.platforms installed fine"
# The check bites: the same manifest without the LICENSE copied is refused.
mkdir "$tmp/nolicense"
sed '/- from: LICENSE/,+1d' "$manifest" > "$tmp/nolicense/ichor.yaml"
run validate-nolicense env -u KREW_ROOT "${krew_env[@]}" "$kbin/validate-krew-manifest" -manifest "$tmp/nolicense/ichor.yaml"
expect_eq "validate-krew-manifest without LICENSE: refused" "$([ "$(rc validate-nolicense)" -ne 0 ] && echo refused)" refused
expect_contains "validate-krew-manifest without LICENSE: says so" "$(err validate-nolicense)" "could not find license file"
kill "$server"; wait "$server" 2> /dev/null; server=   # what follows is offline

# The install: --manifest and --archive, nothing fetched.
root=$tmp/krew-root
run install env KREW_ROOT="$root" "${krew_env[@]}" kubectl krew install --manifest="$manifest" --archive="$archive"
expect_eq "krew install: exit 0" "$(rc install)" 0
expect_contains "krew install: installed" "$(out install; err install)" 'Installed plugin: ichor'
expect_eq "KREW_ROOT/bin holds the one link" "$(ls "$root/bin" | tr '\n' ' ')" "kubectl-ichor "
store=$root/store/ichor/v$version
expect_eq "the link points into the store" "$(readlink -f "$root/bin/kubectl-ichor")" "$store/kubectl-ichor"
expect_eq "the store: the archive's files" "$(ls "$store" | LC_ALL=C sort | tr '\n' ' ')" "$want"
# list and uninstall want a local plugin index (a git clone); an empty one keeps them offline.
git init -q "$root/index/default"
run list env KREW_ROOT="$root" "${krew_env[@]}" kubectl krew list
expect_eq "krew list: ichor, from no index" "$(out list)" detached/ichor

# Through krew's link: PATH is KREW_ROOT/bin and the system's directories, no build/bin.
path=$root/bin:$system
run plugins env PATH="$path" kubectl plugin list --name-only
expect_eq "kubectl sees the one plugin" "$(grep '^kubectl-ichor' "$OUT/plugins.out" | tr '\n' ' ')" "kubectl-ichor "
run verbs env PATH="$path" kubectl ichor --help
expect_eq "kubectl ichor --help: exit 0" "$(rc verbs)" 0
expect_eq "kubectl ichor --help: every verb installed" "$(grep -c '(not installed)' "$OUT/verbs.out")" 0
run plan env PATH="$path" kubectl ichor adopt --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json
expect_eq "kubectl ichor adopt --plan through the link: exit 0" "$(rc plan)" 0
expect_eq "the plan inspected the node" "$(out plan | jq -r --arg a "$W2" '[.items[] | select(.kind == "Inspection") | .spec.address] | index($a) != null')" true
# The same plan as the build's binary gives (timings aside: they are measured).
run direct "$ICHOR_BIN/kubectl-ichor-adopt" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan -o json
norm() { jq -S 'del(.items[].status.timings)' "$OUT/$1.out"; }
if diff <(norm plan) <(norm direct) > "$OUT/same.diff"; then
  pass "through the link: the same plan as build/bin"
else
  fail "through the link, the plan differs: $(head -c 600 "$OUT/same.diff")"
fi

run uninstall env KREW_ROOT="$root" "${krew_env[@]}" kubectl krew uninstall ichor
expect_eq "krew uninstall: exit 0" "$(rc uninstall)" 0
expect_eq "krew uninstall: the link is gone" "$(ls "$root/bin" | wc -l)" 0
finish
