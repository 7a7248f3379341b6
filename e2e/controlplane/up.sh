#!/usr/bin/env bash
# Brings up a real, RBAC-enforcing control plane on loopback: etcd, kube-apiserver, kube-controller-manager
# (EndpointSlice, mirroring, GC, namespace, serviceaccount, and for real workloads on the real node of e2e/node:
# deployment, replicaset, disruption, root CA publisher, pod GC), a Node object (tainted NoSchedule: the harness
# binds its pods to it by name), a network namespace for pod IPs and the pod host daemon that runs echo backends
# in it. Idempotent: returns at once when already up.
set -euo pipefail
source "$(dirname "$0")/env.sh"
t0=$SECONDS

healthy() {
  pid_alive etcd && pid_alive kube-apiserver && pid_alive kube-controller-manager && pid_alive podhost &&
    ip -br addr show dev lo | grep -qF " $API_ADDR/32" &&
    [[ "$(curl_api /readyz 2>/dev/null)" == ok ]] && [[ -S "$DEV/podhost.sock" ]] && ip netns list | grep -qw "$NETNS"
}
if healthy; then log "already up (admin kubeconfig: $KUBECONFIG_ADMIN)"; exit 0; fi

# Half-up or crashed: clean first, so up always starts from a known state.
bash "$ROOT/e2e/controlplane/down.sh" >/dev/null 2>&1 || true
trap 'log "interrupted: tearing down"; bash "$ROOT/e2e/controlplane/down.sh" >/dev/null 2>&1; exit 130' INT TERM
trap 'rc=$?; if ((rc != 0)); then log "failed (rc=$rc): tearing down; logs were in $LOGS"; cp -r "$LOGS" /tmp/portico-failed-logs 2>/dev/null || true; bash "$ROOT/e2e/controlplane/down.sh" >/dev/null 2>&1; fi' EXIT

bash "$ROOT/e2e/controlplane/build.sh" all
reserve_bench_ports
mkdir -p "$CERTS/apiserver-tmp" "$PIDS" "$LOGS"

# --- certificates -------------------------------------------------------------------------------------------
ossl() { openssl "$@" >/dev/null 2>&1; }
ossl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=portico-e2e-ca" \
  -keyout "$CERTS/ca.key" -out "$CERTS/ca.crt"
issue() { # issue <name> <subject> [extfile-content]
  local name="$1" subj="$2" ext="${3:-}"
  ossl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$CERTS/$name.key" -out "$CERTS/$name.csr"
  if [[ -n "$ext" ]]; then printf '%s\n' "$ext" > "$CERTS/$name.ext"; fi
  ossl x509 -req -in "$CERTS/$name.csr" -CA "$CERTS/ca.crt" -CAkey "$CERTS/ca.key" -CAcreateserial -days 365 \
    -out "$CERTS/$name.crt" ${ext:+-extfile "$CERTS/$name.ext"}
}
issue apiserver "/CN=kube-apiserver" \
  "subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:198.19.0.1,IP:$API_ADDR
