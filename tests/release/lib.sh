# Sourced by tests/release/*.sh: the archives of release.package and empty roots to run them in.
set -uo pipefail
ICHOR_ROOT=${ICHOR_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
DIST=${ICHOR_RELEASE_DIST:?run through ctest (release.package writes the archives)}
PLATFORMS=${ICHOR_RELEASE_PLATFORMS:-amd64 arm64}
VERSION=$(sed -n 's/^project([^)]*VERSION \([0-9][0-9.]*\).*/\1/p' "$ICHOR_ROOT/CMakeLists.txt")
archive_of() { echo "$DIST/ichor-v$VERSION-linux-$1.tar.gz"; }
rchecks=0 rfailures=0
rpass() { rchecks=$((rchecks + 1)); echo "ok   $*"; }
rfail() { rchecks=$((rchecks + 1)); rfailures=$((rfailures + 1)); echo "FAIL $*"; }
rfinish() {
  echo "$rchecks checks, $rfailures failed"
  [ "$rfailures" -eq 0 ] && [ "$rchecks" -gt 0 ]
  exit $?
}
# new_root DIR FILE...: DIR holds only the FILEs (at its top) and what an arm64 binary needs here:
# Debian's qemu-aarch64-static, itself static, as /qemu-aarch64.
new_root() {
  local dir=$1; shift
  rm -rf "$dir" && mkdir -p "$dir"
  cp "$@" "$dir/"
}
# in_root DIR ARCH PROGRAM ARGS...: runs /PROGRAM inside DIR as its root directory (chroot; a user
# namespace when not root), arm64 under qemu-user, with only the environment in ROOT_ENV.
ROOT_ENV=(PATH=/ NO_COLOR=1)
in_root() {
  local dir=$1 arch=$2; shift 2
  local prog=/$1; shift
  local wrap=("$(command -v chroot)")
  [ "$(id -u)" -eq 0 ] || wrap=("$(command -v unshare)" -r "${wrap[@]}")
  if [ "$arch" = arm64 ]; then
    cp "$(command -v qemu-aarch64-static)" "$dir/qemu-aarch64"
    env -i "${ROOT_ENV[@]}" "${wrap[@]}" "$dir" /qemu-aarch64 "$prog" "$@"
  else
    env -i "${ROOT_ENV[@]}" "${wrap[@]}" "$dir" "$prog" "$@"
  fi
}
