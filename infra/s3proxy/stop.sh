#!/usr/bin/env bash
# Stop the S3Proxy started by infra/s3proxy/start.sh, by its pid file.
#   stop.sh          graceful (SIGTERM, waits up to S3PROXY_STOP_TIMEOUT=15 s, then SIGKILL)
#   stop.sh --kill   immediate SIGKILL (crash simulation)
# Exit 0 if it was not running.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DATA="${S3PROXY_DATA_DIR:-$ROOT/.data/s3proxy}"
NAME=s3proxy PIDFILE="$DATA/s3proxy.pid" MATCH='s3proxy-.*\.jar'
source "$ROOT/infra/daemon.sh"

daemon_stop "${S3PROXY_STOP_TIMEOUT:-15}" "${1:-}"
