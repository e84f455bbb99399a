#!/bin/bash
# S3Proxy in the foreground on :9000 with the credentials MinIO would take (MINIO_ROOT_USER and
# MINIO_ROOT_PASSWORD), so the compose file's S3 settings work unchanged against either.
set -euo pipefail
DATA="${S3PROXY_DATA_DIR:-/var/lib/s3proxy/buckets}"
# A bucket is a directory of the filesystem store: the ones the fleet uses exist from the start.
for b in ${S3PROXY_BUCKETS:-oan}; do mkdir -p "$DATA/$b"; done
cat >/var/lib/s3proxy/s3proxy.properties <<PROPS
s3proxy.endpoint=http://0.0.0.0:9000
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=${MINIO_ROOT_USER:?set MINIO_ROOT_USER}
s3proxy.credential=${MINIO_ROOT_PASSWORD:?set MINIO_ROOT_PASSWORD}
jclouds.provider=filesystem
jclouds.filesystem.basedir=$DATA
PROPS
exec java -Xms64m -Xmx256m -Djava.awt.headless=true -DLOG_LEVEL=info -DJETTY_LOG_LEVEL=warn -DLOG_APPENDER=STDOUT \
  -jar /opt/s3proxy/s3proxy.jar --properties /var/lib/s3proxy/s3proxy.properties
