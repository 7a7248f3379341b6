#!/usr/bin/env bash
# Builds (once) a real oauth2-proxy from Go modules for the external-auth tests (reconcilers/nginx-driver/nginx/
# oauth2-proxy.nginx.test.ts): package main of github.com/oauth2-proxy/oauth2-proxy/v7 at a pinned version, nothing
# patched, through e2e/setup/go-pinned.sh (the shared build of pinned Go binaries; a binary that an earlier
# `go install ...@<version>` left is recognized and kept).
# Cached outside the work tree, keyed by version, like e2e/otel/build.sh:
#   ${PORTICO_CACHE:-$HOME/.cache/portico}/bin/oauth2-proxy-<version>
# A second run finds it and returns at once. `build.sh path` prints the binary's path.
set -euo pipefail

OAUTH2_PROXY_VERSION="${OAUTH2_PROXY_VERSION:-v7.15.6}"
OUT="${PORTICO_CACHE:-$HOME/.cache/portico}/bin/oauth2-proxy-$OAUTH2_PROXY_VERSION"

if [[ "${1:-}" == path ]]; then echo "$OUT"; exit 0; fi
source "$(dirname "${BASH_SOURCE[0]}")/../setup/go-pinned.sh"

# GOTOOLCHAIN=go1.27.3 fetches a newer Go if the module's go.mod asks for one (go-pinned.sh: local otherwise).
# The -X flag is what its own release build sets, so `oauth2-proxy --version` names the version.
module=github.com/oauth2-proxy/oauth2-proxy/v7
go_pinned_build "$OUT" "$module" "$OAUTH2_PROXY_VERSION" "$module" "-X $module/pkg/version.VERSION=$OAUTH2_PROXY_VERSION"
