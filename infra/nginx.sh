#!/usr/bin/env bash
# Debian's nginx, for the benchmarks that compare a proxy that is not Node with the edge
# (bench/events-page.ts). Installed with apt when missing; never started as a service here (each
# bench runs its own with its own configuration). Idempotent; prints the executable's path.
exec bash "$(dirname "$0")/aptInstall.sh" /usr/sbin/nginx nginx-light nginx
