#!/usr/bin/env bash
# Builds (once) a real oauth2-proxy from Go modules for the external-auth tests (reconcilers/nginx-driver/nginx/
# oauth2-proxy.nginx.test.ts): `go install github.com/oauth2-proxy/oauth2-proxy/v7@<version>`, nothing patched.
# Cached outside the work tree, keyed by version, like e2e/otel/build.sh:
#   ${PORTICO_CACHE:-$HOME/.cache/portico}/bin/oauth2-proxy-<version>
# A second run finds it and returns at once. `build.sh path` prints the binary's path.
set -euo pipefail

OAUTH2_PROXY_VERSION="${OAUTH2_PROXY_VERSION:-v7.15.6}"
CACHE="${PORTICO_CACHE:-$HOME/.cache/portico}"
BIN="$CACHE/bin"
OUT="$BIN/oauth2-proxy-$OAUTH2_PROXY_VERSION"
log() { echo "[build] $*" >&2; }

if [[ "${1:-}" == path ]]; then echo "$OUT"; exit 0; fi
[[ -x "$OUT" ]] && { log "oauth2-proxy $OAUTH2_PROXY_VERSION cached"; exit 0; }

# GOTOOLCHAIN=go1.27.3 fetches a newer Go if the module's go.mod asks for one.
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$BIN"
t0=$SECONDS
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
GOBIN="$work/bin" go install -ldflags="-s -w" "github.com/oauth2-proxy/oauth2-proxy/v7@$OAUTH2_PROXY_VERSION"
mv "$work/bin/oauth2-proxy" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "oauth2-proxy $OAUTH2_PROXY_VERSION built in $((SECONDS - t0))s"
