#!/usr/bin/env bash
# Builds Portico's malloc addon (operator/native/malloc.c: malloc_trim and mallinfo2 for operator/memory.ts) and
# installs it as DEST/portico_malloc.node. A Node-API addon: built against the Node-API headers of the npm package
# node-api-headers (a devDependency), loaded by any Node 24. Needs gcc and libc6-dev (install-deps.sh) and `npm ci`.
#
# Usage: bash operator/native/build.sh [directory, default /usr/lib/portico]
set -euo pipefail
DEST=$(realpath -m "${1:-/usr/lib/portico}")
cd "$(dirname "$0")"
headers=../../node_modules/node-api-headers/include
[[ -f $headers/node_api.h ]] || { echo "[native] $headers/node_api.h is missing: run npm ci (make deps)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -fPIC -shared -I"$headers" -o "$tmp/portico_malloc.node" malloc.c
SUDO=""; [[ $(id -u) -eq 0 ]] || { mkdir -p "$DEST" 2>/dev/null && [[ -w $DEST ]]; } || SUDO="sudo"
$SUDO install -D -m 0644 "$tmp/portico_malloc.node" "$DEST/portico_malloc.node"
