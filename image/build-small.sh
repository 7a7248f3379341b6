#!/usr/bin/env bash
# image/build-small.sh [pause|echo|gateway-api-echo-basic]...: small images, as OCI archives, without a daemon:
#   dist/pause.oci.tar  localhost/portico/pause:1  sandbox image: PID 1 that reaps and waits for SIGTERM
#   dist/echo.oci.tar   localhost/portico/echo:1   test backend (HTTP/TCP/UDP echo; see image/cmd/echo)
#   dist/gateway-api-echo-basic.oci.tar            the Gateway API conformance suite's backend (issue 23), under
#       registry.k8s.io/gateway-api/conformance/echo-basic:v0.1.0 and :v0.2.0 (the names the suite's manifests use)
# Each is one static Go binary (CGO_ENABLED=0) in a single layer, no base image. pause and echo are built from
# image/cmd (standard library only), cached by a hash of their sources; echo-basic is the binary
# e2e/gateway-api/build.sh builds from sigs.k8s.io/gateway-api-conformance-images v0.1.0 (`make build-conformance`).
# v0.2.0's source is not served by the Go module proxy here, so its tag carries the same v0.1.0 binary (one manifest,
# two names; docs/gateway-api.md §2). Not part of `make images` (the default here is pause and echo). An unchanged
# image is not rewritten.
set -euo pipefail
self=$(readlink -f "$0")
cd "$(dirname "$self")/.."
source image/lib.sh

need go tar sha256sum
(($#)) || set -- pause echo
mkdir -p dist
ocipack=$(go_binary ocipack)

for name in "$@"; do
  refs=("localhost/portico/$name:1")
  member=$name
  history="image/cmd/$name (static Go binary)"
  bin=
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
    gateway-api-echo-basic)
      # As upstream's image: the binary alone, run as distroless's "nonroot" user (65532). It listens on HTTP_PORT
      # (3000), HTTPS_PORT (8443), H2C_PORT (3001), and on UDP with UDP_ECHO_SERVER=1; the suite's manifests set
      # what they need.
      bash e2e/gateway-api/build.sh >&2 # cached: returns at once when built
      bin=$(bash e2e/gateway-api/build.sh paths | sed -n 's/^ECHO_BASIC_BIN=//p')
      member=echo-basic
      refs=(registry.k8s.io/gateway-api/conformance/echo-basic:v0.1.0
        registry.k8s.io/gateway-api/conformance/echo-basic:v0.2.0)
      history="sigs.k8s.io/gateway-api-conformance-images/echo-basic v0.1.0 (static Go binary)"
      user="65532:65532"
      config='"Entrypoint": ["/echo-basic"]'
      ;;
    *)
      log "unknown image $name (pause, echo or gateway-api-echo-basic)"
      exit 2
      ;;
  esac
  [[ -n $bin ]] || bin=$(go_binary "$name")
  out="dist/$name.oci.tar"
  # The archive is a pure function of the binary, the names and this script: skip the work when all are unchanged.
  key=$( (sha256sum <"$bin"; echo "${refs[*]}"; cat "$self" image/lib.sh; echo "$SOURCE_DATE_EPOCH") | sha256sum | cut -c1-16)
  stamp="$IMAGE_CACHE/small-$name.key"
  if [[ -s $out && -f $stamp && $(<"$stamp") == "$key" ]]; then
    log "${refs[*]}: up to date ($out)"
    continue
  fi
  work=$(mktemp -d dist/.small-build.XXXXXX)
  install -D -m 0755 "$bin" "$work/root/$member"
  det_tar "$work/root" "$work/layer.tar" "./$member"
  cat >"$work/config.json" <<EOF
{ "User": "$user", $config, "StopSignal": "SIGTERM",
  "Labels": { "org.opencontainers.image.title": "portico-$name", "org.opencontainers.image.version": "1" } }
EOF
  refargs=()
  for r in "${refs[@]}"; do refargs+=(-ref "$r"); done
  "$ocipack" -o "$out" "${refargs[@]}" -config "$work/config.json" -layer "$work/layer.tar" -history "$history"
  rm -rf "$work"
  printf '%s\n' "$key" >"$stamp"
done
