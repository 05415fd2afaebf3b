#!/usr/bin/env bash
# Regenerates the render golden data: expected/<case>.yaml (or .error) for every case of
# cases.yaml, from Talos's own generator and configpatcher (tests/lab/cmd/render-oracle,
# machinery v1.14.1, every contract Talos's own; see docs/render.md).
# secrets.yaml is made once (test-only secrets) and kept, so that the output is stable.
# Review `git diff tests/golden/render` before committing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lab=$here/../../lab
oracle=$(mktemp -d)/render-oracle
trap 'rm -rf "$(dirname "$oracle")"' EXIT
(cd "$lab" && GOFLAGS=${GOFLAGS:--mod=mod} go build -o "$oracle" ./cmd/render-oracle)
[ -f "$here/secrets.yaml" ] || "$oracle" --new-bundle "$here/secrets.yaml"
rm -rf "$here/expected"
"$oracle" --cases "$here/cases.yaml" --out "$here/expected"
echo "render golden data: $(ls "$here/expected" | wc -l) cases written to $here/expected" >&2
