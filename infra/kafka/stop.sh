#!/usr/bin/env bash
# Stop the broker started by infra/kafka/start.sh, by its pid file.
#   stop.sh          graceful (SIGTERM, waits up to KAFKA_STOP_TIMEOUT=30 s, then SIGKILL)
#   stop.sh --kill   immediate SIGKILL (crash simulation for fault tests)
# Exit 0 if it was not running.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DATA="${KAFKA_DATA_DIR:-$ROOT/.data/kafka}"
NAME=kafka PIDFILE="$DATA/kafka.pid" MATCH='kafka\.Kafka'
source "$ROOT/infra/daemon.sh"

daemon_stop "${KAFKA_STOP_TIMEOUT:-30}" "${1:-}"
