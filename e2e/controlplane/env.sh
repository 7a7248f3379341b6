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
# 203.0.113.0/24 (TEST-NET-3) is NOT used: on CI machines the package registries (apt, npm, Go proxy) answer there,
# and routing it into the pod netns would cut the machine off from them while the cluster is up.
POD_CIDRS="198.51.100.0/24 198.18.0.0/16" # all pools the pod host allocates from
# Service cluster IPs (virtual: nothing routes them) from the other half of RFC 2544's 198.18.0.0/15 — never from
# 10/8, 172.16/12 or 192.168/16, which may be real networks wherever this runs.
SERVICE_CIDR="198.19.0.0/17"
NODE_NAME=portico-node-0
# The apiserver listens on every address (so pods of the real node, e2e/node, reach it through the `kubernetes`
# Service) but advertises this one: an RFC 2544 address, a /32 on the root namespace's loopback interface (this
# kernel has no dummy interfaces). The PORTICO-APISERVER chain (iptables, ip6tables) drops connections to the
# apiserver's port, and to this address, from anywhere but loopback and the real node's pod bridge, so listening on
# 0.0.0.0 exposes nothing beyond this machine.
API_ADDR=198.19.255.9
API_GUARD_CHAIN=PORTICO-APISERVER
REAL_BRIDGE=portico-br0  # the real node's CNI bridge (e2e/node/env.sh)
KUBECONFIG_ADMIN="$DEV/kubeconfig"
NODE_BIN="$ROOT/node_modules/.bin/node"
eval "$(bash "$ROOT/e2e/controlplane/build.sh" paths)"

log() { echo "[cluster] $*" >&2; }

# The benchmarks' fixed loopback ports (38080 bench, 39080-39392 bench-dataplane and bench-peers, 40080 bench-plugins,
# 44080-49080 the others) lie inside Linux's ephemeral range. The cluster's daemons open connections for as long as
# they run (the apiserver to etcd, the controllers to the apiserver): a connection that took 127.0.0.1:39392 as its
# local port once made a benchmark's nginx fail to bind it. While the cluster is up those ranges are kept out of the
# ephemeral range; down.sh gives them back. (The suites' own ports are reserved by run-e2e.sh and
# tools/with-reserved-ports.sh for their runs.)
BENCH_PORTS="38080-38083 39000-40999 44000-44999 47000-49999"
RESERVED_PORTS=/proc/sys/net/ipv4/ip_local_reserved_ports
reserved_ports_with() { # reserved_ports_with add|del <lo> <hi> <list>
  echo "$4" | tr ',' '\n' | awk -v op="$1" -v lo="$2" -v hi="$3" -F- '
    NF { a = $1; b = (NF > 1 ? $2 : $1)
         if (op == "del" && b >= lo && a <= hi) { if (a < lo) out[++n] = a "-" (lo - 1); if (b > hi) out[++n] = (hi + 1) "-" b }
         else out[++n] = a "-" b }
    END { if (op == "add") out[++n] = lo "-" hi
          s = ""; for (i = 1; i <= n; i++) s = s (i > 1 ? "," : "") out[i]; print s }'
}
reserve_bench_ports() {
  [[ -w $RESERVED_PORTS ]] || return 0
  local list r; list="$(cat "$RESERVED_PORTS")"
  for r in $BENCH_PORTS; do list="$(reserved_ports_with add "${r%-*}" "${r#*-}" "$list")"; done
  echo "$list" > "$RESERVED_PORTS" || true
}
release_bench_ports() {
  [[ -w $RESERVED_PORTS ]] || return 0
  local list r; list="$(cat "$RESERVED_PORTS")"
  for r in $BENCH_PORTS; do list="$(reserved_ports_with del "${r%-*}" "${r#*-}" "$list")"; done
  echo "$list" > "$RESERVED_PORTS" || true
}
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

# ClusterTrustBundles (certificates.k8s.io, Gateway API's ClusterTrustBundle feature): Kubernetes 1.36 serves them as
# v1beta1 only with their feature gate on and the resource turned on (beta APIs are off by default); v1 is 1.37's.
# The gate also adds the bootstrap RBAC that lets ServiceAccounts and nodes read them and the ctbattest admission
# plugin (for bundles that name a signer); kube-controller-manager does not get it, so its ClusterTrustBundle
# publisher stays off.
apiserver_args() {
  echo --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address=0.0.0.0 --secure-port="$APISERVER_PORT" --advertise-address="$API_ADDR" \
    --tls-cert-file="$CERTS/apiserver.crt" --tls-private-key-file="$CERTS/apiserver.key" \
    --client-ca-file="$CERTS/ca.crt" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --kubelet-client-certificate="$CERTS/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$CERTS/apiserver-kubelet-client.key" --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$CERTS/sa.pub" --service-account-signing-key-file="$CERTS/sa.key" \
    --api-audiences=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --allow-privileged=true \
    --feature-gates=ClusterTrustBundle=true \
    --runtime-config=certificates.k8s.io/v1beta1/clustertrustbundles=true \
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

api_guard() { # api_guard add|del: the PORTICO-APISERVER chain (see API_ADDR above), for both IP families
  local ipt v4
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    v4=0; [[ "$ipt" == iptables ]] && v4=1
    while "$ipt" -w -D INPUT -p tcp --dport "$APISERVER_PORT" -j "$API_GUARD_CHAIN" 2>/dev/null; do :; done
    if ((v4)); then while "$ipt" -w -D INPUT -d "$API_ADDR/32" -j "$API_GUARD_CHAIN" 2>/dev/null; do :; done; fi
    "$ipt" -w -F "$API_GUARD_CHAIN" 2>/dev/null && "$ipt" -w -X "$API_GUARD_CHAIN" 2>/dev/null || true
    [[ "$1" == add ]] || continue
    "$ipt" -w -N "$API_GUARD_CHAIN"
    "$ipt" -w -A "$API_GUARD_CHAIN" -i lo -j RETURN
    if ((v4)); then "$ipt" -w -A "$API_GUARD_CHAIN" -i "$REAL_BRIDGE" -j RETURN; fi
    "$ipt" -w -A "$API_GUARD_CHAIN" -j DROP
    "$ipt" -w -I INPUT -p tcp --dport "$APISERVER_PORT" -j "$API_GUARD_CHAIN"
    if ((v4)); then "$ipt" -w -I INPUT -d "$API_ADDR/32" -j "$API_GUARD_CHAIN"; fi
  done
  return 0
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
