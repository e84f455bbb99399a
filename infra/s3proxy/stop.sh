#!/usr/bin/env bash
# Stop the S3Proxy started by infra/s3proxy/start.sh, by its pid file.
#   stop.sh          graceful (SIGTERM, waits up to S3PROXY_STOP_TIMEOUT=15 s, then SIGKILL)
#   stop.sh --kill   immediate SIGKILL (crash simulation)
# Exit 0 if it was not running.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DATA="${S3PROXY_DATA_DIR:-$ROOT/.data/s3proxy}"
PIDFILE="$DATA/s3proxy.pid"
TIMEOUT="${S3PROXY_STOP_TIMEOUT:-15}"

# alive = exists and is not a zombie (it is not our child, so we cannot reap it)
alive() { [[ -r "/proc/$1/stat" ]] && [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != "Z" ]]; }

# Same lock as start.sh, so a stop never interleaves with a start.
mkdir -p "$ROOT/.data"
exec 9>"$ROOT/.data/s3proxy-start.lock"
flock -w 600 9 || { echo "s3proxy: ERROR: timed out waiting for the start/stop lock" >&2; exit 1; }

if [[ ! -f "$PIDFILE" ]]; then
  echo "s3proxy: not running (no $PIDFILE)"
  exit 0
fi
pid="$(cat "$PIDFILE")"
if [[ -z "$pid" || ! -r "/proc/$pid/cmdline" ]] || ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 's3proxy-.*\.jar'; then
  echo "s3proxy: not running (stale pid file, pid ${pid:-?})"
  rm -f "$PIDFILE"
  exit 0
fi

if [[ "${1:-}" == "--kill" ]]; then
  kill -KILL "$pid"
  echo "s3proxy: killed pid $pid (SIGKILL)"
else
  kill -TERM "$pid"
  deadline=$((SECONDS + TIMEOUT))
  while alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
  if alive "$pid"; then
    kill -KILL "$pid"
    echo "s3proxy: pid $pid did not stop within ${TIMEOUT}s; sent SIGKILL"
  else
    echo "s3proxy: stopped pid $pid (${SECONDS}s)"
  fi
fi
# wait (bounded) until it is gone so the port is free for a restart
for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
rm -f "$PIDFILE"
