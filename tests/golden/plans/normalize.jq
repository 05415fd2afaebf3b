# The part of a whole-cluster plan (adopt --plan -o json) that a golden plan keeps: what it would
# write (the TalosCluster's identity, each TalosMachine, each TalosConfigPatch with its text and
# credential references, each planned Secret's name) and every result, with what differs from one
# lab run to the next replaced by a placeholder: the bundle's values and their digests (a fresh
# bundle per run), addresses of temporary files, and the Inspections themselves (read from the
# nodes; golden input elsewhere). Used by tests/e2e/real_clusters.sh (expect_golden_plan).
def stable:
  if type == "string" then
    gsub("sha256:[0-9a-f]{64}"; "sha256:<digest>")
    | gsub("sha256:[0-9a-f]{1,63}(?![0-9a-f])"; "sha256:<digest>") # cut short in a message
    | gsub("(?=[A-Za-z0-9+/]*[A-Z+])[A-Za-z0-9+/]{40,}={0,2}"; "<base64>")
    | gsub("/tmp/[^ \"',;]*"; "<tmp>")
  else . end;
def tag($t): .tags[$t] // null;
{
  cluster: [.items[] | select(.kind == "TalosCluster") | {name: .metadata.name, spec: .spec}],
  machines: [.items[] | select(.kind == "TalosMachine")
             | {name: .metadata.name, labels: .metadata.labels, spec: .spec}] | sort_by(.name),
  patches: [.items[] | select(.kind == "TalosConfigPatch")
            | {name: .metadata.name, labels: .metadata.labels, spec: .spec}] | sort_by(.name),
  secrets: [.items[] | select(.kind == "Secret") | .metadata.name] | sort,
  results: [.results[] | {severity, code: tag("ichor.maesh.dev/code"),
                          class: tag("ichor.maesh.dev/class"), node: tag("ichor.maesh.dev/node"),
                          path: (.field.path // null), message}]
           | sort_by([.code, .node, .path, .message])
} | walk(stable)
