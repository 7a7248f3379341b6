#!/usr/bin/env bash
# Checks the real node end to end (needs `make node-up`); prints one line per check and fails on the first that
# does not hold:
#   a Deployment of the echo image (dist/echo.oci.tar, else the node's test image): 2 replicas, readiness probe;
#   a NodePort Service answers on 127.0.0.1:<nodePort>; a pod IP answers from the host; host → ClusterIP answers;
#   a pod reaches the apiserver through the `kubernetes` Service (198.19.0.1:443) with its projected token;
#   `kubectl drain` evicts one pod and is held by a PodDisruptionBudget (minAvailable 1) for the other;
#   after uncordon the Deployment is whole again. The namespace is deleted at the end.
set -euo pipefail
source "$(dirname "$0")/env.sh"
NS=node-smoke
export KUBECONFIG="$KUBECONFIG_ADMIN"
ok() { echo "[smoke] ok: $*"; }
fail() { echo "[smoke] FAILED: $*" >&2; exit 1; }
cleanup() {
  kubectl uncordon "$REAL_NODE_NAME" >/dev/null 2>&1 || true
  kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

image="$TEST_IMAGE"
ctr_k8s images ls -q | grep -qxF localhost/portico/echo:1 && image=localhost/portico/echo:1
kubectl create namespace "$NS" >/dev/null
# The ServiceAccount admission plugin needs the namespace's `default` ServiceAccount (made by kcm's controller).
wait_for "ServiceAccount $NS/default" 20 kubectl -n "$NS" get serviceaccount default
kubectl -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: { name: echo }
spec:
  replicas: 2
  selector: { matchLabels: { app: echo } }
  template:
    metadata: { labels: { app: echo } }
    spec:
      terminationGracePeriodSeconds: 5
      containers:
        - name: echo
          image: $image
          imagePullPolicy: IfNotPresent
          ports: [{ name: http, containerPort: 8080 }]
          readinessProbe: { httpGet: { path: /healthz, port: http }, periodSeconds: 2 }
          livenessProbe: { httpGet: { path: /healthz, port: http }, periodSeconds: 10 }
---
apiVersion: v1
kind: Service
metadata: { name: echo }
spec:
  type: NodePort
  selector: { app: echo }
  ports: [{ name: http, port: 80, targetPort: http }]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: echo }
spec:
  minAvailable: 1
  selector: { matchLabels: { app: echo } }
YAML
t=$SECONDS
kubectl -n "$NS" rollout status deploy/echo --timeout=120s >/dev/null || fail "Deployment not Ready"
ok "Deployment echo ($image), 2 replicas Ready in $((SECONDS - t))s"

np="$(kubectl -n "$NS" get svc echo -o jsonpath='{.spec.ports[0].nodePort}')"
cip="$(kubectl -n "$NS" get svc echo -o jsonpath='{.spec.clusterIP}')"
pod="$(kubectl -n "$NS" get pods -l app=echo -o jsonpath='{.items[0].metadata.name}')"
podip="$(kubectl -n "$NS" get pod "$pod" -o jsonpath='{.status.podIP}')"
# kube-proxy programs the Service within a sync; then each check must answer.
wait_for "NodePort 127.0.0.1:$np" 30 curl -sf --max-time 2 "http://127.0.0.1:$np/healthz" || fail "NodePort 127.0.0.1:$np"
ok "NodePort 127.0.0.1:$np answers"
curl -sf --max-time 2 "http://$podip:8080/healthz" >/dev/null || fail "pod IP $podip"
ok "pod IP $podip:8080 answers from the host"
curl -sf --max-time 2 "http://$cip/healthz" >/dev/null || fail "ClusterIP $cip from the host"
ok "host → ClusterIP $cip:80 answers (the apiserver's path to a webhook Service)"

# From the pod's network namespace, with the pod's own projected token and CA: the `kubernetes` Service.
uid="$(kubectl -n "$NS" get pod "$pod" -o jsonpath='{.metadata.uid}')"
pid="$(grep -l "pod$uid" /proc/[0-9]*/cgroup 2>/dev/null | head -1 | cut -d/ -f3)"
[[ -n "$pid" ]] || fail "no process of pod $pod"
vol="$(echo "$KUBELET_ROOT/pods/$uid/volumes/kubernetes.io~projected/"kube-api-access-*)"
who="$(nsenter -t "$pid" -n curl -sf --max-time 5 --cacert "$vol/ca.crt" -H "Authorization: Bearer $(cat "$vol/token")" \
  https://198.19.0.1/apis/authentication.k8s.io/v1/selfsubjectreviews -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}')" || fail "pod → https://198.19.0.1"
[[ "$who" == *"system:serviceaccount:$NS:default"* ]] || fail "pod → apiserver: unexpected identity: $who"
ok "pod $pod → https://198.19.0.1:443 (kubernetes Service) authenticated as system:serviceaccount:$NS:default"

# Drain: one pod may go (PDB minAvailable 1 of 2); its replacement has nowhere to run (this node is cordoned, the
# fake node tainted), so the eviction of the second is refused until the drain times out.
before="$(kubectl -n "$NS" get pods -l app=echo -o name | sort)"
if out="$(kubectl drain "$REAL_NODE_NAME" --ignore-daemonsets --delete-emptydir-data --timeout=20s 2>&1)"; then
  fail "drain succeeded although the PDB allows only one disruption: $out"
fi
[[ "$out" == *"disruption budget"* ]] || fail "drain did not report the disruption budget: $out"
gone=0; for p in $before; do kubectl -n "$NS" get "$p" >/dev/null 2>&1 || gone=$((gone + 1)); done
((gone == 1)) || fail "drain evicted $gone pods, expected 1"
ok "drain evicted 1 of 2 pods and was held by the PodDisruptionBudget for the other"
kubectl uncordon "$REAL_NODE_NAME" >/dev/null
t=$SECONDS
kubectl -n "$NS" rollout status deploy/echo --timeout=60s >/dev/null || fail "Deployment not whole after uncordon"
ok "uncordoned: the replacement was scheduled and Ready in $((SECONDS - t))s"
echo "[smoke] all checks passed"
