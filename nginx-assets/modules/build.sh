#!/usr/bin/env bash
# Builds Portico's own nginx modules as dynamic modules for the nginx that Debian installs, and installs them into
# nginx's module directory:
#   portico_metrics  ngx_http_portico_metrics_module.so  the per-request metrics
#   portico_h2c      ngx_http_portico_h2c_module.so      HTTP/1.x and HTTP/2 prior knowledge (h2c) on one plaintext port
#   portico_upstream_ssl  ngx_http_portico_upstream_ssl_module.so  a backend's certificate checked against a list of
#                    subject alternative names (DNS, URI), the SNI apart (BackendTLSPolicy subjectAltNames)
#   portico_vars     ngx_http_portico_vars_module.so     the variables derived on every proxied request (the Host and
#                    X-Request-ID sent, X-Portico-Hop, the access log's upstream names) without a map each
#
# A dynamic module is built against the same nginx version's sources, configured with --with-compat (as Debian's
# nginx is): nginx refuses, at load time, a module whose version or binary signature differs. The sources are
# Debian's own tarball of that version (verified by its SHA-256), configured with the options of Debian's build that
# change nginx's structures. Each module's build is cached by its source digest: it is built again only when that
# module or the pinned nginx changes (the modules out of date are built together, by one configure). Needs gcc,
# make and the headers of PCRE2, zlib and OpenSSL (install-deps.sh).
#
# Usage: bash nginx-assets/modules/build.sh [module directory, default /usr/lib/nginx/modules]
set -euo pipefail
# The destination as given, made absolute before this script moves to its own directory.
DEST=$(realpath -m "${1:-/usr/lib/nginx/modules}")
cd "$(dirname "$0")"

NGINX_VERSION=1.22.1
NGINX_SHA256=9ebb333a9e82b952acd3e2b4aeb1d4ff6406f72491bab6cd9fe69f0dea737f31
NGINX_URL="http://deb.debian.org/debian/pool/main/n/nginx/nginx_${NGINX_VERSION}.orig.tar.gz"
# Portico's modules: their directories here, each with the nginx "config" file that names its .so.
MODULE_DIRS=(portico_metrics portico_h2c portico_upstream_ssl portico_vars)
so_of() { echo "$(sed -n 's/^ngx_addon_name=//p' "$1/config").so"; }
# What decides whether a module is current: the pinned nginx and the module's own files.
digest_of() { (echo "$NGINX_VERSION $NGINX_SHA256"; cat "$1/config" "$1"/*.[ch]) | sha256sum | cut -c1-16; }
# A configuration that makes nginx load the module and parse its directives (nginx -t after the install). nginx -t
# binds the listen addresses and tolerates one already in use.
check_http() {
  case $1 in
    portico_metrics) echo 'portico_metrics_zone 1m; portico_metrics_key $host;' ;;
    portico_h2c) echo 'portico_h2c_ports 31079; server { listen 127.0.0.1:31079; }' ;;
    # The CA file: any PEM certificate nginx -t can read (Debian's ca-certificates, installed with nginx's OpenSSL).
    portico_upstream_ssl) echo 'server { listen 127.0.0.1:31079; location / { proxy_pass https://127.0.0.1:31080;
      portico_upstream_ssl_verify_names DNS:backend.example.com URI:spiffe://example.com/backend;
      portico_upstream_ssl_trusted_certificate /etc/ssl/certs/ca-certificates.crt; } }' ;;
    portico_vars) echo 'portico_coalesce $a $http_host $host; portico_if $b $https 443 80; portico_hop $c $d $http_x_hop 0123abcd;
      upstream u { server 127.0.0.1:31080; portico_peer_handoff; keepalive 2; } portico_data_generation;
      server { listen 127.0.0.1:31079; portico_header_if_set Strict-Transport-Security $a; }' ;;
  esac
}

installed=$(nginx -v 2>&1 | sed -n 's|^nginx version: nginx/||p')
if [[ "$installed" != "$NGINX_VERSION" ]]; then
  echo "[modules] the installed nginx is ${installed:-missing}; Portico's modules are built for nginx $NGINX_VERSION (Debian bookworm): change NGINX_VERSION and NGINX_SHA256 in $0" >&2
  exit 1
fi

mkdir -p "$DEST" 2>/dev/null || sudo mkdir -p "$DEST"
SUDO=""; [[ $(id -u) -eq 0 || -w "$DEST" ]] || SUDO="sudo"
# Another directory (an image being staged) gets a copy of the installed build when that one is current.
SYSTEM=/usr/lib/nginx/modules
build=()
for dir in "${MODULE_DIRS[@]}"; do
  so=$(so_of "$dir")
  digest=$(digest_of "$dir")
  if [[ -f "$DEST/$so" && -f "$DEST/$so.digest" && "$(cat "$DEST/$so.digest")" == "$digest" ]]; then
    continue
  fi
  if [[ "$DEST" != "$SYSTEM" && -f "$SYSTEM/$so" && "$(cat "$SYSTEM/$so.digest" 2>/dev/null)" == "$digest" ]]; then
    $SUDO install -m 0644 "$SYSTEM/$so" "$DEST/$so"
    echo "$digest" | $SUDO tee "$DEST/$so.digest" >/dev/null
    continue
  fi
  build+=("$dir")
done
[[ ${#build[@]} -eq 0 ]] && exit 0

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
add=()
for dir in "${build[@]}"; do add+=(--add-dynamic-module="$PWD/$dir"); done
echo "[modules] building ${build[*]} against nginx $NGINX_VERSION" >&2
(
  cd "$src"
  # Debian's configure options that shape nginx's structures (nginx -V); the modules Debian builds dynamically
  # (geoip, image filter, perl, xslt, mail, stream) are left out: they do not change what these modules see.
  ./configure --with-compat --with-debug --with-pcre-jit --with-threads \
    --with-http_ssl_module --with-http_stub_status_module --with-http_realip_module --with-http_auth_request_module \
    --with-http_v2_module --with-http_dav_module --with-http_slice_module --with-http_addition_module \
    --with-http_gunzip_module --with-http_gzip_static_module --with-http_sub_module \
    --with-cc-opt='-g -O2 -fstack-protector-strong -Wformat -Werror=format-security -fPIC -D_FORTIFY_SOURCE=2' \
    --with-ld-opt='-Wl,-z,relro -Wl,-z,now -fPIC' \
    --modules-path="$DEST" "${add[@]}" >"$work/configure.log" 2>&1 \
    || { tail -20 "$work/configure.log" >&2; exit 1; }
  make -j"$(nproc)" modules >"$work/make.log" 2>&1 || { grep -E 'error|warning' "$work/make.log" | head -20 >&2; exit 1; }
)
for dir in "${build[@]}"; do
  so=$(so_of "$dir")
  $SUDO install -m 0644 "$src/objs/$so" "$DEST/$so"
  digest_of "$dir" | $SUDO tee "$DEST/$so.digest" >/dev/null
  # nginx loads it, or says why (version, signature): fail the build here rather than at the first start.
  conf="$work/check.conf"
  printf 'load_module %s;\nevents {}\nhttp { %s }\n' "$DEST/$so" "$(check_http "$dir")" >"$conf"
  nginx -t -q -e stderr -p "$work" -c "$conf" -g "pid $work/nginx.pid;" >&2
  echo "[modules] installed $DEST/$so" >&2
done
