#!/usr/bin/env bash
# Installs everything a fresh Debian bookworm machine lacks to run and test Portico:
#   - Debian packages: nginx + Lua module and libraries, ModSecurity (connector module, libmodsecurity3, OWASP CRS),
#     luajit2 (Lua unit tests), wrk (benchmarks), openssl, iproute2 (network namespaces for test backends), prometheus (the
#     dashboards e2e suite runs its own), php8.2-fpm (a real FastCGI backend for the backend-protocol FCGI test),
#     redis-server (the global rate limit tests run their own);
#   - npm packages, including Node 24 itself (the registry's `node` package → node_modules/.bin/node);
#   - the control-plane binaries (etcd, kube-apiserver, kube-controller-manager) built from Go modules and cached;
#   - Portico's own nginx modules (per-request metrics, h2c, backend certificates checked against subjectAltNames),
#     built against Debian's nginx sources (nginx-assets/modules);
#   - Portico's malloc addon for Node (operator/native), built against the npm package node-api-headers;
#   - an OpenTelemetry Collector built from Go modules with the collector's own builder (e2e/otel/build.sh), cached
#     likewise: the tracing tests export to it.
#   - the Gateway API CRDs of the pinned release, from its Go module (e2e/gateway-api/crds.sh)
#   - oauth2-proxy built from Go modules (e2e/oauth2-proxy/build.sh), cached likewise: the external-auth tests sign in
#     through it.
# Idempotent: each step is skipped when already satisfied.
set -euo pipefail
cd "$(dirname "$0")/../.."

PKGS=(nginx-light libnginx-mod-http-lua libnginx-mod-stream lua-resty-core lua-resty-lrucache lua-cjson luajit2 wrk openssl iproute2 curl
  runc containernetworking-plugins iptables conntrack) # the real node (e2e/node); iptables also guards the apiserver
PKGS+=(libnginx-mod-http-modsecurity modsecurity-crs) # ModSecurity (enable-modsecurity) and the OWASP Core Rule Set
PKGS+=(libnginx-mod-http-brotli-filter libnginx-mod-http-geoip2) # enable-brotli and use-geoip2 (optional-modules.ts)
PKGS+=(mmdebstrap umoci skopeo) # container images (make image / make images, image/)
PKGS+=(prometheus) # e2e/dashboards.e2e.test.ts runs its own Prometheus against Portico
PKGS+=(php8.2-fpm php8.2-cli) # a real FastCGI backend (backend-protocol FCGI): fastcgi.nginx.test.ts starts its own php-fpm
PKGS+=(redis-server) # global rate limits: global-rate-limit.nginx.test.ts and e2e/bench/global-rate-limit.ts run their own
PKGS+=(gcc make libc6-dev libpcre2-dev zlib1g-dev libssl-dev) # Portico's nginx modules (nginx-assets/modules/build.sh), its malloc addon (operator/native/build.sh)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[deps] installing Debian packages: ${missing[*]}" >&2
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The Debian package starts a system nginx on port 80 where an init system exists; Portico runs its own.
  $SUDO service nginx stop >/dev/null 2>&1 || true
  # Likewise Prometheus (port 9090): the dashboards suite starts its own, with its own configuration and storage.
  $SUDO service prometheus stop >/dev/null 2>&1 || true
  # Likewise php-fpm: the FastCGI test starts its own, with its own configuration, inside its network namespace.
  $SUDO service php8.2-fpm stop >/dev/null 2>&1 || true
  # And Redis (port 6379): the tests start their own on their own ports, without persistence.
  $SUDO service redis-server stop >/dev/null 2>&1 || true
fi

if [[ ! -x node_modules/.bin/node ]] || ! node_modules/.bin/node -e 'process.exit(process.versions.node.split(".")[0]==="24"?0:1)'; then
  echo "[deps] npm ci (brings Node 24)" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi

bash nginx-assets/modules/build.sh
bash operator/native/build.sh # Portico's malloc addon (malloc_trim after a burst: operator/memory.ts)
bash e2e/controlplane/build.sh
bash e2e/otel/build.sh
bash e2e/oauth2-proxy/build.sh
bash e2e/gateway-api/crds.sh >/dev/null # the Gateway API CRDs (the gateway-api e2e test installs them)
