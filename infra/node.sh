#!/usr/bin/env bash
# Node.js 24 (the supported LTS line) first on PATH. The machine's own node when it is 24;
# otherwise the npm registry's binary package `node-linux-<arch>@24`, unpacked once into
# .tools/node24 (no download from anywhere but the npm registry). Idempotent.
#   source infra/node.sh             # in a script: PATH now starts with Node 24
#   bash infra/node.sh CMD [ARGS…]   # runs CMD with Node 24 first on PATH
OAN_NODE_MAJOR=24

_oan_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null; }

oan_ensure_node() {
  [[ "$(_oan_node_major)" == "$OAN_NODE_MAJOR" ]] && return 0
  local root arch dir bin
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "node: no node-linux package for $(uname -m); install Node $OAN_NODE_MAJOR" >&2; return 1 ;;
  esac
  dir="$root/.tools/node$OAN_NODE_MAJOR"
  bin="$dir/node_modules/node-linux-$arch/bin"
  if [[ ! -x "$bin/node" ]]; then
    echo "node: installing Node $OAN_NODE_MAJOR (npm package node-linux-$arch@$OAN_NODE_MAJOR) into $dir" >&2
    mkdir -p "$dir"
    npm install --silent --no-save --no-package-lock --no-audit --no-fund --prefix "$dir" \
      "node-linux-$arch@$OAN_NODE_MAJOR" >&2 || return 1
  fi
  export PATH="$bin:$PATH"
  [[ "$(_oan_node_major)" == "$OAN_NODE_MAJOR" ]]
}

# kafkajs 2.2.4 sets a negative timeout that Node 24 warns about on every start (tulios/kafkajs#1751,
# open upstream): that one warning, by name, is silenced for every Node this starts (benches, scripts,
# tests); no other warning is.
oan_quiet_kafkajs() {
  [[ " ${NODE_OPTIONS:-} " == *" --disable-warning=TimeoutNegativeWarning "* ]] && return 0
  export NODE_OPTIONS="--disable-warning=TimeoutNegativeWarning${NODE_OPTIONS:+ $NODE_OPTIONS}"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  oan_ensure_node
  oan_quiet_kafkajs
  exec "$@"
else
  oan_ensure_node && oan_quiet_kafkajs
fi
