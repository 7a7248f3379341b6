#!/usr/bin/env bash
# `make image`: Portico's container image, built without a daemon, as an OCI archive:
#   dist/portico-<package.json version>.oci.tar, reference docker.io/portico/portico:<version>
# (`ctr -n k8s.io images import` names it so, which is what the kubelet resolves for `image: portico/portico:<v>`).
#
# The same image as the top-level Containerfile, from the same inputs, in three layers:
#   1. Debian bookworm (minbase, no docs/man/locales) + image/debian-packages + image/rootfs-setup.sh, made by
#      mmdebstrap. Cached under $PORTICO_CACHE/images keyed by a hash of its inputs; PORTICO_BASE_REFRESH=1
#      rebuilds it (e.g. for security updates).
#   2. /usr/local/bin/node (Node 24 from npm's `node` package, as `make deps` installed it).
#   3. /app: Portico compiled to JavaScript, nginx-assets and production node_modules (image/stage-app.sh).
# Layers are compressed by image/cmd/ocipack, which caches them by content, so a rebuild after a source change
# only re-tars and compresses layer 3.
# Needs root for mmdebstrap (a root filesystem with files owned by other users), only when the base is rebuilt.
set -euo pipefail
self=$(readlink -f "$0")
cd "$(dirname "$self")/.."
source image/lib.sh

need tar sha256sum go npm
version=$(project_version)
ref="docker.io/portico/portico:$version"
out="dist/portico-$version.oci.tar"
mkdir -p dist
work=$(mktemp -d dist/.portico-build.XXXXXX)
# --one-file-system: never follow a mount left inside the root being built (proc, sys) if mmdebstrap died.
trap 'rm -rf --one-file-system "$work"' EXIT
# mktemp makes it 0700; apt inside mmdebstrap downloads as the unprivileged _apt user (its sandbox), which must
# reach the new root's lists and archives (and some networks only let apt's own user out).
chmod 0755 "$work"

# ---- 1. the Debian base layer ------------------------------------------------------------------------------
mirror=${PORTICO_DEBIAN_MIRROR:-http://deb.debian.org}
sources=(
  "deb $mirror/debian bookworm main"
  "deb $mirror/debian bookworm-updates main"
  "deb $mirror/debian-security bookworm-security main"
)
mapfile -t packages < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' image/debian-packages)
# Everything that decides the base's content is in its key (this script's mmdebstrap line included).
base_key=$( (printf '%s\n' "${sources[@]}" "${packages[@]}"; cat image/dpkg-nodoc.cfg image/rootfs-setup.sh;
  sed -n '/^mmdebstrap_base()/,/^}/p' "$self") | sha256sum | cut -c1-16)
base="$IMAGE_CACHE/base-bookworm-$base_key.tar"

mmdebstrap_base() {
  local rootfs=$1
  # minbase: Essential + apt + Priority:required, what debian:bookworm-slim holds. The merged-usr hook installs
  # usr-is-merged itself; otherwise apt satisfies init-system-helpers' "usrmerge | usr-is-merged" with usrmerge,
  # which drags in the whole of perl (+40 MB). The dpkg filters apply while the packages unpack, so no
  # documentation is ever written. The setup script runs inside (chroot) at the end. apt retries (with backoff)
  # when the mirror does not answer at once.
  mmdebstrap --mode=root --variant=minbase --format=directory \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --aptopt='Acquire::Retries "5"' \
    --include="$(IFS=,; echo "${packages[*]}")" \
    --dpkgopt=image/dpkg-nodoc.cfg \
    --customize-hook='upload image/rootfs-setup.sh /tmp/rootfs-setup.sh' \
    --customize-hook='chroot "$1" sh /tmp/rootfs-setup.sh' \
    bookworm "$rootfs" "${sources[@]}"
}

if [[ ! -s $base || ${PORTICO_BASE_REFRESH:-} == 1 ]]; then
  need mmdebstrap
  if [[ $(id -u) -ne 0 ]]; then
    log "building the Debian base layer needs root (mmdebstrap); run as root once, later builds reuse $base"
    exit 1
  fi
  log "Debian base layer (mmdebstrap, ${#packages[@]} packages): $base"
  mmdebstrap_base "$work/rootfs" >&2
  # Ownership is kept (numeric); /dev, /proc and /sys stay empty (the runtime mounts them), and the times of
  # files are clamped so the tarball does not depend on when it was built.
  tar -C "$work/rootfs" --sort=name --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --numeric-owner --xattrs --xattrs-include='security.capability' \
    --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
    -cf "$base.tmp.$$" .
  mv -f "$base.tmp.$$" "$base"
  rm -rf --one-file-system "$work/rootfs"
else
  log "Debian base layer: cached ($base)"
fi

# ---- 2 + 3. Node and Portico --------------------------------------------------------------------------------
if [[ ! -x node_modules/.bin/node ]]; then
  log "node_modules/.bin/node is missing: run make deps first (it installs Node 24 from npm's node package)"
  exit 1
fi
log "staging Node and Portico"
PORTICO_NODE_MODULES_CACHE="$IMAGE_CACHE" image/stage-app.sh . "$work/stage" node_modules/.bin/node
det_tar "$work/stage/node" "$work/node.tar" ./usr ./usr/lib ./usr/lib/nginx ./usr/lib/nginx/modules ./usr/lib/nginx/modules/ngx_http_portico_h2c_module.so ./usr/lib/nginx/modules/ngx_http_portico_metrics_module.so ./usr/lib/nginx/modules/ngx_http_portico_upstream_ssl_module.so ./usr/lib/nginx/modules/ngx_http_portico_vars_module.so ./usr/lib/portico ./usr/lib/portico/portico_malloc.node ./usr/local ./usr/local/bin ./usr/local/bin/node
DET_TAR_RECURSE=1 det_tar "$work/stage/app" "$work/app.tar" ./app

# ---- the image ----------------------------------------------------------------------------------------------
# The same settings as the Containerfile's USER / WORKDIR / ENV / EXPOSE / LABEL / ENTRYPOINT.
cat >"$work/config.json" <<EOF
{
  "User": "101:101",
  "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "MALLOC_ARENA_MAX=2"],
  "Entrypoint": ["/usr/bin/tini", "--", "/usr/local/bin/node", "--max-semi-space-size=8", "--expose-gc", "/app/app/main.js"],
  "WorkingDir": "/app",
  "ExposedPorts": {"8080/tcp": {}, "8443/tcp": {}, "10254/tcp": {}},
  "StopSignal": "SIGTERM",
  "Labels": {
    "org.opencontainers.image.title": "portico",
    "org.opencontainers.image.description": "Portico, a Kubernetes ingress controller (TypeScript operator + nginx/Lua data plane)",
    "org.opencontainers.image.version": "$version",
    "org.opencontainers.image.licenses": "Apache-2.0"
  }
}
EOF
ocipack=$(go_binary ocipack)
log "writing $out"
"$ocipack" -o "$out" -ref "$ref" -config "$work/config.json" -cache "$IMAGE_CACHE/layers" \
  -annotation "org.opencontainers.image.version=$version" -annotation "org.opencontainers.image.title=portico" \
  -layer "$base" -history "debian bookworm minbase + $(IFS=' '; echo "${packages[*]}") (mmdebstrap)" \
  -layer "$work/node.tar" -history "node $(node_modules/.bin/node --version) (npm package node) and Portico's nginx modules" \
  -layer "$work/app.tar" -history "portico $version: /app (compiled JavaScript + nginx-assets + production node_modules)"
