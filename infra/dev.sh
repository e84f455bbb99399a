#!/usr/bin/env bash
# `npm run dev`: Node 24, the locked dependencies, then the local fleet (infra/dev.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
source infra/node.sh
source infra/deps.sh
exec node --disable-warning=TimeoutNegativeWarning infra/dev.ts "$@"
