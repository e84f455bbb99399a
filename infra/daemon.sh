#!/usr/bin/env bash
# A background service of ours (a JVM from Maven Central jars: Kafka, S3Proxy) known by its pid file.
# Source it after setting:
#   NAME     the label of every line it prints (kafka, s3proxy)
#   ROOT     the repository root (the start/stop lock lives in $ROOT/.data)
#   PIDFILE  where start writes the pid
#   MATCH    a grep pattern of its command line, so a stale pid file never names another process
#   LOG      its log file (start only: fail_with_log prints its tail)

say() { echo "$NAME: $*"; }
die() { echo "$NAME: ERROR: $*" >&2; exit 1; }

# alive = exists and is not a zombie (it is not our child, so we cannot reap it)
alive() { [[ -r "/proc/$1/stat" ]] && [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != "Z" ]]; }

# The pid of our process per the pid file, or status 1.
our_pid() {
  [[ -f "$PIDFILE" ]] || return 1
  local pid
  pid="$(cat "$PIDFILE")"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$MATCH" || return 1
  echo "$pid"
}

fail_with_log() {
  echo "$NAME: ERROR: $1" >&2
  if [[ -f "$LOG" ]]; then
    echo "---- last 40 lines of $LOG ----" >&2
    tail -n 40 "$LOG" >&2
  fi
  exit 1
}

# Start and stop take the same lock: concurrent callers (parallel test runs, up.sh) serialize, and a
# stop never interleaves with a start. Held on fd 9 until the script exits.
daemon_lock() {
  mkdir -p "$ROOT/.data"
  exec 9>"$ROOT/.data/$NAME-start.lock"
  flock -w 600 9 || die "timed out waiting for the start/stop lock ($ROOT/.data/$NAME-start.lock)"
}

# `wait_ready PING TIMEOUT PID WHERE`: waits (bounded) until the command PING succeeds while process
# PID lives, then says it is ready on WHERE.
wait_ready() {
  local ping="$1" timeout="$2" pid="$3" where="$4" deadline=$((SECONDS + $2))
  until "$ping"; do
    kill -0 "$pid" 2>/dev/null || fail_with_log "process $pid exited during startup"
    ((SECONDS < deadline)) || fail_with_log "no answer on $where within ${timeout}s (pid $pid still running)"
    sleep 0.3
  done
  say "ready on $where (pid $pid, ${SECONDS}s)"
}

# stop.sh: `daemon_stop TIMEOUT [--kill]`. Graceful (SIGTERM, then SIGKILL after TIMEOUT seconds) or
# immediate SIGKILL (crash simulation for fault tests). Exits 0 when it was not running.
daemon_stop() {
  local timeout="$1" mode="${2:-}" pid deadline
  daemon_lock
  if ! pid="$(our_pid)"; then
    if [[ -f "$PIDFILE" ]]; then
      say "not running (stale pid file)"
      rm -f "$PIDFILE"
    else
      say "not running (no $PIDFILE)"
    fi
    return 0
  fi
  if [[ "$mode" == "--kill" ]]; then
    kill -KILL "$pid"
    say "killed pid $pid (SIGKILL)"
  else
    kill -TERM "$pid"
    deadline=$((SECONDS + timeout))
    while alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
    if alive "$pid"; then
      kill -KILL "$pid"
      say "pid $pid did not stop within ${timeout}s; sent SIGKILL"
    else
      say "stopped pid $pid (${SECONDS}s)"
    fi
  fi
  # wait (bounded) until it is gone so its ports are free for a restart
  for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
  rm -f "$PIDFILE"
}
