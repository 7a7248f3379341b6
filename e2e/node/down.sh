#!/usr/bin/env bash
# Removes the real node (`make node-down`; e2e/controlplane/down.sh calls it first): its pods and Node object (when
# the apiserver answers), every process (kubelet, kube-proxy, kube-scheduler, containerd, shims, containers), the
# mounts below $NODE_STATE (kubelet root bind mount, pod volumes, container root filesystems, sandbox /dev/shm,
# network namespaces), the kubepods cgroups of every hierarchy, the CNI bridge and veths, the KUBE-* and CNI-*
# iptables chains of both families, conntrack entries of the node's ranges, the kernel settings it changed, and
# the state directory. Works the same after a crash or kill -9 of everything: nothing here depends on a daemon
# still running. Idempotent; returns at once when there is nothing to remove.
set -uo pipefail
source "$(dirname "$0")/env.sh"

our_mounts() { # mount points below $NODE_STATE (octal escapes of mountinfo decoded), deepest first
  awk -v p="$NODE_STATE" '{ m = $5; gsub(/\\040/, " ", m); if (m == p || index(m, p "/") == 1) print m }' /proc/self/mountinfo |
    awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-
}
kubepods_cgroups() { for h in /sys/fs/cgroup/*/; do [[ -d "$h/kubepods" ]] && echo "$h/kubepods"; done; }
# our_pids [binary...]: processes running one of these binaries (exact path); without arguments, any of the
# node's binaries, and runc working on the node's state root.
our_pids() {
  local p exe b bins=("$@")
  ((${#bins[@]})) || bins=("${NODE_BINS[@]}")
  for p in /proc/[0-9]*; do
    exe="$(readlink "$p/exe" 2>/dev/null)" || continue
    for b in "${bins[@]}"; do [[ "$exe" == "$b" ]] && { echo "${p#/proc/}"; continue 2; }; done
    (($#)) && continue
    [[ "$exe" == */runc ]] && tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -qF -- "--root $NODE_STATE/runc" &&
      echo "${p#/proc/}"
  done
}
kube_rules() { # iptables-save output of KUBE-*/CNI-* chains and of the rules jumping to them, for one family
  "$1-save" 2>/dev/null | grep -E '^\*|^:(KUBE|CNI)-|-j (KUBE|CNI)-|^-A (KUBE|CNI)-'
}
anything_left() {
  [[ -e "$NODE_STATE" ]] || [[ -n "$(our_mounts)" ]] || [[ -n "$(kubepods_cgroups)" ]] || [[ -n "$(our_pids)" ]] ||
    ip link show "$REAL_BRIDGE" >/dev/null 2>&1 || iptables -w -t mangle -S "$FWD_CHAIN" >/dev/null 2>&1 ||
    kube_rules iptables | grep -q '^:' || kube_rules ip6tables | grep -q '^:'
}
if ! anything_left; then exit 0; fi

# 1. The kubelet (it would restart containers, or register the Node again), kube-proxy and the scheduler: nothing
#    they would do on a graceful stop is needed, their state is removed below.
kill -KILL $(our_pids "$KUBELET_BIN" "$KUBE_PROXY_BIN" "$SCHEDULER_BIN") 2>/dev/null

# 2. The API side, when the apiserver answers: the pods bound to the node (force: no kubelet will confirm) and the
#    Node itself. A Deployment's replacements then wait, unscheduled, for the next node-up.
if [[ -f "$KUBECONFIG_ADMIN" ]] && curl_api /readyz >/dev/null 2>&1; then
  kc delete pods --all-namespaces --field-selector "spec.nodeName=$REAL_NODE_NAME" --grace-period=0 --force \
    --wait=false >/dev/null 2>&1 || true
  kc delete node "$REAL_NODE_NAME" --wait=false >/dev/null 2>&1 || true
fi

# 3. The containers (every process of a kubepods cgroup, thawed first in case it was frozen), then containerd and
#    the shims, then anything else running the node's binaries.
for _ in $(seq 50); do
  procs="$(for cg in $(kubepods_cgroups); do
    find "$cg" -name freezer.state -exec sh -c 'echo THAWED > "$1"' _ {} \; 2>/dev/null
    find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u)"
  [[ -z "$procs" ]] && break
  kill -KILL $procs 2>/dev/null
  sleep 0.1
