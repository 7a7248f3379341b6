#!/usr/bin/env bash
# image/smoke.sh [ARCHIVE]: proves the Portico image works without a kubelet. The archive (default
# dist/portico-<version>.oci.tar) is read by skopeo (digests checked) and unpacked by umoci into a runtime bundle
# whose config.json comes from the image's own config (user, entrypoint, env, working directory); then each check
# runs in it with runc the way the Deployment runs Portico: uid 101 from the image, read-only root, no
# capabilities, no-new-privileges, tmpfs on /run/portico and /tmp, and a network namespace of its own where only
# loopback exists (nothing leaves the box).
# Checks: Node 24 as uid 101; the root really read-only; nginx -V; nginx -t and a run of a config that loads the
# Lua module and runs Portico's FFI crypto (libcrypto, libcrypt) and cjson in the worker (image/smoke/lua.conf);
# Portico's real nginx.conf rendered, validated, started and confirmed live (image/smoke/portico-nginx.mjs); the
# image's own ENTRYPOINT (tini -> node main.js) loading Portico's whole module graph, and `portico migrate` and
# client-node's KubeConfig adapter (the modules imported only on demand).
# Needs root (runc, ip netns). Every container, the network namespace and the bundle are removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
source image/lib.sh

need runc skopeo umoci ip
if [[ $(id -u) -ne 0 ]]; then
  log "smoke test: needs root (runc, ip netns)"
  exit 1
fi
version=$(project_version)
archive=${1:-dist/portico-$version.oci.tar}
[[ -s $archive ]] || { log "smoke test: no $archive (make image builds it)"; exit 1; }
NODE=$PWD/node_modules/.bin/node # edits the runtime spec (JSON) on the host
[[ -x $NODE ]] || NODE=node

