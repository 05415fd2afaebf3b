#!/usr/bin/env bash
# Runs last: every output the end-to-end tests kept (stdout and stderr of every tool run, and every
# file a test wrote under its outputs folder) is searched for a PEM private key and for every secret
# value of every lab: the shared lab and each private one (reclaim's labs, drift_layouts' sim; each
# leaves its state in $ICHOR_LAB_STATE-<test>). The values: each bundle's cluster secret, bootstrap
# and trustd tokens, secretbox and aescbc encryption secrets and private keys; each talosconfig's
# client key; each lab kubeconfig's client key; each node configuration's values under a secret key
# (docs/design.md, "Secrets").
# Backups are excepted by path (an outputs folder named backups): hold apply saves each node's
# configuration there on purpose, secrets included, so that it restores.
. "$(dirname "$0")/lib.sh"
outputs=$ICHOR_LAB_STATE/outputs
files=$(find "$outputs" -type f ! -name '*.rc' ! -name 'bad-talosconfig' ! -path '*/backups/*' | sort)
count=$(printf '%s\n' "$files" | grep -c . || true)
if [ "$count" -lt 10 ]; then fail "too few outputs to scan ($count): did the other tests run?"; fi
# Each scenario of a private lab, as it came up (keep_lab_for_scan in lib.sh), and each lab as it is now.
labs=$(ls -d "$ICHOR_LAB_STATE"/lab.json "$ICHOR_LAB_STATE"-*/lab.json "$ICHOR_LAB_STATE"-*/sim.json \
  "$ICHOR_LAB_STATE"-scanned/*/*/lab.json 2> /dev/null)
secrets=$(mktemp)
kinds=$(mktemp)
trap 'rm -f "$secrets" "$kinds"' EXIT
# One line per value: KIND<TAB>VALUE. The kinds found, one count each, go to $kinds.
/usr/bin/python3 - "$secrets" "$kinds" $labs <<'PY'
import base64, collections, json, os, sys, yaml
out, kinds_out, labs = sys.argv[1], sys.argv[2], sys.argv[3:]
SECRET_KEYS = {"key", "token", "secret", "password", "privateKey", "passphrase", "identityToken",
               "auth", "clusterSecret", "bootstrapToken", "secretboxEncryptionSecret",
               "aescbcEncryptionSecret", "privateKeyData", "presharedKey"}
found = []  # (kind, value)

def key_values(kind, v):
    """A private key as written (base64 of a PEM, or the PEM) and each line of its PEM body."""
    found.append((kind, v))
    try:
        pem = base64.b64decode(v, validate=True).decode()
    except Exception:
        pem = v
    for line in pem.splitlines():
        if not line.startswith("-----") and len(line) >= 16:
            found.append((kind, line))

def bundle(path):
    b = yaml.safe_load(open(path))
    found.append(("cluster secret", b["cluster"]["secret"]))
    found.append(("bootstrap token", b["secrets"]["bootstraptoken"]))
    found.append(("trustd token", b["trustdinfo"]["token"]))
    for k, v in b["secrets"].items():
        if k == "secretboxencryptionsecret" and v:
            found.append(("secretbox key", v))
        if k == "aescbcencryptionsecret" and v:
            found.append(("aescbc key", v))
    for ck in b["certs"].values():
        if ck.get("key"):
            key_values("private key", ck["key"])

def talosconfig(path):
    t = yaml.safe_load(open(path))
    for ctx in (t.get("contexts") or {}).values():
        if ctx.get("key"):
            key_values("talosconfig key", ctx["key"])

def config(path, node=None):
    for d in yaml.safe_load_all(open(path)):
        walk(d)

def walk(v, key=None):
    if isinstance(v, dict):
        for k, x in v.items():
            if k in SECRET_KEYS and isinstance(x, str) and len(x) >= 8:
                kind = {"aescbcEncryptionSecret": "aescbc key",
                        "secretboxEncryptionSecret": "secretbox key"}.get(k, "config " + k)
                if k in ("key", "privateKey"):
                    key_values(kind, x)
                else:
                    found.append((kind, x))
            elif k == "config" and isinstance(x, dict) and x.get("kind") == "EncryptionConfiguration":
                walk(x, k)
                for p in x.get("resources", []):
                    for prov in p.get("providers", []):
                        for name, spec in prov.items():
                            for s in (spec or {}).get("keys", []):
                                if s.get("secret"):
                                    found.append((name + " key", s["secret"]))
            else:
                walk(x, k)
    elif isinstance(v, list):
        for x in v:
            walk(x, key)

