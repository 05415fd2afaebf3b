#!/usr/bin/env bash
# Runs last: every output the end-to-end tests kept (stdout and stderr of every tool run) is
# searched for a PEM private key and for every secret value of every lab bundle. None may appear.
. "$(dirname "$0")/lib.sh"
outputs=$ICHOR_LAB_STATE/outputs
files=$(find "$outputs" -type f ! -name '*.rc' ! -name 'bad-talosconfig' | sort)
count=$(printf '%s\n' "$files" | grep -c . || true)
if [ "$count" -lt 10 ]; then fail "too few outputs to scan ($count): did the other tests run?"; fi
secrets=$(mktemp)
for b in $(jq -r '.clusters[].secretsBundle' "$LAB"); do
  # Every leaf value under the secret paths of talosctl's bundle, and the decoded key PEMs.
  /usr/bin/python3 - "$b" >> "$secrets" <<'PY'
import base64, sys, yaml
b = yaml.safe_load(open(sys.argv[1]))
vals = [b["cluster"]["secret"], b["secrets"]["bootstraptoken"], b["trustdinfo"]["token"]]
vals += [v for k, v in b["secrets"].items() if k.endswith("encryptionsecret")]
for name, ck in b["certs"].items():
    if ck.get("key"):
        vals.append(ck["key"])
        pem = base64.b64decode(ck["key"]).decode()
        body = "".join(l for l in pem.splitlines() if not l.startswith("-----"))
        vals.append(body[:40])
for v in vals:
    if v:
        print(v)
PY
done
n=0
while IFS= read -r s; do
  n=$((n + 1))
  hits=$(grep -lF -- "$s" $files 2>/dev/null | head -3)
  if [ -n "$hits" ]; then fail "a bundle secret (#$n) appears in: $hits"; fi
done < "$secrets"
expect_eq "secret values checked" "$([ "$n" -ge 10 ] && echo yes)" yes
pk=$(grep -lE -- '-----BEGIN ([A-Z0-9]+ )?PRIVATE KEY-----' $files 2>/dev/null | head -3)
expect_eq "no PEM private key in $count outputs" "$pk" ""
rm -f "$secrets"
finish
