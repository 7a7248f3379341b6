#!/usr/bin/env bash
# Builds (once) Traefik for the peer benchmark (make bench-peers: plain nginx, Portico and Traefik side by side), from
# its Go module at a pinned release, nothing patched: package cmd/traefik of github.com/traefik/traefik/v3, through
# e2e/setup/go-pinned.sh (a scratch module that requires it and carries over Traefik's own replaces of its forks).
# Cached outside the work tree, keyed by version, like the other pinned Go binaries:
#   ${PORTICO_CACHE:-$HOME/.cache/portico}/bin/traefik-<version>
# A second run finds it and returns at once. `build-traefik.sh path` prints the binary's path.
# The build is the heaviest of the project's pinned binaries (several minutes on 2 cores): it runs under nice.
set -euo pipefail

TRAEFIK_VERSION="${TRAEFIK_VERSION:-v3.6.12}"
OUT="${PORTICO_CACHE:-$HOME/.cache/portico}/bin/traefik-$TRAEFIK_VERSION"

if [[ "${1:-}" == path ]]; then echo "$OUT"; exit 0; fi
source "$(dirname "${BASH_SOURCE[0]}")/../../setup/go-pinned.sh"

# `traefik version` prints these; Traefik's own release build sets them the same way (its Makefile's -X flags).
pkg=github.com/traefik/traefik/v3/pkg/version
ldflags="-X $pkg.Version=$TRAEFIK_VERSION -X $pkg.Codename=cheddar -X $pkg.BuildDate=go-module-proxy"
renice -n 10 -p $$ >/dev/null 2>&1 || : # lower priority for this shell and the go build under it
go_pinned_build "$OUT" github.com/traefik/traefik/v3 "$TRAEFIK_VERSION" github.com/traefik/traefik/v3/cmd/traefik "$ldflags"
"$OUT" version | sed -n 's/^Version: */[build] traefik version: /p' >&2
