#!/usr/bin/env bash
# The browser of the web frontend's tests: Debian's chromium, installed with apt when
# missing. Idempotent; prints the executable's path. Browser builds are never downloaded.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo /usr/bin/chromium
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# Another apt run (an engineer's, a CI step) may hold the lock: wait for it rather than fail.
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
apt_get install -y -qq chromium >/dev/null 2>&1 || { apt_get update -qq >/dev/null && apt_get install -y -qq chromium >/dev/null; }
[ -x /usr/bin/chromium ] || { echo "chromium: not installed (apt-get install chromium failed)" >&2; exit 1; }
echo /usr/bin/chromium
