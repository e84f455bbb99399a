#!/usr/bin/env bash
# `npm test`: starts what the tests need (idempotently), then unit → int → e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
# The supported runtime (Node 24) first on PATH, so vitest and every fleet process it starts run on it.
source infra/node.sh
# The locked dependencies, installed when missing or stale (fast when nothing changed).
source infra/deps.sh
bash infra/up.sh
# The web frontend's build and the browser its tests drive; both skip when already there.
node infra/web.ts
bash infra/chromium.sh >/dev/null
export OAN_INFRA_READY=1
# Node's compile cache for the test workers and every fleet process they start (ADR 0047).
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$PWD/.data/node-compile-cache}"
npx vitest run --project unit
npx vitest run --project int
npx vitest run --project e2e
