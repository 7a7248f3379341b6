#!/usr/bin/env bash
# Adds a REAL node to the local cluster (`make node-up`): containerd + runc, a CNI bridge, kubelet, kube-proxy and
# kube-scheduler, so that Deployments (e.g. `kubectl apply -k kustomize/`) really run in containers. Brings the
# control plane up first (idempotent), builds what is missing, imports the OCI archives of dist/ (and a fallback
# pause image when dist/ has none), and returns once the Node is Ready. Idempotent: when the node is already up it
# only imports the archives of dist/ that changed since the last import. Layout and addresses: README.md.
set -euo pipefail
source "$(dirname "$0")/env.sh"

node_ready() {
  [[ "$(kc get node "$REAL_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}
healthy() {
  local d
  for d in containerd kubelet kube-proxy kube-scheduler; do node_pid_alive "$d" || return 1; done
  node_ready
}

# import_images: every dist/*.oci.tar newer than its last import, and the test image (with the fallback pause image
# when dist/ has no pause.oci.tar). `ctr import` unpacks into the overlayfs snapshotter the CRI plugin uses.
import_images() {
  local f stamp t refs
  mkdir -p "$NODE_STATE/images"
  if [[ ! -f "$NODE_STATE/images/testimage.oci.tar" ]]; then
    local specs=("$TEST_IMAGE=echo")
    [[ -f "$DIST/pause.oci.tar" ]] || specs+=("$SANDBOX_IMAGE=pause")
    bash "$ROOT/e2e/node/oci-archive.sh" "$NODE_STATE/images/testimage.oci.tar" "${specs[@]}"
  fi
  for f in "$DIST"/pause.oci.tar "$DIST"/*.oci.tar "$NODE_STATE/images/testimage.oci.tar"; do
    [[ -f "$f" ]] || continue
    stamp="$NODE_STATE/images/$(basename "$f").imported"
    [[ -f "$stamp" && ! "$f" -nt "$stamp" ]] && continue
    t=$SECONDS
    ctr_k8s images import "$f" >/dev/null
    touch -r "$f" "$stamp"
    nlog "imported $(basename "$f") in $((SECONDS - t))s"
  done
  refs="$(ctr_k8s images ls -q | grep -v '^sha256:' | tr '\n' ' ')"
  nlog "images: $refs"
  [[ " $refs " == *" $SANDBOX_IMAGE "* ]] || { nlog "sandbox image $SANDBOX_IMAGE missing after import"; return 1; }
}

bash "$ROOT/e2e/controlplane/up.sh"
t0=$SECONDS  # the node alone
if healthy; then
  import_images
  nlog "already up (node $REAL_NODE_NAME)"
  exit 0
fi

# Half-up or crashed: clean first, so up always starts from a known state.
bash "$ROOT/e2e/node/down.sh" >/dev/null 2>&1 || true
trap 'nlog "interrupted: tearing down"; bash "$ROOT/e2e/node/down.sh" >/dev/null 2>&1; exit 130' INT TERM
trap 'rc=$?; if ((rc != 0)); then nlog "failed (rc=$rc): tearing down; logs copied to /tmp/portico-failed-logs"; mkdir -p /tmp/portico-failed-logs; cp "$LOGS"/node-*.log /tmp/portico-failed-logs/ 2>/dev/null || true; bash "$ROOT/e2e/node/down.sh" >/dev/null 2>&1; fi' EXIT

bash "$ROOT/e2e/controlplane/build.sh" node
for b in runc iptables ip6tables conntrack; do
  command -v "$b" >/dev/null || { nlog "$b missing: run make deps"; exit 1; }
done
[[ -x "$CNI_BIN_DIR/bridge" ]] || { nlog "CNI plugins missing in $CNI_BIN_DIR: run make deps"; exit 1; }

mkdir -p "$NODE_RUN" "$NODE_PKI" "$NODE_CONF" "$NODE_PIDS" "$KUBELET_ROOT" "$CONTAINERD_ROOT" "$CONTAINERD_STATE" \
  "$CNI_CONF_DIR" "$CNI_IPAM_DIR" "$NODE_STATE/pod-logs" "$LOGS"
chmod 700 "$NODE_STATE"
# containerd's root (images: content and unpacked overlayfs snapshots, ~450 MB and 10,000 files with Portico's
# image) on a tmpfs: removing that from this machine's ext4 (mounted with online discard) takes ~10 s, a umount
# takes none. The size is a ceiling, not a reservation.
mount -t tmpfs -o size=8g,mode=0700 portico-node-containerd "$CONTAINERD_ROOT"
# Paths outside $NODE_STATE that cannot be configured away: libcni's result cache (/var/lib/cni) and the kubelet's
# container log symlinks (/var/log/containers). Remember which of them the node creates, for down.sh.
for d in /var/lib/cni /var/log/containers; do
  [[ -e "$d" ]] || echo "$d" >> "$NODE_STATE/created-dirs"
done

# --- kernel settings: record once, then set what the node needs ---------------------------------------------
if [[ ! -f "$NODE_STATE/sysctl.orig" ]]; then
  for k in "${NODE_SYSCTLS[@]}"; do
    v="$(sysctl -n "$k" 2>/dev/null)" && printf '%s=%s\n' "$k" "$v"
  done > "$NODE_STATE/sysctl.orig.tmp"
  mv "$NODE_STATE/sysctl.orig.tmp" "$NODE_STATE/sysctl.orig"
fi
# The bridge exists before the first pod (the CNI bridge plugin adopts it), so that the Service range can be
# routed to it: a ClusterIP no kube-proxy rule rewrote then dies on the bridge instead of taking the default route.
ip link add "$REAL_BRIDGE" type bridge
ip addr add "$REAL_POD_GW/${REAL_POD_CIDR#*/}" dev "$REAL_BRIDGE"
ip link set "$REAL_BRIDGE" up
ip route add "$SERVICE_CIDR" dev "$REAL_BRIDGE" src "$REAL_POD_GW"
node_forward_guard add
sysctl -qw net.ipv4.ip_forward=1                    # pod → ClusterIP → pod goes through the host
sysctl -qw net.bridge.bridge-nf-call-iptables=1     # kube-proxy's rules see bridged pod-to-pod traffic
sysctl -qw net.bridge.bridge-nf-call-ip6tables=1

# --- identities (issued by the cluster CA) and kubeconfigs ---------------------------------------------------
ossl() { openssl "$@" >/dev/null 2>&1; }
issue() { # issue <name> <subject>: a client certificate from the cluster CA
  ossl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$NODE_PKI/$1.key" -out "$NODE_PKI/$1.csr"
  printf 'extendedKeyUsage=clientAuth\n' > "$NODE_PKI/$1.ext"
  ossl x509 -req -in "$NODE_PKI/$1.csr" -CA "$CERTS/ca.crt" -CAkey "$CERTS/ca.key" -CAcreateserial -days 365 \
    -out "$NODE_PKI/$1.crt" -extfile "$NODE_PKI/$1.ext"
}
issue kubelet "/O=system:nodes/CN=system:node:$REAL_NODE_NAME"   # Node authorizer + NodeRestriction
issue kube-proxy "/CN=system:kube-proxy"                          # bootstrap binding system:node-proxier
issue kube-scheduler "/CN=system:kube-scheduler"                  # bootstrap roles system:kube-scheduler, volume-scheduler
# The kubelet's serving certificate is self-signed (the apiserver does not verify kubelets here).
ossl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$REAL_NODE_NAME" \
  -addext "subjectAltName=DNS:$REAL_NODE_NAME,IP:$API_ADDR" -addext "extendedKeyUsage=serverAuth" \
  -keyout "$NODE_PKI/kubelet-serving.key" -out "$NODE_PKI/kubelet-serving.crt"
chmod 600 "$NODE_PKI"/*.key
for who in kubelet kube-proxy kube-scheduler; do
  f="$NODE_PKI/$who.kubeconfig"
  KUBECONFIG="$f" kubectl config set-cluster local --server="https://127.0.0.1:$APISERVER_PORT" \
    --certificate-authority="$CERTS/ca.crt" --embed-certs >/dev/null
  KUBECONFIG="$f" kubectl config set-credentials "$who" --client-certificate="$NODE_PKI/$who.crt" \
    --client-key="$NODE_PKI/$who.key" --embed-certs >/dev/null
  KUBECONFIG="$f" kubectl config set-context local --cluster=local --user="$who" >/dev/null
  KUBECONFIG="$f" kubectl config use-context local >/dev/null
done

# --- configuration files ---------------------------------------------------------------------------------------
cat > "$NODE_CONF/containerd.toml" <<TOML
# containerd for the real node: every path under $NODE_STATE, CRI only, no registry (images are imported).
version = 3
root = "$CONTAINERD_ROOT"
state = "$CONTAINERD_STATE"
imports = []
disabled_plugins = [
  "io.containerd.internal.v1.opt",               # would create /opt/containerd
  "io.containerd.nri.v1.nri",                    # would listen on /var/run/nri/nri.sock
  "io.containerd.image-verifier.v1.bindir",
  "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.snapshotter.v1.native",
  "io.containerd.tracing.processor.v1.otlp",
]

[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.shim.v1.manager"]
  socket_dir = "$NODE_RUN/s"                     # not /run/containerd/s

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$SANDBOX_IMAGE"

[plugins."io.containerd.cri.v1.runtime"]
  disable_apparmor = true
  # Root on this kind of machine lacks CAP_SYS_RESOURCE, so runc cannot lower a container's oom_score_adj (the
  # sandbox asks for -998): keep every container at or above containerd's own score instead.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true            # $CONTAINERD_STATE/netns, not /run/netns
  cdi_spec_dirs = []
  enable_criu = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_BIN_DIR"]
    conf_dir = "$CNI_CONF_DIR"
    max_conf_num = 1
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = "$CONTAINERD_SHIM_RUNC_V2_BIN"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$NODE_STATE/runc"                # runc's state, not /run/containerd/runc
        SystemdCgroup = false

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
TOML

cat > "$CNI_CONF_DIR/10-portico.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "portico",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$REAL_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$CNI_IPAM_DIR",
        "ranges": [[{ "subnet": "$REAL_POD_CIDR", "gateway": "$REAL_POD_GW" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON

cat > "$NODE_CONF/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false            # the machine mounts cgroup v1; kubelet >= 1.35 refuses it otherwise
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
imageServiceEndpoint: unix://$CONTAINERD_SOCK
address: $API_ADDR
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $NODE_PKI/kubelet-serving.crt
tlsPrivateKeyFile: $NODE_PKI/kubelet-serving.key
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $CERTS/ca.crt }
authorization: { mode: Webhook }
clusterDomain: cluster.local
clusterDNS: [$CLUSTER_DNS]
resolvConf: ""                 # no host resolv.conf is passed to pods
podLogsDir: $NODE_STATE/pod-logs
failSwapOn: false
rotateCertificates: false
serverTLSBootstrap: false
protectKernelDefaults: false
evictionHard: { memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%" }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 110
YAML

cat > "$NODE_CONF/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $NODE_PKI/kube-proxy.kubeconfig }
hostnameOverride: $REAL_NODE_NAME
mode: iptables
clusterCIDR: $REAL_POD_CIDR
detectLocalMode: ClusterCIDR
nodePortAddresses: ["127.0.0.1/32"]   # NodePorts answer on loopback only (sets route_localnet)
iptables: { localhostNodePorts: true, syncPeriod: 30s, minSyncPeriod: 1s }
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# 0: leave the machine's conntrack settings as they are.
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
YAML

cat > "$NODE_CONF/kube-scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: { kubeconfig: $NODE_PKI/kube-scheduler.kubeconfig }
leaderElection: { leaderElect: false }
YAML

# --- daemons -----------------------------------------------------------------------------------------------
node_daemon() { # node_daemon <name> <command...>: detached, pid in $NODE_PIDS, log in $LOGS/node-<name>.log
  local name="$1"; shift
  setsid nohup "$@" >"$LOGS/node-$name.log" 2>&1 < /dev/null &
  echo $! > "$NODE_PIDS/$name.pid"
}
t1=$SECONDS
PATH="/usr/sbin:/usr/bin:/sbin:/bin" node_daemon containerd "$CONTAINERD_BIN" --config "$NODE_CONF/containerd.toml" --log-level warn
wait_for containerd 30 ctr_k8s version
import_images
t2=$SECONDS
node_daemon kube-proxy "$KUBE_PROXY_BIN" --config="$NODE_CONF/kube-proxy.yaml" --v=1
node_daemon kubelet "$KUBELET_BIN" --config="$NODE_CONF/kubelet.yaml" --kubeconfig="$NODE_PKI/kubelet.kubeconfig" \
  --root-dir="$KUBELET_ROOT" --hostname-override="$REAL_NODE_NAME" --node-ip="$API_ADDR" --v=1
node_daemon kube-scheduler "$SCHEDULER_BIN" --config="$NODE_CONF/kube-scheduler.yaml" --secure-port=0 --v=1
# The fake node is for the harness's own pods (bound by name); it must never be picked by the scheduler. up.sh
# creates it tainted; a control plane started by an older up.sh gets the taint here.
kc taint node "$NODE_NAME" portico.dev/fake-node=true:NoSchedule --overwrite >/dev/null
wait_for "Node $REAL_NODE_NAME Ready" 120 node_ready
# The kubelet registers its Node with the node.kubernetes.io/not-ready:NoSchedule taint, which the node lifecycle
# controller lifts once the node is Ready. That controller is not run here (it would find the fake node's
# heartbeat stale, mark it unreachable and its pods NotReady), so the taint is lifted here, once.
kc taint node "$REAL_NODE_NAME" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true

trap - EXIT INT TERM
nlog "node $REAL_NODE_NAME Ready in $((SECONDS - t0))s (containerd + images $((t2 - t1))s, kubelet to Ready $((SECONDS - t2))s)"
