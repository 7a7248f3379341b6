#!/usr/bin/env bash
# Stops everything up.sh started and removes its state: the real node first when it is up (e2e/node/down.sh),
# processes (by pid file, then any stray whose command line points into .dev), the network namespace, veth, route,
# the apiserver's advertised address and its iptables guard. Idempotent; safe after a crash.
set -uo pipefail
source "$(dirname "$0")/env.sh"

bash "$ROOT/e2e/node/down.sh"

for name in podhost kube-controller-manager kube-apiserver etcd; do stop_pid "$name"; done
release_bench_ports
# Portico's nginx instances under .dev (tests, benchmarks, the quickstart) each run in their own process group,
# led by its master. SIGQUIT the group (graceful, also for workers whose master is gone), then SIGKILL the rest: a
# master killed alone (as the stray sweep below would) leaves its workers bound to the ports. Only groups made of
# nginx processes are touched.
for f in "$DEV"/*/nginx.pid "$DEV"/*/*/nginx.pid; do
  [[ -f "$f" ]] || continue
  pg="$(cat "$f" 2>/dev/null)"
  [[ "$pg" =~ ^[0-9]+$ ]] || continue
  all="$(pgrep -g "$pg" | sort)"; ours="$(pgrep -g "$pg" -x nginx | sort)"
  [[ -n "$all" && "$all" == "$ours" ]] || continue
  kill -QUIT -- "-$pg" 2>/dev/null || true
  for _ in $(seq 50); do pgrep -g "$pg" >/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pg" 2>/dev/null || true
done
# Strays: anything still running with our state dir or binaries in its command line (crash, lost pid file).
for pat in "$DEV/" "$ROOT/e2e/podhost/daemon.ts" "$(basename "$APISERVER_BIN")" "$(basename "$KCM_BIN")" "$(basename "$ETCD_BIN")"; do
  pkill -KILL -f -- "$pat" 2>/dev/null || true
done
if ip netns list 2>/dev/null | grep -qw "$NETNS"; then
  for pid in $(ip netns pids "$NETNS" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  ip netns delete "$NETNS" 2>/dev/null || true
fi
ip link show "$VETH_HOST" >/dev/null 2>&1 && ip link delete "$VETH_HOST" 2>/dev/null
for cidr in $POD_CIDRS; do ip route show "$cidr" 2>/dev/null | grep -q . && ip route delete "$cidr" 2>/dev/null; done
ip -br addr show dev lo | grep -qF " $API_ADDR/32" && ip addr delete "$API_ADDR/32" dev lo 2>/dev/null
api_guard del
rm -rf "$DEV/etcd" "$CERTS" "$PIDS" "$DEV/podhost.sock" "$DEV/kcm.kubeconfig" "$KUBECONFIG_ADMIN" "$DEV/sa-kubeconfigs"
rm -rf "$LOGS"
log "down"
exit 0
