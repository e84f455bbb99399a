#!/usr/bin/env bash
# The locked dependencies, installed with `npm ci` when node_modules is missing or older than
# package-lock.json; nothing to do (well under a second) when they match. Sourced by `npm run dev`
# and `npm test` before anything imports a package, so a fresh clone needs no separate install.
#   source infra/deps.sh   # after infra/node.sh: Node 24 and its npm on PATH
_oan_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_oan_stamp="$_oan_root/node_modules/.oan-lock.sha256"
_oan_lock_hash="$(sha256sum "$_oan_root/package-lock.json" | cut -d' ' -f1)"
if [[ ! -f "$_oan_stamp" || "$(cat "$_oan_stamp")" != "$_oan_lock_hash" ]]; then
  # An `npm ci` run just before (as CI does) leaves npm's own record newer than the lockfile.
  if [[ ! -f "$_oan_stamp" && "$_oan_root/node_modules/.package-lock.json" -nt "$_oan_root/package-lock.json" ]]; then
    :
  else
    echo "deps: package-lock.json changed or node_modules missing; running npm ci" >&2
    (cd "$_oan_root" && npm ci --no-audit --no-fund) >&2 || return 1 2>/dev/null || exit 1
  fi
  echo "$_oan_lock_hash" >"$_oan_stamp"
fi
# The repository's own git hooks (.githooks: the commit-msg subject check), once per clone: only
# inside a git work tree, never over a hooks path someone set, silent, and never a failure.
if command -v git >/dev/null 2>&1 &&
  [[ "$(git -C "$_oan_root" rev-parse --is-inside-work-tree 2>/dev/null || true)" == "true" ]] &&
  [[ -z "$(git -C "$_oan_root" config --get core.hooksPath 2>/dev/null || true)" ]]; then
  git -C "$_oan_root" config core.hooksPath .githooks >/dev/null 2>&1 || true
fi
unset _oan_root _oan_stamp _oan_lock_hash
