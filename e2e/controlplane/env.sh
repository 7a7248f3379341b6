# Shared layout of the local control plane (sourced by up.sh, down.sh, ctl.sh).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEV="$ROOT/.dev"
CERTS="$DEV/certs"
PIDS="$DEV/pids"
LOGS="$DEV/logs"
ETCD_CLIENT_PORT=12379
ETCD_PEER_PORT=12380
APISERVER_PORT=16443
NETNS=portico-pods
VETH_HOST=portico-h0
VETH_NS=portico-p0
HOST_ADDR=198.19.255.1   # root-namespace end of the veth (RFC 2544 range; never an address the machine may use)
NS_ADDR=198.19.255.2     # netns end of the veth; also the Node's InternalIP
POD_CIDR=198.51.100.0/24 # pod IPs (TEST-NET-2), /32s on the netns loopback
POD_CIDRS="198.51.100.0/24 203.0.113.0/24 198.18.0.0/16" # all pools the pod host allocates from
# Service cluster IPs (virtual: nothing routes them) from the other half of RFC 2544's 198.18.0.0/15 — never from
# 10/8, 172.16/12 or 192.168/16, which may be real networks wherever this runs.
SERVICE_CIDR="198.19.0.0/17"
NODE_NAME=portico-node-0
KUBECONFIG_ADMIN="$DEV/kubeconfig"
NODE_BIN="$ROOT/node_modules/.bin/node"
eval "$(bash "$ROOT/e2e/controlplane/build.sh" paths)"

log() { echo "[cluster] $*" >&2; }

pid_alive() { [[ -f "$PIDS/$1.pid" ]] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }

curl_api() {
  curl -sS --max-time 3 --cacert "$CERTS/ca.crt" --cert "$CERTS/admin.crt" --key "$CERTS/admin.key" \
    "https://127.0.0.1:$APISERVER_PORT$1"
}

wait_for() { # wait_for <what> <seconds> <command...>
  local what="$1" secs="$2"; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > end)); then log "timed out waiting for $what"; return 1; fi
    sleep 0.2
  done
}

apiserver_args() {
  echo --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" --advertise-address=127.0.0.1 \
    --tls-cert-file="$CERTS/apiserver.crt" --tls-private-key-file="$CERTS/apiserver.key" \
    --client-ca-file="$CERTS/ca.crt" \
    --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$CERTS/sa.pub" --service-account-signing-key-file="$CERTS/sa.key" \
    --api-audiences=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --disable-admission-plugins=ServiceAccount \
    --allow-privileged=true \
    --cert-dir="$CERTS/apiserver-tmp"
}

start_daemon() { # start_daemon <name> <command...>: detached from this shell, pid in $PIDS, log in $LOGS
  local name="$1"; shift
  setsid nohup "$@" >"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$PIDS/$name.pid"
}

start_apiserver() {
  # shellcheck disable=SC2046
  start_daemon kube-apiserver "$APISERVER_BIN" $(apiserver_args)
  wait_for "kube-apiserver /readyz" 60 bash -c "[[ \"\$(curl -sS --max-time 2 --cacert '$CERTS/ca.crt' --cert '$CERTS/admin.crt' --key '$CERTS/admin.key' https://127.0.0.1:$APISERVER_PORT/readyz)\" == ok ]]"
}

stop_pid() { # stop_pid <name>: TERM, then KILL after 10 s
  local f="$PIDS/$1.pid" pid
  [[ -f "$f" ]] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}
