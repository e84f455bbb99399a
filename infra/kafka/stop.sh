#!/usr/bin/env bash
# Stop the broker started by infra/kafka/start.sh, by its pid file.
#   stop.sh          graceful (SIGTERM, waits up to KAFKA_STOP_TIMEOUT=30 s, then SIGKILL)
#   stop.sh --kill   immediate SIGKILL (crash simulation for fault tests)
# Exit 0 if it was not running.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DATA="${KAFKA_DATA_DIR:-$ROOT/.data/kafka}"
PIDFILE="$DATA/kafka.pid"
TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"

# alive = exists and is not a zombie (it is not our child, so we cannot reap it)
alive() { [[ -r "/proc/$1/stat" ]] && [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != "Z" ]]; }

# Same lock as start.sh, so a stop never interleaves with a start.
mkdir -p "$ROOT/.data"
exec 9>"$ROOT/.data/kafka-start.lock"
flock -w 600 9 || { echo "kafka: ERROR: timed out waiting for the start/stop lock" >&2; exit 1; }

if [[ ! -f "$PIDFILE" ]]; then
  echo "kafka: not running (no $PIDFILE)"
  exit 0
fi
pid="$(cat "$PIDFILE")"
if [[ -z "$pid" || ! -r "/proc/$pid/cmdline" ]] || ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'kafka\.Kafka'; then
  echo "kafka: not running (stale pid file, pid ${pid:-?})"
  rm -f "$PIDFILE"
  exit 0
fi

if [[ "${1:-}" == "--kill" ]]; then
  kill -KILL "$pid"
  echo "kafka: killed pid $pid (SIGKILL)"
else
  kill -TERM "$pid"
  deadline=$((SECONDS + TIMEOUT))
  while alive "$pid" && ((SECONDS < deadline)); do sleep 0.3; done
  if alive "$pid"; then
    kill -KILL "$pid"
    echo "kafka: pid $pid did not stop within ${TIMEOUT}s; sent SIGKILL"
  else
    echo "kafka: stopped pid $pid (${SECONDS}s)"
  fi
fi
# wait (bounded) until it is gone so the ports are free for a restart
for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
rm -f "$PIDFILE"
