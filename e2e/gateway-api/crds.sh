#!/usr/bin/env bash
# The Gateway API CRDs of the pinned release, from the Go module's own files (what upstream's standard-install.yaml
# and experimental-install.yaml hold): writes ~/.cache/portico/bin/gateway-api-<v>-{standard,experimental}.yaml
# (once; cached) and prints the path of the channel asked for (default standard).
# Usage: e2e/gateway-api/crds.sh [standard|experimental]
set -euo pipefail
# v1.7.0's go.mod says go 1.27.0; the machines have Go 1.26: the go command takes the approved toolchain from the
# Go module proxy.
export GOTOOLCHAIN=go1.27.3
GATEWAY_API_VERSION=v1.7.0
channel="${1:-standard}"
[[ $channel == standard || $channel == experimental ]] || { echo "crds.sh: channel must be standard or experimental" >&2; exit 2; }
BIN="${PORTICO_CACHE:-$HOME/.cache/portico}/bin"
CRDS="$BIN/gateway-api-$GATEWAY_API_VERSION"
mkdir -p "$BIN"
if [[ ! -f "$CRDS-standard.yaml" || ! -f "$CRDS-experimental.yaml" ]]; then
  dir="$(cd "$(mktemp -d)" && go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$dir/config/crd" ]] || { echo "crds.sh: sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION has no config/crd (download failed?)" >&2; exit 1; }
  # The standard channel's list is config/crd/kustomization.yaml, the experimental one's config/crd/experimental/.
  for ch in standard experimental; do
    out="$CRDS-$ch.yaml" kdir="$dir/config/crd"
    [[ $ch == experimental ]] && kdir+=/experimental
    : > "$out.tmp"
    for f in $(sed -n 's/^[[:space:]]*-[[:space:]]*//p' "$kdir/kustomization.yaml"); do
      { echo "---"; cat "$kdir/$f"; } >> "$out.tmp"
    done
    mv "$out.tmp" "$out"
  done
fi
echo "$CRDS-$channel.yaml"