def kubeconfig(path):
    k = yaml.safe_load(open(path)) or {}
    for u in k.get("users") or []:
        user = u.get("user") or {}
        if user.get("client-key-data"):
            key_values("kubeconfig key", user["client-key-data"])
        if user.get("token"):
            found.append(("kubeconfig token", user["token"]))

for lab in labs:
    if os.path.exists(os.path.join(os.path.dirname(lab), "kubeconfig")):
        kubeconfig(os.path.join(os.path.dirname(lab), "kubeconfig"))
    j = json.load(open(lab))
    for c in j.get("clusters", []):
        for f, read in (("secretsBundle", bundle), ("talosconfig", talosconfig),
                        ("readerTalosconfig", talosconfig)):
            if c.get(f) and os.path.exists(c[f]):
                read(c[f])
    for n in j.get("nodes", []):
        if n.get("config") and os.path.exists(n["config"]):
            config(n["config"])

seen = set()
with open(out, "w") as f:
    for kind, v in found:
        # One value a line: a value of several lines (a PEM in the clear) is searched for by each
        # of its lines that is its own (not a BEGIN/END line, long enough to be the value's).
        parts = [v] if "\n" not in v else [l for l in v.splitlines()
                                             if not l.startswith("-----") and len(l.strip()) >= 16]
        for p in parts:
            if p.strip() and (kind, p) not in seen:
                seen.add((kind, p))
                f.write(kind + "\t" + p + "\n")
counts = collections.Counter(k for k, _ in seen)
with open(kinds_out, "w") as f:
    f.write("labs %d\n" % len(labs))
    for k in sorted(counts):
        f.write("%s %d\n" % (k, counts[k]))
PY
sed 's/^/  /' "$kinds"
# Each kind the issue names, from at least one lab (aescbc: reclaim's lab-c, tests/lab/scenarios/
# reclaim.yaml, a bundle made as before Talos 1.3).
for kind in "cluster secret" "bootstrap token" "trustd token" "secretbox key" "aescbc key" "private key" "talosconfig key" "kubeconfig key"; do
  expect_eq "secret values of kind \"$kind\" collected" "$(grep -c "^$kind [1-9]" "$kinds")" 1
done
# Every private lab of a test that ran (it kept outputs) is among those scanned: reclaim's and the
# home labs (their .inc files) and drift_layouts' sim ($ICHOR_LAB_STATE-$test_name).
for t in $(grep -lE 'reclaim_lab\.inc|home_lab\.inc|ICHOR_LAB_STATE-\$test_name' "$(dirname "$0")"/*.sh); do
  t=$(basename "$t" .sh)
  [ "$t" != "$test_name" ] && [ -d "$outputs/$t" ] || continue
  expect_eq "the private lab of $t scanned" \
    "$(printf '%s\n' $labs | grep -cxF -e "$ICHOR_LAB_STATE-$t/lab.json" -e "$ICHOR_LAB_STATE-$t/sim.json" | awk '{print ($1 >= 1)}')" 1
done
# Every scenario such a lab ran, not only its last: one kept lab per tests/lab/up of the test.
for t in $(grep -lE 'reclaim_lab\.inc|home_lab\.inc' "$(dirname "$0")"/*.sh); do
  t=$(basename "$t" .sh)
  [ -d "$outputs/$t" ] || continue
  ups=$(find "$outputs/$t" -maxdepth 1 \( -name '*.env' -o -name 'lab.env' \) | wc -l)
  expect_eq "every scenario of $t scanned ($ups)" "$(printf '%s\n' $labs | grep -c "^$ICHOR_LAB_STATE-scanned/$t/")" "$ups"
done
n=0
while IFS=$'\t' read -r kind s; do
  n=$((n + 1))
  hits=$(grep -lF -- "$s" $files 2>/dev/null | head -3)
  if [ -n "$hits" ]; then fail "a secret value ($kind, #$n) appears in: $hits"; fi
done < "$secrets"
expect_eq "secret values checked" "$([ "$n" -ge 10 ] && echo yes)" yes
pk=$(grep -lE -- '-----BEGIN ([A-Z0-9]+ )?PRIVATE KEY-----' $files 2>/dev/null | head -3)
expect_eq "no PEM private key in $count outputs" "$pk" ""
finish
