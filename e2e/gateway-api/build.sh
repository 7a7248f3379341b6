#!/usr/bin/env bash
# Builds (once) what the official Gateway API conformance run needs (issue 23), from Go modules at a pinned version:
#   conformance-<v>.test   the conformance suite: `go test -c` of package sigs.k8s.io/gateway-api/conformance
#                          (its one test is TestConformance; the manifests it applies are embedded in the binary);
#   echo-basic-<iv>        the backend the suite's manifests run (package main echo-basic of the separate module
#                          sigs.k8s.io/gateway-api-conformance-images, where it lives since gateway-api v1.7);
#   gateway-api-<v>-standard.yaml, gateway-api-<v>-experimental.yaml
#                          the CRDs (and the safe-upgrades ValidatingAdmissionPolicy) of both release channels,
#                          concatenated in the order of the module's config/crd kustomizations.
# Cached outside the work tree, keyed by version, like e2e/controlplane/build.sh:
#   ${PORTICO_CACHE:-$HOME/.cache/portico}/bin/...
# A second run finds them and returns at once. `build.sh paths` prints where they are.
#
# Version: gateway-api v1.7.0 (2026-10-29) needs Go 1.27 (its go.mod), hence GOTOOLCHAIN=go1.27.3. It requires
# sigs.k8s.io/gateway-api-conformance-images v0.2.0 (gRPC echo stubs, TCP and UDP echo types), which the Go module
# proxy refuses here (403 "not available"); v0.1.0 is served and has the same packages with the types the suite uses,
# so the scratch module replaces v0.2.0 with v0.1.0 (docs/gateway-api.md says what that means for the images).
set -euo pipefail

GATEWAY_API_VERSION="${GATEWAY_API_VERSION:-v1.7.0}"
IMAGES_VERSION="${IMAGES_VERSION:-v0.1.0}"
CACHE="${PORTICO_CACHE:-$HOME/.cache/portico}"
BIN="$CACHE/bin"
SUITE="$BIN/gateway-api-conformance-$GATEWAY_API_VERSION.test"
ECHO="$BIN/gateway-api-echo-basic-$IMAGES_VERSION"
CRDS="$BIN/gateway-api-$GATEWAY_API_VERSION"
log() { echo "[build] $*" >&2; }

if [[ "${1:-}" == paths ]]; then
  echo "CONFORMANCE_BIN=$SUITE"
  echo "ECHO_BASIC_BIN=$ECHO"
  echo "GATEWAY_API_CRDS_STANDARD=$CRDS-standard.yaml"
  echo "GATEWAY_API_CRDS_EXPERIMENTAL=$CRDS-experimental.yaml"
  exit 0
fi
if [[ -x "$SUITE" && -x "$ECHO" && -f "$CRDS-standard.yaml" && -f "$CRDS-experimental.yaml" ]]; then
  log "gateway-api $GATEWAY_API_VERSION conformance, echo-basic $IMAGES_VERSION and CRDs cached"
  exit 0
fi

# v1.7.0's go.mod says go 1.27.0; the machines have Go 1.26: the go command fetches this toolchain from the proxy.
export GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$BIN"
t0=$SECONDS
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cat > "$work/go.mod" <<MOD
module portico.dev/gateway-api-conformance

go 1.27.0

require (
	sigs.k8s.io/gateway-api $GATEWAY_API_VERSION
	sigs.k8s.io/gateway-api/conformance $GATEWAY_API_VERSION
	sigs.k8s.io/gateway-api-conformance-images $IMAGES_VERSION
)

replace sigs.k8s.io/gateway-api-conformance-images => sigs.k8s.io/gateway-api-conformance-images $IMAGES_VERSION
MOD
# A blank import makes the suite's and echo-basic's packages part of the module, so `go mod tidy` records every
# requirement their tests and builds need (go.sum is checked against the checksum database as usual).
cat > "$work/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "sigs.k8s.io/gateway-api-conformance-images/echo-basic"
	_ "sigs.k8s.io/gateway-api/conformance"
)
GO
(
  cd "$work"
  go mod tidy >&2
  t1=$SECONDS
  go test -c -trimpath -ldflags "-s -w" -o "$SUITE.tmp" sigs.k8s.io/gateway-api/conformance
  mv "$SUITE.tmp" "$SUITE"
  log "conformance $GATEWAY_API_VERSION test binary built in $((SECONDS - t1))s"
  t1=$SECONDS
  go build -trimpath -ldflags "-s -w" -o "$ECHO.tmp" sigs.k8s.io/gateway-api-conformance-images/echo-basic
  mv "$ECHO.tmp" "$ECHO"
  log "echo-basic $IMAGES_VERSION built in $((SECONDS - t1))s"
)

# The CRDs, from the module's own files (e2e/gateway-api/crds.sh writes both channels; make deps runs it too).
for channel in standard experimental; do
  out="$(bash "$(dirname "${BASH_SOURCE[0]}")/crds.sh" "$channel")"
  log "CRDs ($channel channel): $(grep -c '^kind: CustomResourceDefinition' "$out") in $out"
done
log "gateway-api $GATEWAY_API_VERSION conformance build done in $((SECONDS - t0))s"
