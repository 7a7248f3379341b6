#!/usr/bin/env bash
# Brings the local control plane up, runs every e2e test file, and tears everything down (also on failure or
# Ctrl-C). E2E_KEEP=1 leaves the cluster running for debugging. Extra args: test files to run instead of all.
set -euo pipefail
cd "$(dirname "$0")/.."
# One local cluster per machine (fixed ports, netns and addresses): a second run — another work tree's — waits here.
exec 9>/tmp/portico-e2e.lock
flock 9
t0=$SECONDS
# The suites listen on fixed ports (28080-29199, 52080-54399) inside Linux's ephemeral range: keep the kernel from
# handing them to outgoing connections meanwhile (a client socket on 127.0.0.1:53682 once made nginx's bind fail),
# and restore the previous reservation afterwards.
RESERVED=/proc/sys/net/ipv4/ip_local_reserved_ports
reserved_before=""
if [[ -w $RESERVED ]]; then
  reserved_before=$(cat "$RESERVED")
  echo "${reserved_before:+$reserved_before,}28080-29199,52080-54399" > "$RESERVED" || true
fi
cleanup() {
  [[ -w $RESERVED ]] && echo "$reserved_before" > "$RESERVED" || true
  [[ "${E2E_KEEP:-0}" == 1 ]] || bash e2e/controlplane/down.sh >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bash e2e/controlplane/up.sh 9>&-   # its daemons must not hold the lock
files=("$@")
((${#files[@]})) || mapfile -t files < <(ls e2e/*.e2e.test.ts)
node_modules/.bin/node --test --test-concurrency=1 --test-timeout=600000 "${files[@]}"
echo "[e2e] suite took $((SECONDS - t0))s" >&2
