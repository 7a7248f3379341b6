#!/usr/bin/env bash
# Builds (once) a real OpenTelemetry Collector for the tracing tests (reconcilers/nginx-driver/nginx/
# tracing.nginx.test.ts), with the collector's own published builder (go.opentelemetry.io/collector/cmd/builder)
# from Go modules: the OTLP receiver (what nginx's Lua exporter sends to), the debug exporter (its log) and the
# OTLP/HTTP exporter (the test points it at a local HTTP server with JSON encoding, so it reads back exactly what
# the collector accepted, decoded and re-encoded by the collector itself).
# Cached outside the work tree, keyed by version, like e2e/controlplane/build.sh:
#   ${PORTICO_CACHE:-$HOME/.cache/portico}/bin/otelcol-portico-<version>
# A second run finds it and returns at once. `build.sh path` prints the binary's path.
set -euo pipefail

OTELCOL_VERSION="${OTELCOL_VERSION:-v0.165.0}"
CACHE="${PORTICO_CACHE:-$HOME/.cache/portico}"
BIN="$CACHE/bin"
OUT="$BIN/otelcol-portico-$OTELCOL_VERSION"
log() { echo "[build] $*" >&2; }

if [[ "${1:-}" == path ]]; then echo "$OUT"; exit 0; fi
[[ -x "$OUT" ]] && { log "otelcol $OTELCOL_VERSION cached"; exit 0; }

# The builder of this release needs Go 1.26 (its go.mod); GOTOOLCHAIN=go1.27.3 fetches a newer one if a module asks.
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$BIN"
t0=$SECONDS
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
GOBIN="$work/bin" go install "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION"
cat > "$work/manifest.yaml" <<YAML
dist:
  module: portico.dev/otelcol
  name: otelcol-portico
  description: OpenTelemetry Collector for Portico's tracing tests
  version: ${OTELCOL_VERSION#v}
  output_path: $work/dist
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver $OTELCOL_VERSION
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter $OTELCOL_VERSION
  - gomod: go.opentelemetry.io/collector/exporter/otlphttpexporter $OTELCOL_VERSION
YAML
"$work/bin/builder" --config="$work/manifest.yaml" --ldflags="-s -w" >&2
mv "$work/dist/otelcol-portico" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "otelcol $OTELCOL_VERSION built in $((SECONDS - t0))s"
