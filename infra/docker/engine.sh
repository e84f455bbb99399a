#!/usr/bin/env bash
# The Docker engine the compose fleet and its test need, from Debian's packages. Idempotent:
#   - docker.io / docker-compose / debootstrap missing -> apt-get install (only what is missing)
#   - the daemon already answers                       -> nothing
#   - otherwise                                        -> clear what a killed dockerd left, start dockerd
#                                                         in the background, wait (bounded)
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

# The pid of a live (not zombie) dockerd, if any.
live_dockerd() {
  { ps -C dockerd -o pid=,stat= 2>/dev/null || true; } | awk '$2 !~ /^Z/ { print $1; exit }'
}

# Removes a pid file whose process is gone or a zombie (nothing here reaps an orphan's zombie soon).
clear_stale_pidfile() {
  local file="$1" pid state
  [[ -f "$file" ]] || return 0
  pid="$(cat "$file" 2>/dev/null || true)"
  state="$({ ps -o stat= -p "${pid:-0}" 2>/dev/null || true; } | tr -d ' ')"
  if [[ -z "$state" || "$state" == Z* ]]; then
    rm -f "$file"
    _engine_say "removed a stale $file (pid ${pid:-?} ${state:-gone})"
  fi
}

# What a dockerd killed with -9 leaves behind (a session's processes end that way), each of which
# stops the next dockerd: /var/run/docker.pid naming its zombie ("pid file found"), and the pid file of
# the containerd it had started, naming that one's zombie or a containerd still running without its
# socket ("timeout waiting for containerd to start").
clear_dead_engine() {
  local managed=/var/run/docker/containerd
  clear_stale_pidfile /var/run/docker.pid
  local orphans
  orphans="$(pgrep -f "^containerd --config $managed/containerd.toml" || true)"
  if [[ -n "$orphans" ]]; then
    _engine_say "stopping the containerd a dead dockerd left (pid ${orphans//$'\n'/ })"
    # shellcheck disable=SC2086 # one pid a word
    kill -9 $orphans 2>/dev/null || true
    sleep 0.5
  fi
  clear_stale_pidfile "$managed/containerd.pid"
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
    local running
    running="$(live_dockerd)"
    if [[ -n "$running" ]]; then
      _engine_say "waiting for the dockerd already running (pid $running)"
    else
      clear_dead_engine
      _engine_say "starting dockerd (log /var/log/oan-dockerd.log)"
      # Our own process group and no inherited descriptors: it outlives the test run that started it.
      nohup setsid dockerd --storage-driver=overlay2 >>/var/log/oan-dockerd.log 2>&1 </dev/null 8>&- &
    fi
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
