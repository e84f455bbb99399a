#!/usr/bin/env bash
# The Docker engine the compose fleet and its test need, from Debian's packages. Idempotent:
#   - docker.io / docker-compose / debootstrap missing -> apt-get install (only what is missing)
#   - the daemon already answers                       -> nothing
#   - otherwise                                        -> start dockerd in the background, wait (bounded)
# Debian's docker-compose (Compose 1.29) is the compose client here; the machine's newer `docker` CLI
# (if any) talks to the same daemon. Nothing is fetched from outside Debian's archive.
#   bash infra/docker/engine.sh            # or `source` it and call ensure_docker_engine
set -euo pipefail

_engine_say() { echo "docker: $*"; }

# Debian's own client first: it matches the daemon's API, and `docker-compose` finds it.
export PATH="/usr/bin:$PATH"

ensure_docker_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v docker-compose >/dev/null || missing+=(docker-compose)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  ((${#missing[@]} == 0)) && return 0
  command -v apt-get >/dev/null || { echo "docker: ERROR: apt-get missing; install ${missing[*]}" >&2; return 1; }
  _engine_say "installing ${missing[*]} (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_docker_engine() {
  ensure_docker_packages
  if docker info >/dev/null 2>&1; then
    _engine_say "engine already running"
    return 0
  fi
  # One starter at a time (parallel test runs); the later ones find it running.
  mkdir -p /var/lib/docker
  exec 8>/var/lib/docker/.oan-start.lock
  flock -w 300 8 || { echo "docker: ERROR: timed out on the start lock" >&2; return 1; }
  if ! docker info >/dev/null 2>&1; then
    _engine_say "starting dockerd (log /var/log/oan-dockerd.log)"
    # Our own process group and no inherited descriptors: it outlives the test run that started it.
    nohup setsid dockerd --storage-driver=overlay2 >>/var/log/oan-dockerd.log 2>&1 </dev/null 8>&- &
    local deadline=$((SECONDS + 60))
    until docker info >/dev/null 2>&1; do
      if ((SECONDS >= deadline)); then
        echo "docker: ERROR: dockerd did not answer within 60s; last lines of its log:" >&2
        tail -n 20 /var/log/oan-dockerd.log >&2
        return 1
      fi
      sleep 0.5
    done
    _engine_say "engine ready"
  fi
  exec 8>&-
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  ensure_docker_engine
fi
