#!/usr/bin/env bash
# Progress on the long waits (docs/design.md, "Output"): on a terminal, hold release shows one line it rewrites in
# place (machine N of M, how long it has waited, for what), faint unless NO_COLOR is set; piped,
# it prints none. Run under a real pseudo-terminal (util-linux script(1)). The lab-controller is
# paused so that the wait lasts, then resumed; the machine is removed again at the end.
. "$(dirname "$0")/lib.sh"
A=$ICHOR_BIN/kubectl-ichor-adopt
H=$ICHOR_BIN/kubectl-ichor-hold
TC=$(talosconfig prod)
W2=$(node_addr prod-w-2)
NS=ichor-system
controller=$(awk '$2 == "lab-controller" {print $1}' "$ICHOR_LAB_STATE/pids" | tail -n 1)
cleanup() {
  kill -CONT "$controller" 2>/dev/null
  for o in talosmachine/prod-w-2 talosconfigpatch/prod-w-2-adopted; do
    kubectl annotate -n $NS $o ichor.maesh.dev/allow-delete=true --overwrite > /dev/null 2>&1
    kubectl delete -n $NS $o --ignore-not-found > /dev/null 2>&1
  done
}
trap cleanup EXIT
cleanup
hold_one() { # a held prod-w-2, written by hold apply
  "$A" --cluster prod --add-machine "$W2" --talosconfig "$TC" --plan > "$OUT/plan.yaml" 2>/dev/null
  "$H" apply -f "$OUT/plan.yaml" --talosconfig "$TC" --yes --backup-dir "$OUT/backups" > /dev/null 2>&1
}
# release_on_tty NAME [ENV...]: hold release under a pseudo-terminal, the controller paused, so
# that the wait runs into its 3 s bound; the terminal's bytes are kept in $OUT/NAME.tty.
release_on_tty() {
  local name=$1; shift
  hold_one
  kill -STOP "$controller"
  env -u NO_COLOR "$@" TERM=xterm script -qefc \
    "$H release --cluster prod --talosconfig $TC --timeout 3s > /dev/null" "$OUT/$name.tty" \
    < /dev/null > /dev/null 2>&1
  echo $? > "$OUT/$name.rc"
  kill -CONT "$controller"
  cleanup
}

release_on_tty color
tty=$(cat "$OUT/color.tty")
expect_eq "terminal: the wait ran into its bound (exit 1)" "$(rc color)" 1
expect_contains "terminal: machine N of M" "$tty" "machine 1 of 1: waiting for prod-w-2 to be Ready"
expect_contains "terminal: how long, of the bound" "$tty" "s of 3s (Ready="
expect_contains "terminal: rewritten in place" "$tty" $'\r\033[K'
expect_contains "terminal: faint" "$tty" $'\033[2mmachine 1 of 1'
expect_eq "terminal: more than one update" "$(grep -o 'machine 1 of 1' "$OUT/color.tty" | wc -l | awk '$1 > 1 {print "yes"}')" yes

release_on_tty nocolor NO_COLOR=1
tty=$(cat "$OUT/nocolor.tty")
expect_contains "NO_COLOR: still the line" "$tty" "machine 1 of 1: waiting for prod-w-2"
expect_not_contains "NO_COLOR: no colour" "$tty" $'\033[2m'

# Piped: no progress line at all, only the lines that stay.
hold_one
kill -STOP "$controller"
run piped "$H" release --cluster prod --talosconfig "$TC" --timeout 3s
kill -CONT "$controller"
expect_eq "piped: exit 1" "$(rc piped)" 1
expect_not_contains "piped: no progress line" "$(err piped)" "machine 1 of 1"
expect_not_contains "piped: no carriage return" "$(err piped)" $'\r'
expect_contains "piped: the lines that stay" "$(err piped)" "released the hold on prod-w-2; waiting for Ready"
finish
