#!/usr/bin/env bash
# Installs a Debian package with apt when its executable is missing, and prints the executable's
# path: `bash infra/aptInstall.sh <executable> <package> [<package> …]` tries each package in turn
# (the first that installs it wins), updating the package lists once if none does. Idempotent.
set -euo pipefail
exe=$1
shift
if [ -x "$exe" ]; then
  echo "$exe"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# Another apt run (an engineer's, a CI step) may hold the lock: wait for it rather than fail.
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
installed() {
  for pkg in "$@"; do
    apt_get install -y -qq "$pkg" >/dev/null 2>&1 && [ -x "$exe" ] && return 0
  done
  return 1
}
installed "$@" || { apt_get update -qq >/dev/null && installed "$@"; } ||
  { echo "$(basename "$exe"): not installed (apt-get install $* failed)" >&2; exit 1; }
echo "$exe"