extendedKeyUsage=serverAuth"
issue admin "/O=system:masters/CN=portico-admin" "extendedKeyUsage=clientAuth"
# kube-controller-manager runs its controllers with its own identity, which therefore needs full rights.
issue kcm "/O=system:masters/CN=system:kube-controller-manager" "extendedKeyUsage=clientAuth"
# The apiserver's identity towards kubelets (logs, exec, port-forward on the real node).
issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
ossl genrsa -out "$CERTS/sa.key" 2048
ossl rsa -in "$CERTS/sa.key" -pubout -out "$CERTS/sa.pub"
chmod 600 "$CERTS"/*.key

kubeconfig() { # kubeconfig <file> <user-cert-name>
  KUBECONFIG="$1" kubectl config set-cluster local --server="https://127.0.0.1:$APISERVER_PORT" \
    --certificate-authority="$CERTS/ca.crt" --embed-certs >/dev/null
  KUBECONFIG="$1" kubectl config set-credentials "$2" --client-certificate="$CERTS/$2.crt" \
    --client-key="$CERTS/$2.key" --embed-certs >/dev/null
  KUBECONFIG="$1" kubectl config set-context local --cluster=local --user="$2" >/dev/null
  KUBECONFIG="$1" kubectl config use-context local >/dev/null
}
kubeconfig "$DEV/kcm.kubeconfig" kcm

# --- the apiserver's advertised address ----------------------------------------------------------------------
ip addr add "$API_ADDR/32" dev lo
api_guard add

# --- etcd, kube-apiserver, kube-controller-manager ---------------------------------------------------------
t1=$SECONDS
start_daemon etcd "$ETCD_BIN" --name portico --data-dir "$DEV/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "portico=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level warn
wait_for etcd 30 curl -sf "http://127.0.0.1:$ETCD_CLIENT_PORT/health"
start_apiserver
kubeconfig "$KUBECONFIG_ADMIN.tmp" admin
mv "$KUBECONFIG_ADMIN.tmp" "$KUBECONFIG_ADMIN"
start_daemon kube-controller-manager "$KCM_BIN" --kubeconfig="$DEV/kcm.kubeconfig" \
  --controllers=endpointslice,endpointslicemirroring,garbagecollector,namespace,serviceaccount,serviceaccount-token,deployment,replicaset,disruption,root-ca-cert-publisher,podgc \
  --service-account-private-key-file="$CERTS/sa.key" --root-ca-file="$CERTS/ca.crt" \
  --leader-elect=false --secure-port=0 --concurrent-service-endpoint-syncs=10 \
  --endpointslice-updates-batch-period=0s
log "control plane ready in $((SECONDS - t1))s"

# --- the Node pods are bound to ---------------------------------------------------------------------------
export KUBECONFIG="$KUBECONFIG_ADMIN"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $NODE_NAME
  labels: { kubernetes.io/hostname: $NODE_NAME, topology.kubernetes.io/zone: local }
spec:
  # No kubelet here: the harness binds its pods by name; the scheduler (e2e/node) must never pick this node.
  taints: [{ key: portico.dev/fake-node, value: "true", effect: NoSchedule }]
YAML
now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
kubectl patch node "$NODE_NAME" --subresource=status --type=merge -p "{\"status\":{
  \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"PorticoE2E\",\"message\":\"pod host daemon\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}],
  \"addresses\":[{\"type\":\"InternalIP\",\"address\":\"$NS_ADDR\"},{\"type\":\"Hostname\",\"address\":\"$NODE_NAME\"}],
  \"allocatable\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"10000\"},\"capacity\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"10000\"}}}" >/dev/null

# --- network namespace for pod IPs --------------------------------------------------------------------------
ip netns add "$NETNS"
ip link add "$VETH_HOST" type veth peer name "$VETH_NS"
ip link set "$VETH_NS" netns "$NETNS"
ip addr add "$HOST_ADDR/30" dev "$VETH_HOST"
ip link set "$VETH_HOST" up
ip -n "$NETNS" addr add "$NS_ADDR/30" dev "$VETH_NS"
ip -n "$NETNS" link set "$VETH_NS" up
ip -n "$NETNS" link set lo up
for cidr in $POD_CIDRS; do ip route add "$cidr" via "$NS_ADDR" dev "$VETH_HOST"; done
ip -n "$NETNS" route add default via "$HOST_ADDR"

start_daemon podhost ip netns exec "$NETNS" "$NODE_BIN" "$ROOT/e2e/podhost/daemon.ts" --socket "$DEV/podhost.sock"
wait_for "pod host daemon" 20 test -S "$DEV/podhost.sock"

trap - EXIT INT TERM
log "up in $((SECONDS - t0))s; admin kubeconfig: $KUBECONFIG_ADMIN"
