#!/usr/bin/env bash
# Packs e2e/node/testimage (one static Go binary) into an OCI image archive that `ctr images import` takes:
#   oci-archive.sh <out.tar> <ref>=<role> [<ref>=<role>...]      role: pause | echo
# Every image shares one uncompressed layer holding /pause and /echo (the same binary); each ref gets its own
# config (entrypoint /<role>) and manifest, named in index.json by the io.containerd.image.name annotation.
set -euo pipefail
out="$1"; shift
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rootfs" "$work/oci/blobs/sha256"
(cd "$here/testimage" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$work/rootfs/pause" .)
ln "$work/rootfs/pause" "$work/rootfs/echo"
blob() { # blob <file>: moves it into blobs/, prints "<digest> <size>"
  local d s; d="$(sha256sum "$1" | cut -d' ' -f1)"; s="$(stat -c %s "$1")"
  mv "$1" "$work/oci/blobs/sha256/$d"; echo "$d $s"
}
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/rootfs" -cf "$work/layer.tar" pause echo
read -r layer layer_size < <(blob "$work/layer.tar")
manifests=()
for spec in "$@"; do
  ref="${spec%%=*}"; role="${spec#*=}"
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/%s"],"Env":["PATH=/"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$role" "$layer" > "$work/config.json"
  read -r cfg cfg_size < <(blob "$work/config.json")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$cfg" "$cfg_size" "$layer" "$layer_size" > "$work/manifest.json"
  read -r man man_size < <(blob "$work/manifest.json")
  manifests+=("$(printf '{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}' \
    "$man" "$man_size" "$ref" "${ref##*:}")")
done
printf '{"imageLayoutVersion":"1.0.0"}' > "$work/oci/oci-layout"
(IFS=,; printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s]}' "${manifests[*]}") > "$work/oci/index.json"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/oci" -cf "$out.tmp" oci-layout index.json blobs
mv "$out.tmp" "$out"
