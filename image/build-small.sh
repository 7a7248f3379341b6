#!/usr/bin/env bash
# image/build-small.sh [pause|echo]...: the test node's two small images, as OCI archives, without a daemon:
#   dist/pause.oci.tar  localhost/portico/pause:1  sandbox image: PID 1 that reaps and waits for SIGTERM
#   dist/echo.oci.tar   localhost/portico/echo:1   test backend (HTTP/TCP/UDP echo; see image/cmd/echo)
# Each is one static Go binary (CGO_ENABLED=0, standard library only) in a single layer, no base image. The
# binaries are cached by a hash of their sources; an unchanged image is not rewritten.
set -euo pipefail
self=$(readlink -f "$0")
cd "$(dirname "$self")/.."
source image/lib.sh

need go tar sha256sum
(($#)) || set -- pause echo
mkdir -p dist
ocipack=$(go_binary ocipack)

for name in "$@"; do
  case $name in
    pause)
      # Non-root like Kubernetes' own pause image (65535): it needs no privilege to wait, and reaping is allowed
      # to any PID 1.
      user="65535:65535"
      config='"Entrypoint": ["/pause"]'
      ;;
    echo)
      # Non-root, writes nothing: works with runAsNonRoot and readOnlyRootFilesystem.
      user="65532:65532"
      config='"Entrypoint": ["/echo"], "Env": ["PORT=8080"], "ExposedPorts": {"8080/tcp": {}}'
      ;;
    *)
      log "unknown image $name (pause or echo)"
      exit 2
      ;;
  esac
  bin=$(go_binary "$name")
  out="dist/$name.oci.tar"
  ref="localhost/portico/$name:1"
  # The archive is a pure function of the binary and this script: skip the work when both are unchanged.
  key=$( (sha256sum <"$bin"; cat "$self" image/lib.sh; echo "$SOURCE_DATE_EPOCH") | sha256sum | cut -c1-16)
  stamp="$IMAGE_CACHE/small-$name.key"
  if [[ -s $out && -f $stamp && $(<"$stamp") == "$key" ]]; then
    log "$ref: up to date ($out)"
    continue
  fi
  work=$(mktemp -d dist/.small-build.XXXXXX)
  install -D -m 0755 "$bin" "$work/root/$name"
  det_tar "$work/root" "$work/layer.tar" "./$name"
  cat >"$work/config.json" <<EOF
{ "User": "$user", $config, "StopSignal": "SIGTERM",
  "Labels": { "org.opencontainers.image.title": "portico-$name", "org.opencontainers.image.version": "1" } }
EOF
  "$ocipack" -o "$out" -ref "$ref" -config "$work/config.json" -layer "$work/layer.tar" \
    -history "image/cmd/$name (static Go binary)"
  rm -rf "$work"
  printf '%s\n' "$key" >"$stamp"
done