start=$SECONDS
tmp=$(mktemp -d /tmp/portico-smoke.XXXXXX)
netns="portico-smoke-$$"
ids=()
cleanup() {
  local id
  for id in "${ids[@]}"; do runc delete --force "$id" >/dev/null 2>&1 || true; done
  ip netns delete "$netns" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

skopeo copy --quiet "oci-archive:$archive" "oci:$tmp/layout:smoke"
umoci unpack --image "$tmp/layout:smoke" "$tmp/bundle" >/dev/null
mv "$tmp/bundle/config.json" "$tmp/image-config.json"
unpacked=$(du -sb "$tmp/bundle/rootfs" | cut -f1)

# A network namespace with loopback up and nothing else: nginx binds 127.0.0.1 in it, and no packet can leave.
ip netns add "$netns"
ip -n "$netns" link set lo up

# run NAME EXPECTED_STATUS [ARGS...]: runs ARGS (default: the image's entrypoint) in a fresh container; output
# in $tmp/NAME.out; fails unless the exit status is EXPECTED_STATUS.
run() {
  local name=$1 want=$2 id="portico-smoke-$$-$1" rc=0
  shift 2
  ids+=("$id")
  "$NODE" - "$tmp/image-config.json" "$tmp/bundle/config.json" "$PWD/image/smoke" "/var/run/netns/$netns" "$@" <<'EOF'
const fs = require('node:fs');
const [src, dst, smokeDir, netns, ...args] = process.argv.slice(2);
const c = JSON.parse(fs.readFileSync(src, 'utf8'));
// The user comes from the image config: it must be Portico's 101:101.
if (c.process.user.uid !== 101 || c.process.user.gid !== 101) {
  console.error(`image user is ${c.process.user.uid}:${c.process.user.gid}, expected 101:101`);
  process.exit(1);
}
if (args.length) c.process.args = args;
c.process.terminal = false;
c.process.noNewPrivileges = true; // allowPrivilegeEscalation: false
c.process.capabilities = { bounding: [], effective: [], permitted: [], inheritable: [], ambient: [] }; // drop ALL
c.root.readonly = true; // readOnlyRootFilesystem: true
c.hostname = 'portico-smoke';
c.mounts = c.mounts.filter((m) => !['/tmp', '/run/portico', '/smoke'].includes(m.destination));
c.mounts.push(
  // the Deployment's emptyDirs
  { destination: '/tmp', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777', 'size=64m'] },
  { destination: '/run/portico', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=0700', 'uid=101', 'gid=101', 'size=64m'] },
  // the checks' own files, read-only
  { destination: '/smoke', type: 'bind', source: smokeDir, options: ['rbind', 'ro', 'nosuid', 'nodev'] },
);
c.linux.namespaces = c.linux.namespaces.filter((n) => n.type !== 'network').concat({ type: 'network', path: netns });
fs.writeFileSync(dst, JSON.stringify(c, null, 2));
EOF
  # A hung check fails after 2 minutes instead of hanging the build (runc passes the TERM on to the container).
  timeout --kill-after=10 120 runc run --bundle "$tmp/bundle" "$id" </dev/null >"$tmp/$name.out" 2>&1 || rc=$?
  if [[ $rc != "$want" ]]; then
    log "smoke test FAILED: $name exited $rc (expected $want):"
    cat "$tmp/$name.out" >&2
    exit 1
  fi
}

# expect NAME REGEX: the check's output must match.
expect() {
  if ! grep -Eq -- "$2" "$tmp/$1.out"; then
    log "smoke test FAILED: $1: output does not match /$2/:"
    cat "$tmp/$1.out" >&2
    exit 1
  fi
}

run node 0 /usr/local/bin/node -p '`${process.version} uid=${process.getuid()} gid=${process.getgid()}`'
expect node '^v24\.[0-9]+\.[0-9]+ uid=101 gid=101$'

run readonly 0 /usr/local/bin/node -e '
for (const f of ["/app/x", "/etc/x", "/var/lib/nginx/x", "/var/log/nginx/x"]) {
  try { require("fs").writeFileSync(f, ""); console.log("writable: " + f); process.exit(1); } catch (e) { if (e.code !== "EROFS") throw e; }
}
require("fs").writeFileSync("/tmp/x", ""); require("fs").writeFileSync("/run/portico/x", ""); console.log("read-only root OK")'
expect readonly '^read-only root OK$'

# Portico's malloc addon (operator/memory.ts trims glibc's heaps with it once the controller is quiet), loaded as
# the controller loads it.
run malloc-addon 0 /usr/local/bin/node --input-type=module -e '
const { loadMallocAddon } = await import("/app/operator/memory.js");
const m = loadMallocAddon();
if (m instanceof Error) throw m;
console.log(`malloc addon: trim ${typeof m.trim()}, heap ${m.stats().heapBytes > 0}`)'
expect malloc-addon '^malloc addon: trim boolean, heap true$'

run nginx-V 0 /usr/sbin/nginx -V
expect nginx-V 'nginx version: nginx/'

run nginx-t 0 /usr/sbin/nginx -t -p /tmp/ -c /smoke/lua.conf -e stderr
expect nginx-t 'test is successful'
run nginx-lua 0 /usr/sbin/nginx -p /tmp/ -c /smoke/lua.conf -e stderr
expect nginx-lua '^portico smoke: lua modules and FFI libraries OK$'

run portico-nginx 0 /usr/local/bin/node /smoke/portico-nginx.mjs
expect portico-nginx '^portico smoke: nginx.conf rendered, validated, started and confirmed live'

# The image's own ENTRYPOINT (tini -- node /app/app/main.js) with --help appended. Portico has no --help: it
# rejects unknown flags with one line and status 2, which it can only print once every module has loaded.
ep=$("$NODE" -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).process.args.join("\n")' "$tmp/image-config.json")
mapfile -t entrypoint <<<"$ep"
run entrypoint 2 "${entrypoint[@]}" --help
expect entrypoint '^portico: unknown flag --help$'

# `portico migrate` through the same entrypoint: main.js imports migrate.js (and client-node's YAML) only then.
run migrate 0 "${entrypoint[@]}" migrate -f /smoke/migrate-ingress.yaml --ingress-class nginx
expect migrate '^  everything can move as-is$'
# The other module the controller imports only on demand: client-node's KubeConfig, for kubeconfigs with exec or
# auth-provider plugins (operator/kube/credentials.ts).
run kubeconfig-module 0 /usr/local/bin/node --input-type=module -e '
const m = await import("/app/operator/kube/kubeconfig.js");
console.log("kubeconfig module: " + Object.keys(m).sort().join(","))'
expect kubeconfig-module '^kubeconfig module: .*loadKubeConfig'

log "smoke test passed in $((SECONDS - start)) s: $(head -n1 "$tmp/node.out"), $(grep -o 'nginx version: nginx/[^ ]*' "$tmp/nginx-V.out"), lua + FFI OK, malloc addon OK, Portico's nginx.conf live, entrypoint and migrate OK; unpacked rootfs $(awk -v b="$unpacked" 'BEGIN { printf "%.1f MB", b / 1e6 }')"
