#!/usr/bin/env bash
# Shell helpers for the local/CI infrastructure. Source it: `source infra/lib.sh`.
# Each ensure_* is idempotent: it does nothing when the service already answers, and prints what it did.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REPO_ROOT

_infra_say() { echo "infra: $*"; }
_apt_updated=""
_apt_install() {
  command -v apt-get >/dev/null || { echo "infra: ERROR: apt-get not available to install $*" >&2; return 1; }
  if [[ -z "$_apt_updated" ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
    _apt_updated=1
  fi
  _infra_say "installing $* (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Postgres on 127.0.0.1:5432 with trust auth for local connections.
ensure_postgres() {
  if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    _infra_say "postgres: already running on 127.0.0.1:5432"
    return 0
  fi
  if ! command -v pg_ctlcluster >/dev/null || ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    _apt_install postgresql || return 1
  fi
  local ver hba
  ver="$(ls /etc/postgresql | sort -V | tail -n 1)"
  hba="/etc/postgresql/$ver/main/pg_hba.conf"
  if ! grep -qE '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
    _infra_say "postgres: setting trust auth for local connections in $hba"
    cp "$hba" "$hba.orig" 2>/dev/null || true
    cat >"$hba" <<'HBA'
# written by infra/lib.sh (dev/CI only): trust local connections
local   all   all                 trust
host    all   all   127.0.0.1/32  trust
host    all   all   ::1/128       trust
HBA
  fi
  # Statement counts for the benchmarks' cost meter (docs/benchmarks.md): preloading takes a start,
  # so it is set only here, where the cluster is being started anyway.
  local preload="/etc/postgresql/$ver/main/conf.d/50-pg-stat-statements.conf"
  if [ ! -f "$preload" ] && [ -d "/etc/postgresql/$ver/main/conf.d" ]; then
    echo "shared_preload_libraries = 'pg_stat_statements'" >"$preload" || true
  fi
  _infra_say "postgres: starting cluster $ver/main"
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start || return 1
  local i
  for i in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p 5432 && { _infra_say "postgres: ready"; return 0; }
    sleep 0.5
  done
  echo "infra: ERROR: postgres did not answer on 127.0.0.1:5432 within 30s" >&2
  return 1
}

# Redis on 127.0.0.1:6379, no persistence.
ensure_redis() {
  if redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then
    _infra_say "redis: already running on 127.0.0.1:6379"
    return 0
  fi
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    _apt_install redis-server || return 1
  fi
  _infra_say "redis: starting redis-server"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null || return 1
  local i
  for i in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG && { _infra_say "redis: ready"; return 0; }
    sleep 0.2
  done
  echo "infra: ERROR: redis did not answer on 127.0.0.1:6379 within 10s" >&2
  return 1
}

# Kafka (KRaft, single node) on $KAFKA_BROKERS (default 127.0.0.1:9092): infra/kafka/start.sh.
ensure_kafka() {
  bash "$REPO_ROOT/infra/kafka/start.sh"
}

# S3Proxy (a real S3-compatible server on the local filesystem) on 127.0.0.1:$S3PROXY_PORT (default 9300),
# for the S3 storage adapter's int and e2e tests: infra/s3proxy/start.sh.
ensure_s3proxy() {
  bash "$REPO_ROOT/infra/s3proxy/start.sh"
}