done
for _ in $(seq 50); do
  pids="$(our_pids)"
  [[ -z "$pids" ]] && break
  kill -KILL $pids 2>/dev/null
  sleep 0.1
done

# 4. Mounts below $NODE_STATE, deepest first; a busy one is detached lazily. Repeated: unmounting one can uncover
#    another (the kubelet's root bind mount sits on top of its own directory).
for _ in 1 2 3 4 5; do
  m="$(our_mounts)"
  [[ -z "$m" ]] && break
  while IFS= read -r mp; do umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null; done <<<"$m"
done

# 5. cgroups: the kubepods trees of every hierarchy, leaves first.
for cg in $(kubepods_cgroups); do
  for _ in 1 2 3; do
    find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
    [[ -d "$cg" ]] || break
    sleep 0.2
  done
done

# 6. Network: the network namespaces died with their mounts and processes (and their veths with them); the
#    bridge, any veth still enslaved to it, the iptables chains of kube-proxy and the CNI plugins, conntrack entries.
for v in $(ip -o link show master "$REAL_BRIDGE" 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
  ip link delete "$v" 2>/dev/null
done
ip link show "$REAL_BRIDGE" >/dev/null 2>&1 && ip link delete "$REAL_BRIDGE" 2>/dev/null  # and the Service route
node_forward_guard del
for fam in iptables ip6tables; do
  command -v "$fam-restore" >/dev/null || continue
  # With --noflush only what is listed changes: jumps into our chains are deleted, then the chains flushed and
  # deleted (per table). Other rules, e.g. the apiserver guard, stay.
  kube_rules "$fam" | awk '
    /^\*/ { if (t != "") emit(); t = $0; nd = 0; nc = 0; next }
    /^:/  { c[++nc] = substr($1, 2); next }
    /^-A/ { if ($2 !~ /^(KUBE|CNI)-/) { sub(/^-A/, "-D"); d[++nd] = $0 } }
    function emit(  i) {
      if (nd + nc == 0) return
      print t
      for (i = 1; i <= nd; i++) print d[i]
      for (i = 1; i <= nc; i++) print "-F " c[i]
      for (i = 1; i <= nc; i++) print "-X " c[i]
      print "COMMIT"
    }
    END { if (t != "") emit() }' | "$fam-restore" -w --noflush 2>/dev/null || nlog "$fam: could not remove every KUBE-/CNI- chain"
done
if command -v conntrack >/dev/null; then
  for cidr in "$REAL_POD_CIDR" "$SERVICE_CIDR"; do
    conntrack -D -s "$cidr" >/dev/null 2>&1; conntrack -D -d "$cidr" >/dev/null 2>&1
  done
fi

# 7. Kernel settings back to what they were before node-up.
if [[ -f "$NODE_STATE/sysctl.orig" ]]; then
  while IFS='=' read -r k v; do
    [[ -n "$k" ]] && sysctl -qw "$k=$v" 2>/dev/null
  done < "$NODE_STATE/sysctl.orig"
fi

# 8. Files: outside $NODE_STATE, the kubelet's log symlinks into it and libcni's cached results of our network
#    (and their directories when node-up created them); then $NODE_STATE itself, unless a mount is still there.
find /var/log/containers -maxdepth 1 -type l -lname "$NODE_STATE/*" -delete 2>/dev/null
rm -f /var/lib/cni/results/portico-* 2>/dev/null
if [[ -f "$NODE_STATE/created-dirs" ]]; then
  while IFS= read -r d; do
    [[ "$d" == /var/lib/cni ]] && rm -rf /var/lib/cni/results /var/lib/cni/cache 2>/dev/null
    rmdir "$d" 2>/dev/null
  done < "$NODE_STATE/created-dirs"
fi
if [[ -n "$(our_mounts)" ]]; then
  nlog "mounts still below $NODE_STATE; left it in place:"; our_mounts >&2
else
  rm -rf "$NODE_STATE"
fi
nlog "down"
exit 0
