#!/bin/bash
# Initialises $PGDATA once (password auth over the network, trust on the local socket), creates
# $POSTGRES_DB, then runs the server in the foreground.
set -euo pipefail
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  pw="$(mktemp)"
  printf '%s' "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}" >"$pw"
  "$bin/initdb" -D "$PGDATA" -U postgres --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pw"
  echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [[ -n "${POSTGRES_DB:-}" && "$POSTGRES_DB" != postgres ]]; then
    "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    "$bin/createdb" -U postgres "$POSTGRES_DB"
    "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql
