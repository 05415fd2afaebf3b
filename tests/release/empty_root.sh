#!/usr/bin/env bash
# Every binary of every release archive starts from an empty root: a directory holding only that
# binary (and, for arm64, the qemu-user that runs it) becomes the root directory, so there is no
# ld.so, no libc, no /etc and no /proc. `--help` must exit 0 and print the verb's usage. As a
# control, the development build's kubectl-ichor-inspect (dynamic) must not start there.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for arch in $PLATFORMS; do
  a=$(archive_of "$arch")
  [ -f "$a" ] || { rfail "$arch: no archive $a"; continue; }
  mkdir -p "$tmp/$arch/x"
  tar -xzf "$a" -C "$tmp/$arch/x"
  n=0
  for f in "$tmp/$arch"/x/kubectl-ichor*; do
    b=$(basename "$f")
    n=$((n + 1))
    new_root "$tmp/root" "$f"
    out=$(in_root "$tmp/root" "$arch" "$b" --help 2>&1)
    rc=$?
    verb=${b#kubectl-ichor}; verb=${verb#-}
    if [ "$rc" -eq 0 ] && grep -q "kubectl ichor${verb:+ $verb}" <<< "$out"; then
      rpass "$arch $b --help from an empty root"
    else
      rfail "$arch $b --help from an empty root: exit $rc: $(head -c 300 <<< "$out")"
    fi
  done
  [ "$n" -eq 9 ] && rpass "$arch: nine binaries" || rfail "$arch: $n binaries, not nine"
done
# The control: a dynamic binary does not start in such a root (so the check above can fail).
dev=${ICHOR_BIN:-$ICHOR_ROOT/build/bin}/kubectl-ichor-inspect
if [ -x "$dev" ]; then
  new_root "$tmp/root" "$dev"
  if in_root "$tmp/root" amd64 kubectl-ichor-inspect --help > "$tmp/dev.out" 2>&1; then
    rfail "the control: the development build's kubectl-ichor-inspect started from an empty root"
  else
    rpass "the control: the development build's kubectl-ichor-inspect does not start there ($(head -c 80 "$tmp/dev.out"))"
  fi
fi
rfinish
