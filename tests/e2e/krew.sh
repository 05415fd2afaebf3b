#!/usr/bin/env bash
# The plugin as krew installs it (README.md, "Install"). scripts/release packages the static builds
# of every platform of ICHOR_RELEASE_PLATFORMS (build-static-ARCH/, built by scripts/setup);
# krew's own validate-krew-manifest accepts the manifest: its structure, its platforms, and an
# install of each platform from the manifest's uri (a loopback HTTP server here) that must
# extract a LICENSE; `kubectl krew install --manifest --archive` installs each platform's archive
# offline into a private KREW_ROOT, the platform selected as krew selects it (KREW_OS/KREW_ARCH,
# which stand for runtime.GOOS/GOARCH); the release's own index (OUT/index, a git repository) is
# added with `kubectl krew index add` and ichor installed from it; and `kubectl ichor adopt
# --plan` runs on the lab through krew's one link, with PATH holding only KREW_ROOT/bin and the
# system's directories (arm64: its --help under qemu-user). krew is built from its Go module
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
platforms=${ICHOR_RELEASE_PLATFORMS:-amd64 arm64}
krew_env=(KREW_NO_UPGRADE_CHECK=1 KREW_OS=linux KREW_ARCH=amd64 PATH="$tmp/krew-path:$system")
krew_arch() { # krew_arch ARCH: krew_env for that platform
  local e out=()
  for e in "${krew_env[@]}"; do [[ $e == KREW_ARCH=* ]] && out+=("KREW_ARCH=$1") || out+=("$e"); done
  printf '%s\n' "${out[@]}"
}
machine_of() { case $1 in amd64) echo X86-64 ;; arm64) echo AArch64 ;; esac; }

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

# The release, from the static builds.
run release "$ICHOR_ROOT/scripts/release" --out "$tmp/dist" --no-build --platforms "$platforms" \
  --url-base "http://127.0.0.1:$port"
expect_eq "release: exit 0" "$(rc release)" 0
manifest=$tmp/dist/plugins/ichor.yaml
version=$(sed -n 's/^project([^)]*VERSION \([0-9][0-9.]*\).*/\1/p' "$ICHOR_ROOT/CMakeLists.txt")
archive_of() { echo "$tmp/dist/ichor-v$version-linux-$1.tar.gz"; }
archive=$(archive_of amd64)
cp "$manifest" "$OUT/ichor.yaml" 2> /dev/null
expect_eq "manifest: the version of CMakeLists.txt" "$(sed -n 's/^  version: //p' "$manifest")" "v$version"
expect_eq "manifest: one platform per archive" "$(sed -n 's/^        arch: //p' "$manifest" | tr '\n' ' ')" "$platforms "
expect_eq "manifest: the archives' sha256" "$(sed -n 's/^    sha256: //p' "$manifest" | tr '\n' ' ')" \
  "$(for a in $platforms; do sha256sum "$(archive_of "$a")" | cut -d' ' -f1; done | tr '\n' ' ')"
expect_eq "manifest: bin" "$(sed -n 's/^    bin: //p' "$manifest" | sort -u)" kubectl-ichor
want="LICENSE README.md kubectl-ichor kubectl-ichor-adopt kubectl-ichor-credentials kubectl-ichor-discovery kubectl-ichor-drift kubectl-ichor-hold kubectl-ichor-inspect kubectl-ichor-reclaim kubectl-ichor-trustcheck "
for a in $platforms; do
  expect_eq "archive $a: the nine binaries, LICENSE, README" "$(tar -tzf "$(archive_of "$a")" | LC_ALL=C sort | tr '\n' ' ')" "$want"
done
nplat=$(wc -w <<< "$platforms")

# krew's validation, all of it (without -skip-install: it installs from the uri).
run validate env -u KREW_ROOT "${krew_env[@]}" "$kbin/validate-krew-manifest" -manifest "$manifest"
expect_eq "validate-krew-manifest: exit 0" "$(rc validate)" 0
expect_contains "validate-krew-manifest: installed" "$(err validate)" "all $nplat spec.platforms installed fine"
# The check bites: the same manifest without the LICENSE copied is refused.
mkdir "$tmp/nolicense"
sed '/- from: LICENSE/,+1d' "$manifest" > "$tmp/nolicense/ichor.yaml"
run validate-nolicense env -u KREW_ROOT "${krew_env[@]}" "$kbin/validate-krew-manifest" -manifest "$tmp/nolicense/ichor.yaml"
expect_eq "validate-krew-manifest without LICENSE: refused" "$([ "$(rc validate-nolicense)" -ne 0 ] && echo refused)" refused
expect_contains "validate-krew-manifest without LICENSE: says so" "$(err validate-nolicense)" "could not find license file"

# The release's index: added to krew as a user adds it, ichor installed from it (the manifest's
# uri is the loopback server's), the platform selected by krew.
for a in $platforms; do
  iroot=$tmp/index-root-$a
  mapfile -t env_a < <(krew_arch "$a")
  run "index-add-$a" env KREW_ROOT="$iroot" "${env_a[@]}" kubectl krew index add ichor "file://$tmp/dist/index"
  expect_eq "krew index add ($a): exit 0" "$(rc "index-add-$a")" 0
  run "index-install-$a" env KREW_ROOT="$iroot" "${env_a[@]}" kubectl krew install ichor/ichor
  expect_eq "krew install ichor/ichor ($a): exit 0 ($(err "index-install-$a" | tail -2))" "$(rc "index-install-$a")" 0
  expect_eq "krew install ichor/ichor ($a): the $a binaries" \
    "$(readelf -h "$iroot/store/ichor/v$version/kubectl-ichor-adopt" 2> /dev/null | grep -c "Machine:.*$(machine_of "$a")")" 1
  run "index-list-$a" env KREW_ROOT="$iroot" "${env_a[@]}" kubectl krew list
  expect_eq "krew list ($a): ichor from the ichor index" "$(out "index-list-$a")" ichor/ichor
done
kill "$server"; wait "$server" 2> /dev/null; server=   # what follows is offline

# arm64: krew takes the arm64 archive when it runs on arm64 (KREW_ARCH), and refuses to put the
# amd64 archive in its place (the manifest's sha256 of the arm64 platform).
if [[ " $platforms " == *" arm64 "* ]]; then
  aroot=$tmp/krew-root-arm64
  mapfile -t env_a < <(krew_arch arm64)
  run install-arm64 env KREW_ROOT="$aroot" "${env_a[@]}" kubectl krew install --manifest="$manifest" --archive="$(archive_of arm64)"
  expect_eq "krew install (arm64): exit 0" "$(rc install-arm64)" 0
  astore=$aroot/store/ichor/v$version
  expect_eq "krew install (arm64): the store's binaries are arm64" \
    "$(for f in "$astore"/kubectl-ichor*; do readelf -h "$f" | grep -q 'Machine:.*AArch64' && echo y; done | wc -l)" 9
  run help-arm64 qemu-aarch64-static "$aroot/bin/kubectl-ichor" --help
  expect_eq "kubectl-ichor --help (arm64, qemu-user, through the link): exit 0" "$(rc help-arm64)" 0
  expect_eq "kubectl-ichor --help (arm64): every verb installed" "$(grep -c '(not installed)' "$OUT/help-arm64.out")" 0
  run install-wrong env KREW_ROOT="$tmp/krew-root-wrong" "${env_a[@]}" kubectl krew install --manifest="$manifest" --archive="$archive"
  expect_eq "krew install (arm64) of the amd64 archive: refused" "$([ "$(rc install-wrong)" -ne 0 ] && echo refused)" refused
fi

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
