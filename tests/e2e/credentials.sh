#!/usr/bin/env bash
# kubectl ichor credentials: a talosconfig minted from the cluster's bundle (ADR 0128 decision 1, step 2).
. "$(dirname "$0")/lib.sh"
C=$ICHOR_BIN/kubectl-ichor-credentials
f=$OUT/talosconfig-prod
rm -f "$f"
run mint "$C" prod --output-file "$f"
expect_eq "credentials: exit 0" "$(rc mint)" 0
expect_eq "credentials: mode 0600" "$(stat -c %a "$f")" 600
expect_eq "credentials: nothing on stdout" "$(out mint)" ""
expect_eq "credentials: endpoints from the control planes" "$(/usr/bin/python3 -c 'import sys,yaml; print(",".join(yaml.safe_load(open(sys.argv[1]))["contexts"]["prod"]["endpoints"]))' "$f")" "$(node_addr prod-cp-1)"
run inspect "$ICHOR_BIN/kubectl-ichor-inspect" "$(node_addr prod-w-2)" --talosconfig "$f" -o json
expect_eq "credentials: the talosconfig reads a node" "$(out inspect | jq -r '.items[0].status.tls.outcome')" verified
expect_eq "credentials: as os:admin" "$(out inspect | jq -r '.items[0].status.access')" "os:admin"
expect_eq "credentials: reads the configuration" "$(out inspect | jq -r '.items[0].status.config | length > 0')" true
run again "$C" prod --output-file "$f"
expect_eq "credentials: never over a file" "$(rc again)" 3
run dispatch "$ICHOR_BIN/kubectl-ichor" credentials --help
expect_eq "dispatcher: runs the verb" "$(rc dispatch)" 0
expect_contains "dispatcher: the verb's help" "$(out dispatch)" "kubectl ichor credentials NAME"
rm -f "$f"
finish
