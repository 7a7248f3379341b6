#!/usr/bin/env bash
# Portico quickstart: a real install, the way users install Portico.
#   quickstart.sh run   – local cluster (control plane + the real node of e2e/node), `make images`, then
#                         `kubectl apply -k` of the install (e2e/overlays/node: kustomize/ with the Service as a
#                         NodePort on 127.0.0.1) and a demo app; follows Portico's logs; Ctrl-C removes everything
#   quickstart.sh up    – the same, returning once the demo is served
#   quickstart.sh down  – removes the node and the control plane; leaves nothing running
# HTTP: 127.0.0.1:30080, HTTPS: 127.0.0.1:30443 (NodePorts bound to loopback only).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
mode="${1:-run}"
t0=$SECONDS

if [[ "$mode" == down ]]; then
  bash e2e/controlplane/down.sh # takes the node down first
  exit 0
fi
[[ "$mode" == run || "$mode" == up ]] || { echo "usage: $0 run|up|down" >&2; exit 2; }

bash e2e/setup/install-deps.sh
bash e2e/controlplane/up.sh
export KUBECONFIG="$ROOT/.dev/kubeconfig"
bash image/build-portico.sh
bash image/build-small.sh pause echo
bash e2e/node/up.sh

echo "[run] kubectl apply -k e2e/overlays/node (= kustomize/ + a NodePort on 127.0.0.1)" >&2
kubectl apply -k e2e/overlays/node >/dev/null
kubectl -n portico-system rollout status deployment/portico --timeout=240s

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Namespace
metadata: { name: demo }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: echo, namespace: demo }
spec:
  replicas: 2
  selector: { matchLabels: { app: echo } }
  template:
    metadata: { labels: { app: echo } }
    spec:
      containers:
        - name: echo
          image: localhost/portico/echo:1
          imagePullPolicy: IfNotPresent
          env: [{ name: POD_NAME, valueFrom: { fieldRef: { fieldPath: metadata.name } } }]
          ports: [{ name: http, containerPort: 8080 }]
          readinessProbe: { httpGet: { path: /healthz, port: http }, periodSeconds: 2 }
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 65532 }
---
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
kubectl -n demo rollout status deployment/echo --timeout=120s >/dev/null
for _ in $(seq 300); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: demo.portico.test' http://127.0.0.1:30080/)" == 200 ]] && break
  sleep 0.2
done
[[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: demo.portico.test' http://127.0.0.1:30080/)" == 200 ]] ||
  { echo "the demo is not served; see kubectl -n portico-system logs deploy/portico" >&2; exit 1; }

echo
echo "Portico is installed (kubectl apply -k) and serving, in $((SECONDS - t0)) s. Try:"
echo "  curl -H 'Host: demo.portico.test' http://127.0.0.1:30080/hello"
echo "  export KUBECONFIG=$KUBECONFIG"
echo "  kubectl -n portico-system get pods,svc,lease"
echo "  kubectl get events -A --field-selector reportingComponent=portico.dev/ingress-controller"
echo "  make down   # removes the node and the control plane"

if [[ "$mode" == run ]]; then
  trap 'echo; echo "stopping"; bash "$0" down; exit 0' INT TERM
  echo "Ctrl-C removes everything. Portico's logs follow."
  kubectl -n portico-system logs -f -l app.kubernetes.io/component=controller --prefix --max-log-requests=4 & wait
fi
