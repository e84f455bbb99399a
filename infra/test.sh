#!/usr/bin/env bash
# `npm test`: starts what the tests need (idempotently), then unit → int → e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
bash infra/up.sh
export OAN_INFRA_READY=1
npx vitest run --project unit
npx vitest run --project int
npx vitest run --project e2e
