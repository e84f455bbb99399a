#!/usr/bin/env bash
# Brings up what the services and the int/e2e tests need: Postgres, Redis, Kafka, S3Proxy. Idempotent.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start=$SECONDS
ensure_postgres
ensure_redis
ensure_kafka
ensure_s3proxy
echo "infra: up ($((SECONDS - start))s)"
