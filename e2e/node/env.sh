# Layout of the real node (sourced by e2e/node/up.sh and down.sh; e2e/node/README.md explains the choices).
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../controlplane" && pwd)/env.sh"

REAL_NODE_NAME=portico-kubelet-0
# Everything the node makes on disk lives here, outside the work tree: the kubelet bind-mounts its root directory
# onto itself (rshared) and pod volumes, container root filesystems and network namespaces are mounts below it, so
# it must not be a directory that git, an editor or an `rm -rf .dev` walks into, and one fixed path per machine
# matches the one node a machine can run (fixed ports, interface names).
NODE_STATE=/var/lib/portico-node
NODE_RUN="$NODE_STATE/run"          # containerd's sockets, the shims' sockets (s/)
NODE_PKI="$NODE_STATE/pki"          # node identities, issued by the cluster CA of .dev/certs
NODE_CONF="$NODE_STATE/config"      # containerd.toml, kubelet.yaml, kube-proxy.yaml, kube-scheduler.yaml
NODE_PIDS="$NODE_STATE/pids"
KUBELET_ROOT="$NODE_STATE/kubelet"
CONTAINERD_ROOT="$NODE_STATE/containerd"        # content store, snapshots, metadata
CONTAINERD_STATE="$NODE_STATE/containerd-state" # tasks, sandboxes, network namespaces (netns/)
CNI_CONF_DIR="$NODE_STATE/cni/net.d"
CNI_IPAM_DIR="$NODE_STATE/cni/ipam"             # host-local's allocations
CNI_BIN_DIR=/usr/lib/cni                        # Debian's containernetworking-plugins
CONTAINERD_SOCK="$NODE_RUN/containerd.sock"

# Addresses (RFC 2544 198.18.0.0/15, the half the fake node does not use; see README.md for the whole map).
REAL_POD_CIDR=198.19.192.0/20  # the CNI bridge's range (host-local)
REAL_POD_GW=198.19.192.1       # on $REAL_BRIDGE (set in controlplane/env.sh)
CLUSTER_DNS=198.19.0.10        # in the Service range; nothing answers there (no cluster DNS)
KUBELET_PORT=10250             # on $API_ADDR (the node's InternalIP)

SANDBOX_IMAGE=localhost/portico/pause:1
TEST_IMAGE=localhost/portico/node-test:1   # e2e/node/testimage's echo, always imported
DIST="$ROOT/dist"

eval "$(bash "$ROOT/e2e/controlplane/build.sh" paths)"
NODE_BINS=("$KUBELET_BIN" "$KUBE_PROXY_BIN" "$SCHEDULER_BIN" "$CONTAINERD_BIN" "$CONTAINERD_SHIM_RUNC_V2_BIN" "$CTR_BIN")

# Kernel settings the node changes (the CNI bridge and kube-proxy: forwarding, route_localnet for NodePorts on
# 127.0.0.1, br_netfilter; the kubelet: its "kernel tunables"). up.sh records them once, down.sh restores them.
NODE_SYSCTLS=(net.ipv4.ip_forward net.ipv4.conf.all.route_localnet
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes
  net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
  net.netfilter.nf_conntrack_tcp_timeout_close_wait)

# With the node up the machine forwards (pod → ClusterIP → pod needs it). PORTICO-NODE-FWD (mangle FORWARD, so it
# runs before kube-proxy's ACCEPTs in filter FORWARD) keeps forwarding to the node's bridge and the fake node's veth:
# a pod packet that no kube-proxy rule rewrote (say, a DNS query to $CLUSTER_DNS) is dropped here instead of leaving
# through the machine's own interfaces, and nothing from outside is forwarded to pods.
FWD_CHAIN=PORTICO-NODE-FWD
node_forward_guard() { # node_forward_guard add|del
  while iptables -w -t mangle -D FORWARD -j "$FWD_CHAIN" 2>/dev/null; do :; done
  iptables -w -t mangle -F "$FWD_CHAIN" 2>/dev/null && iptables -w -t mangle -X "$FWD_CHAIN" 2>/dev/null || true
  [[ "$1" == add ]] || return 0
  iptables -w -t mangle -N "$FWD_CHAIN"
  local a b
  for a in "$REAL_BRIDGE" "$VETH_HOST"; do
    for b in "$REAL_BRIDGE" "$VETH_HOST"; do iptables -w -t mangle -A "$FWD_CHAIN" -i "$a" -o "$b" -j RETURN; done
  done
  for a in "$REAL_BRIDGE" "$VETH_HOST"; do
    iptables -w -t mangle -A "$FWD_CHAIN" -i "$a" -j DROP
    iptables -w -t mangle -A "$FWD_CHAIN" -o "$a" -j DROP
  done
  iptables -w -t mangle -I FORWARD -j "$FWD_CHAIN"
}

nlog() { echo "[node] $*" >&2; }
node_pid_alive() { [[ -f "$NODE_PIDS/$1.pid" ]] && kill -0 "$(cat "$NODE_PIDS/$1.pid")" 2>/dev/null; }
kc() { KUBECONFIG="$KUBECONFIG_ADMIN" kubectl --request-timeout=5s "$@"; }
ctr_k8s() { "$CTR_BIN" --address "$CONTAINERD_SOCK" --namespace k8s.io "$@" 2> >(grep -v 'support for cgroup v1 is deprecated' >&2); }
