#!/usr/bin/env bash
# `kubectl ichor adopt --plan` of the lab's home cluster (tests/lab/scenarios/home.yaml) from an
# empty root gives the plan of the development build: the root holds only the archive's
# kubectl-ichor-adopt, the lab's kubeconfig (flattened: its certificates inline), the
# talosconfig (certificates inline) and a hosts file; the environment only KUBECONFIG and HOME.
# Each platform of the release; arm64 under qemu-user. The home lab is private (home_lab.inc).
. "$(dirname "$0")/lib.sh"
. "$ICHOR_ROOT/tests/e2e/home_lab.inc"
home_up home
TC=$(talosconfig home)
args=(--talosconfig /talosconfig --nodes "$HOME_ADDRS" --cni-unmanaged --plan -o json)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; ICHOR_LAB_STATE=$PRIV "$ICHOR_ROOT/tests/lab/down" >/dev/null 2>&1' EXIT

# The development build, from the lab's own files.
run dev "$ICHOR_BIN/kubectl-ichor-adopt" \
  --talosconfig "$TC" --nodes "$HOME_ADDRS" --cni-unmanaged --plan -o json
expect_eq "development build: exit 0" "$(rc dev)" 0
norm() { jq -S 'del(.items[].status.timings)' "$1"; }
norm "$OUT/dev.out" > "$tmp/dev.json"
expect_eq "development build: a plan of six machines" \
  "$(jq '[.items[] | select(.kind == "TalosMachine")] | length' "$tmp/dev.json")" 6

kubectl config view --raw --flatten > "$tmp/kubeconfig"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' > "$tmp/hosts"
for arch in $PLATFORMS; do
  a=$(archive_of "$arch")
  [ -f "$a" ] || { fail "$arch: no archive $a"; continue; }
  mkdir -p "$tmp/$arch"
  tar -xzf "$a" -C "$tmp/$arch" kubectl-ichor-adopt
  r=$tmp/root-$arch
  new_root "$r" "$tmp/$arch/kubectl-ichor-adopt" "$tmp/kubeconfig"
  cp "$TC" "$r/talosconfig"
  mkdir -p "$r/etc" && cp "$tmp/hosts" "$r/etc/hosts"
  expect_eq "$arch: the root holds only these" "$(cd "$r" && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' ')" \
    "./etc ./etc/hosts ./kubeconfig ./kubectl-ichor-adopt ./talosconfig "
  ROOT_ENV=(KUBECONFIG=/kubeconfig HOME=/ NO_COLOR=1)
  in_root "$r" "$arch" kubectl-ichor-adopt "${args[@]}" > "$OUT/root-$arch.out" 2> "$OUT/root-$arch.err"
  echo $? > "$OUT/root-$arch.rc"
  expect_eq "$arch from the empty root: exit 0 ($(head -c 300 "$OUT/root-$arch.err"))" "$(rc "root-$arch")" 0
  # The plan names the talosconfig it read: the same file, at another path.
  norm "$OUT/root-$arch.out" | sed "s|/talosconfig|$TC|g" > "$tmp/root-$arch.json"
  if diff "$tmp/dev.json" "$tmp/root-$arch.json" > "$OUT/root-$arch.diff"; then
    pass "$arch from the empty root: the development build's plan"
  else
    fail "$arch from the empty root: the plan differs: $(head -c 600 "$OUT/root-$arch.diff")"
  fi
done
finish
