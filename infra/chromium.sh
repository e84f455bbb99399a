#!/usr/bin/env bash
# The browser of the web frontend's tests: Debian's chromium, installed with apt when
# missing. Idempotent; prints the executable's path. Browser builds are never downloaded.
exec bash "$(dirname "$0")/aptInstall.sh" /usr/bin/chromium chromium
