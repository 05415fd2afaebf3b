# Shared helpers of tests/lab/{up,down} and tests/lab/kube/start (sourced, not run).

lab_log() { printf 'lab: %s\n' "$*" >&2; }

# lab_free_port VAR: sets VAR to a TCP port that nothing listens on (any address). Ports are taken
# below the kernel's ephemeral range (32768 up), so that a port picked here does not collide with
# one the kernel hands out meanwhile (talos-sim's ":0" listeners, outgoing connections).
lab_free_port() {
  local p tries=0 lo=20000 hi=32000
  while [ $tries -lt 500 ]; do
    p=$(( lo + (RANDOM * 32768 + RANDOM) % (hi - lo) ))
    tries=$((tries + 1))
    [[ " ${LAB_TAKEN_PORTS:-} " == *" $p "* ]] && continue
    if ! ss -Htan "( sport = :$p )" 2>/dev/null | grep -q .; then
      LAB_TAKEN_PORTS="${LAB_TAKEN_PORTS:-} $p"
      printf -v "$1" '%s' "$p"
      return 0
    fi
  done
  echo "lab: no free port found" >&2
  return 1
}

# lab_record_pid STATE PID NAME: appends "PID NAME" to STATE/pids (read by tests/lab/down).
lab_record_pid() { printf '%s %s\n' "$2" "$3" >> "$1/pids"; }

# lab_pid_is NAME PID: true while PID runs and its command line mentions NAME and the state
# directory $LAB_STATE_MATCH when set (guards against pid reuse).
lab_pid_is() {
  local pid=$2 name=$1 cmd
  [ -r "/proc/$pid/cmdline" ] || return 1
  cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ "$cmd" == *"$name"* ]] || return 1
  [ -z "${LAB_STATE_MATCH:-}" ] || [[ "$cmd" == *"$LAB_STATE_MATCH"* ]]
}

# lab_stop_pids STATE: stops every process in STATE/pids, newest first and one at a time (so the
# apiserver goes before its etcd): TERM, wait up to 10 s, then KILL; removes the file. Idempotent.
lab_stop_pids() {
  local state=$1 f=$1/pids pid name i
  [ -f "$f" ] || return 0
  local LAB_STATE_MATCH=$state
  local -a pids=() names=()
  while read -r pid name; do
    [ -n "$pid" ] || continue
    pids=("$pid" "${pids[@]}"); names=("$name" "${names[@]}")
  done < "$f"
  for i in "${!pids[@]}"; do
    lab_pid_alive "${names[$i]}" "${pids[$i]}" || continue
    kill -TERM "${pids[$i]}" 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while lab_pid_alive "${names[$i]}" "${pids[$i]}" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    if lab_pid_alive "${names[$i]}" "${pids[$i]}"; then
      lab_log "${names[$i]} (pid ${pids[$i]}) did not stop on TERM within 10 s; killing it"
      kill -KILL "${pids[$i]}" 2>/dev/null || true
      while lab_pid_alive "${names[$i]}" "${pids[$i]}"; do sleep 0.05; done
    fi
  done
  rm -f "$f"
}

# lab_pid_alive NAME PID: lab_pid_is, and not a zombie (an exited child nobody reaped yet).
lab_pid_alive() {
  lab_pid_is "$1" "$2" || return 1
  [ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$2/status" 2>/dev/null)" != Z ]
}
