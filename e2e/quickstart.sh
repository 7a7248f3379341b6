#!/usr/bin/env bash
# Portico quickstart.
#   quickstart.sh run   – foreground: local control plane (unless KUBECONFIG is set), Portico, a demo; Ctrl-C stops all
#   quickstart.sh up    – the same in the background; returns once Portico is ready
#   quickstart.sh down  – stops Portico and the local control plane; leaves nothing running
# Portico's nginx listens on 127.0.0.1:8080 (HTTP) and 127.0.0.1:8443 (HTTPS); metrics/health on 127.0.0.1:10254.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
DEV="$ROOT/.dev"
PID="$DEV/portico.pid"
LOG="$DEV/portico.log"
mode="${1:-run}"

# nginx runs in its own process group, led by its master (pid file). A master killed alone leaves its workers
# running, still bound to the ports (with reuseport a later nginx would share them). SIGQUIT to the whole group
# (workers close their listeners and finish in-flight requests, even when their master is already gone), then
# SIGKILL for whatever is left. Only a group made of nginx processes is touched.
stop_nginx() { # stop_nginx <pid file> <seconds to wait for the graceful stop>
  local f="$1" wait="$2" pg all ours
  [[ -f "$f" ]] || return 0
  pg="$(cat "$f" 2>/dev/null)"
  [[ "$pg" =~ ^[0-9]+$ ]] || return 0
  all="$(pgrep -g "$pg" | sort)"; ours="$(pgrep -g "$pg" -x nginx | sort)"
  [[ -n "$all" && "$all" == "$ours" ]] || return 0
  kill -QUIT -- "-$pg" 2>/dev/null || true
  for _ in $(seq $((wait * 10))); do pgrep -g "$pg" >/dev/null || return 0; sleep 0.1; done
  kill -KILL -- "-$pg" 2>/dev/null || true
  for _ in $(seq 50); do pgrep -g "$pg" >/dev/null || return 0; sleep 0.1; done
}

stop_portico() {
  if [[ -f "$PID" ]] && kill -0 "$(cat "$PID")" 2>/dev/null; then
    kill -TERM "$(cat "$PID")"
    for _ in $(seq 150); do kill -0 "$(cat "$PID")" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$(cat "$PID")" 2>/dev/null || true
  fi
  rm -f "$PID"
  # Portico stops its nginx on SIGTERM; this is for an nginx that outlived a crashed or SIGKILLed controller.
  stop_nginx "$DEV/run/nginx/nginx.pid" 10
}

if [[ "$mode" == down ]]; then
  stop_portico
  bash e2e/controlplane/down.sh
  exit 0
fi
[[ "$mode" == run || "$mode" == up ]] || { echo "usage: $0 run|up|down" >&2; exit 2; }

bash e2e/setup/install-deps.sh
own_cluster=0
if [[ -z "${KUBECONFIG:-}" ]]; then
  bash e2e/controlplane/up.sh
  export KUBECONFIG="$DEV/kubeconfig"
  own_cluster=1
fi
stop_portico
kubectl apply -k kustomize/ >/dev/null
mkdir -p "$DEV/run"
# Portico runs as its ServiceAccount, so the kustomize RBAC is what it gets.
server="$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')"
kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > "$DEV/run/ca.crt"
token="$(kubectl -n portico-system create token portico --duration=24h)"
SA_KUBECONFIG="$DEV/run/portico.kubeconfig"
rm -f "$SA_KUBECONFIG"
KUBECONFIG="$SA_KUBECONFIG" kubectl config set-cluster c --server="$server" --certificate-authority="$DEV/run/ca.crt" --embed-certs >/dev/null
KUBECONFIG="$SA_KUBECONFIG" kubectl config set-credentials portico --token="$token" >/dev/null
KUBECONFIG="$SA_KUBECONFIG" kubectl config set-context c --cluster=c --user=portico >/dev/null
KUBECONFIG="$SA_KUBECONFIG" kubectl config use-context c >/dev/null
chmod 600 "$SA_KUBECONFIG"

setsid nohup node_modules/.bin/node app/main.ts --kubeconfig "$SA_KUBECONFIG" --namespace portico-system \
  --configmap portico-system/portico --runtime-dir "$DEV/run/nginx" >"$LOG" 2>&1 </dev/null &
echo $! > "$PID"
for _ in $(seq 300); do
  curl -sf http://127.0.0.1:10254/readyz >/dev/null 2>&1 && break
  kill -0 "$(cat "$PID")" 2>/dev/null || { echo "Portico exited; last log lines:" >&2; tail -20 "$LOG" >&2; exit 1; }
  sleep 0.1
done
curl -sf http://127.0.0.1:10254/readyz >/dev/null || { echo "Portico not ready after 30 s; see $LOG" >&2; exit 1; }

if ((own_cluster)); then
  kubectl create namespace demo --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: { name: echo, namespace: demo }
spec:
  selector: { app: echo }
  ports: [{ name: http, port: 80, targetPort: http }]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: demo, namespace: demo }
spec:
  ingressClassName: portico
  rules:
    - host: demo.portico.test
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: echo, port: { name: http } } } }
YAML
  e2e/bin/pod ls | grep -q '^demo/echo-1' || e2e/bin/pod add demo/echo-1 --label app=echo >/dev/null
  for _ in $(seq 100); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: demo.portico.test' http://127.0.0.1:8080/)" == 200 ]] && break
    sleep 0.1
  done
  echo
  echo "Portico is serving. Try:"
  echo "  curl -H 'Host: demo.portico.test' http://127.0.0.1:8080/hello"
  echo "  KUBECONFIG=$DEV/kubeconfig kubectl get events -A --field-selector reportingComponent=portico.dev/ingress-controller"
else
  echo "Portico is running against $server (logs: $LOG)."
fi
echo "  metrics: curl http://127.0.0.1:10254/metrics | grep ^portico_"

if [[ "$mode" == run ]]; then
  trap 'echo; echo "stopping"; bash "$0" down; exit 0' INT TERM
  echo "Ctrl-C stops Portico${own_cluster:+ and the local control plane}. Logs follow."
  tail -f "$LOG" & wait
fi
