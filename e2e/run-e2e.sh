#!/usr/bin/env bash
# Brings the local control plane up, runs every e2e test file, and tears everything down (also on failure or
# Ctrl-C). E2E_KEEP=1 leaves the cluster running for debugging. Extra args: test files to run instead of all.
set -euo pipefail
cd "$(dirname "$0")/.."
# One local cluster per machine (fixed ports, netns and addresses): a second run — another work tree's — waits here.
exec 9>/tmp/portico-e2e.lock
flock 9
t0=$SECONDS
# The suites listen on fixed ports (28080-29199, 52080-54899) inside Linux's ephemeral range: keep the kernel from
# handing them to outgoing connections meanwhile (a client socket on 127.0.0.1:53682 once made nginx's bind fail),
# and restore the previous reservation afterwards.
RESERVED=/proc/sys/net/ipv4/ip_local_reserved_ports
reserved_before=""
if [[ -w $RESERVED ]]; then
  reserved_before=$(cat "$RESERVED")
  echo "${reserved_before:+$reserved_before,}28080-29199,52080-54899" > "$RESERVED" || true
fi
cleanup() {
  [[ -w $RESERVED ]] && echo "$reserved_before" > "$RESERVED" || true
  [[ "${E2E_KEEP:-0}" == 1 ]] || bash e2e/controlplane/down.sh >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bash e2e/controlplane/up.sh 9>&-   # its daemons must not hold the lock
# Every suite must pass whatever ran before it (leftover namespaces, classes, ConfigMaps): the whole run goes through
# the files in two orders on the same cluster — alphabetical, then reversed — unless files are named or E2E_ORDERS
# says otherwise ("forward", "reverse" or both).
files=("$@")
if ((${#files[@]})); then orders="${E2E_ORDERS:-forward}"; else
  mapfile -t files < <(ls e2e/*.e2e.test.ts)
  orders="${E2E_ORDERS:-forward reverse}"
fi
failed=()
for order in $orders; do
  run=("${files[@]}")
  if [[ $order == reverse ]]; then
    run=(); for ((i = ${#files[@]} - 1; i >= 0; i--)); do run+=("${files[i]}"); done
  elif [[ $order != forward ]]; then echo "E2E_ORDERS: unknown order $order" >&2; exit 2; fi
  echo "[e2e] $order order: ${run[*]}" >&2
  # One node --test per file: given several, node sorts them itself, whatever order they were named in.
  for f in "${run[@]}"; do
    node_modules/.bin/node --test --test-timeout=600000 "$f" || failed+=("$order:$f")
  done
done
if ((${#failed[@]})); then echo "[e2e] FAILED: ${failed[*]}" >&2; exit 1; fi
echo "[e2e] suite took $((SECONDS - t0))s" >&2
