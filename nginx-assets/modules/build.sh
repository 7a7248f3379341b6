#!/usr/bin/env bash
# Builds Portico's own nginx module (nginx-assets/modules/portico_metrics: the per-request metrics) as a dynamic
# module for the nginx that Debian installs, and installs it into nginx's module directory.
#
# A dynamic module is built against the same nginx version's sources, configured with --with-compat (as Debian's
# nginx is): nginx refuses, at load time, a module whose version or binary signature differs. The sources are
# Debian's own tarball of that version (verified by its SHA-256), configured with the options of Debian's build that
# change nginx's structures. The build is cached by the module's source digest: it runs again only when the module
# or the pinned nginx changes. Needs gcc, make and the headers of PCRE2, zlib and OpenSSL (install-deps.sh).
#
# Usage: bash nginx-assets/modules/build.sh [module directory, default /usr/lib/nginx/modules]
set -euo pipefail
# The destination as given, made absolute before this script moves to its own directory.
DEST=$(realpath -m "${1:-/usr/lib/nginx/modules}")
cd "$(dirname "$0")"

NGINX_VERSION=1.22.1
NGINX_SHA256=9ebb333a9e82b952acd3e2b4aeb1d4ff6406f72491bab6cd9fe69f0dea737f31
NGINX_URL="http://deb.debian.org/debian/pool/main/n/nginx/nginx_${NGINX_VERSION}.orig.tar.gz"
MODULE=ngx_http_portico_metrics_module.so

installed=$(nginx -v 2>&1 | sed -n 's|^nginx version: nginx/||p')
if [[ "$installed" != "$NGINX_VERSION" ]]; then
  echo "[modules] the installed nginx is ${installed:-missing}; Portico's module is built for nginx $NGINX_VERSION (Debian bookworm): change NGINX_VERSION and NGINX_SHA256 in $0" >&2
  exit 1
fi

digest=$( (echo "$NGINX_VERSION $NGINX_SHA256"; cat portico_metrics/config portico_metrics/*.c) | sha256sum | cut -c1-16)
if [[ -f "$DEST/$MODULE" && -f "$DEST/$MODULE.digest" && "$(cat "$DEST/$MODULE.digest")" == "$digest" ]]; then
  exit 0
fi

mkdir -p "$DEST" 2>/dev/null || sudo mkdir -p "$DEST"
SUDO=""; [[ $(id -u) -eq 0 || -w "$DEST" ]] || SUDO="sudo"
# Another directory (an image being staged) gets a copy of the installed build when that one is current.
SYSTEM=/usr/lib/nginx/modules
if [[ "$DEST" != "$SYSTEM" && -f "$SYSTEM/$MODULE" && "$(cat "$SYSTEM/$MODULE.digest" 2>/dev/null)" == "$digest" ]]; then
  $SUDO install -m 0644 "$SYSTEM/$MODULE" "$DEST/$MODULE"
  echo "$digest" | $SUDO tee "$DEST/$MODULE.digest" >/dev/null
  exit 0
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/portico/nginx-src"
mkdir -p "$cache"
tarball="$cache/nginx_${NGINX_VERSION}.orig.tar.gz"
if [[ ! -f "$tarball" ]] || ! echo "$NGINX_SHA256  $tarball" | sha256sum -c --quiet - 2>/dev/null; then
  echo "[modules] downloading nginx $NGINX_VERSION sources (Debian's tarball)" >&2
  curl -fsS --retry 3 -o "$tarball.part" "$NGINX_URL"
  echo "$NGINX_SHA256  $tarball.part" | sha256sum -c --quiet -
  mv "$tarball.part" "$tarball"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
src="$work/nginx-$NGINX_VERSION"
moddir="$PWD/portico_metrics"
echo "[modules] building $MODULE against nginx $NGINX_VERSION" >&2
(
  cd "$src"
  # Debian's configure options that shape nginx's structures (nginx -V); the modules Debian builds dynamically
  # (geoip, image filter, perl, xslt, mail, stream) are left out: they do not change what this module sees.
  ./configure --with-compat --with-debug --with-pcre-jit --with-threads \
    --with-http_ssl_module --with-http_stub_status_module --with-http_realip_module --with-http_auth_request_module \
    --with-http_v2_module --with-http_dav_module --with-http_slice_module --with-http_addition_module \
    --with-http_gunzip_module --with-http_gzip_static_module --with-http_sub_module \
    --with-cc-opt='-g -O2 -fstack-protector-strong -Wformat -Werror=format-security -fPIC -D_FORTIFY_SOURCE=2' \
    --with-ld-opt='-Wl,-z,relro -Wl,-z,now -fPIC' \
    --modules-path="$DEST" --add-dynamic-module="$moddir" >"$work/configure.log" 2>&1 \
    || { tail -20 "$work/configure.log" >&2; exit 1; }
  make -j"$(nproc)" modules >"$work/make.log" 2>&1 || { grep -E 'error|warning' "$work/make.log" | head -20 >&2; exit 1; }
)
$SUDO install -m 0644 "$src/objs/$MODULE" "$DEST/$MODULE"
echo "$digest" | $SUDO tee "$DEST/$MODULE.digest" >/dev/null
# nginx loads it, or says why (version, signature): fail the build here rather than at the first start.
conf="$work/check.conf"
printf 'load_module %s;\nevents {}\nhttp { portico_metrics_zone 1m; portico_metrics_key $host; }\n' "$DEST/$MODULE" >"$conf"
nginx -t -q -e stderr -p "$work" -c "$conf" -g "pid $work/nginx.pid;" >&2
echo "[modules] installed $DEST/$MODULE" >&2
