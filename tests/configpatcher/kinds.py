#!/usr/bin/env python3
"""The kinds table (common/machineconfig/kinds.cpp) against Talos's own configuration registry.

For each machinery version below, read from the Go module cache (downloaded through the Go module
proxy when missing, never copied into the repository), the document kinds that config/types
registers, and whether each kind's document type has a Name method (a named kind). The table must
list every kind with the first of these minors that registers it and the 1.14 naming.
  tests/configpatcher/kinds.py [REPO]
"""
import glob
import json
import os
import re
import subprocess
import sys

VERSIONS = [(12, "v1.12.4"), (13, "v1.13.9"), (14, "v1.14.1")]
MODULE = "github.com/siderolabs/talos/pkg/machinery"


def module_dir(version):
    out = subprocess.run(["go", "mod", "download", "-json", f"{MODULE}@{version}"], cwd="/",
                         env=dict(os.environ, GOFLAGS=""), capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        sys.exit(f"kinds: cannot get {MODULE}@{version}: {out.stdout}{out.stderr}")
    return json.loads(out.stdout)["Dir"]


def registry(root):
    consts, src, named, kinds = {}, {}, set(), {}
    for f in glob.glob(os.path.join(root, "config/types/**/*.go"), recursive=True):
        if f.endswith("_test.go"):
            continue
        text = open(f, encoding="utf-8").read()
        src[f] = text
        for m in re.finditer(r'\b(\w*Kind)\s*=\s*"(\w+)"', text):
            consts[m.group(1)] = m.group(2)
        for m in re.finditer(r'func \(\w+ \*?(\w+)\) Name\(\) string', text):
            named.add(m.group(1))
    for text in src.values():
        for m in re.finditer(r'registry\.Register\(\s*(\w+|"\w+"),\s*func\(version string\) '
                             r'config\.Document \{(.*?)\n\t\}\)', text, re.S):
            kind = consts.get(m.group(1), m.group(1).strip('"'))
            types = re.findall(r'return &(\w+)\{', m.group(2))
            if not types:
                sys.exit(f"kinds: cannot read the document type of {kind} in {root}")
            kinds[kind] = any(t in named for t in types)
    kinds.pop("v1alpha1", None)
    if len(kinds) < 30:
        sys.exit(f"kinds: read only {len(kinds)} kinds from {root}: the registry's shape changed")
    return kinds


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../..")
    table_text = open(os.path.join(repo, "common/machineconfig/kinds.cpp"), encoding="utf-8").read()
    table = {m.group(1): (m.group(2) == "true", int(m.group(3)))
             for m in re.finditer(r'\{"(\w+)", (true|false), (\d+)\}', table_text)}
    want = {}
    for minor, version in VERSIONS:
        for kind, is_named in registry(module_dir(version)).items():
            since = want.get(kind, (is_named, minor))[1]
            want[kind] = (is_named, since)
    problems = []
    for kind in sorted(set(want) | set(table)):
        if kind not in table:
            problems.append(f"{kind}: registered by Talos, missing from the table")
        elif kind not in want:
            problems.append(f"{kind}: in the table, registered by no Talos version checked")
        elif table[kind] != want[kind]:
            problems.append(f"{kind}: table (named, since) {table[kind]}, Talos {want[kind]}")
    for p in problems:
        print("kinds: " + p)
    print(f"kinds: {len(want)} kinds checked against {', '.join(v for _, v in VERSIONS)}: "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
