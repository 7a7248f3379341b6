#!/usr/bin/env bash
# `make conformance`: the official Gateway API conformance suite (v1.7.0, built by e2e/gateway-api/build.sh) against
# Portico installed on the local real node (issue 23, docs/gateway-api.md §1).
#   run.sh        cluster and node (idempotent: kept when up), images, the Gateway API CRDs (experimental channel),
#                 Portico (`kubectl apply -k e2e/overlays/node`, as `make up` does), the GatewayClass, then the suite;
#                 prints a summary and exits non-zero when the set-up or a test failed
#   run.sh down   removes what a run added to the cluster: the suite's namespaces, the GatewayClass, the Gateway API
#                 CRDs and admission policy (`make conformance-down`); Portico and the cluster stay (`make down`
#                 removes everything)
# Parameters (environment):
#   PROFILES        -conformance-profiles (default: the profiles Portico passes, GATEWAY-HTTP,GATEWAY-GRPC,GATEWAY-TCP,GATEWAY-UDP,GATEWAY-TLS)
#   FEATURES        -supported-features, comma-separated (default: e2e/gateway-api/supported-features);
#                   FEATURES=inferred passes none, so the suite reads GatewayClass.status.supportedFeatures
#   RUN_TEST        -run-test: one test by its short name (e.g. HTTPRouteSimpleSameNamespace)
#   SKIP_TESTS      -skip-tests, comma-separated short names
#   REPORT          -report-output (default docs/conformance/gateway-api-v1.7.0-portico-<version>.yaml)
#   ACCEPT_TIMEOUT  seconds to wait for Portico to accept the GatewayClass before starting the suite (default 180, the
#                   suite's own limit); 0 skips this check and leaves the waiting to the suite
#   USABLE_ADDRESS / UNUSABLE_ADDRESS
#                   -usable-address / -unusable-address, for GatewayStaticAddresses (defaults below: an address of
#                   the Service CIDR that nothing else takes, and one outside it)
#   EXTRA_ARGS      more flags for the suite, word-split (e.g. "-debug -cleanup-base-resources=false
#                   -timeout-config-overrides NamespacesMustBeReady:600;GWCMustBeAccepted:60", seconds)
# The suite's -test.v output goes to .dev/logs/conformance.log as well as to the terminal.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
mode="${1:-run}"
t0=$SECONDS
log() { echo "[conformance +$((SECONDS - t0))s] $*" >&2; }

GATEWAY_CLASS=portico
CONTROLLER_NAME=portico.dev/gateway-controller # the controllerName Portico accepts (docs/gateway-api.md §3)
SUITE_NAMESPACES=(gateway-conformance-infra gateway-conformance-app-backend gateway-conformance-web-backend)
export KUBECONFIG="$ROOT/.dev/kubeconfig"
# The suite is built with this Go toolchain (its go.mod says go 1.27.0; the machines have Go 1.26): build.sh, the
# only place go runs for it, sets it too.
export GOTOOLCHAIN=go1.27.3
eval "$(bash e2e/gateway-api/build.sh paths)" # CONFORMANCE_BIN, ECHO_BASIC_BIN, GATEWAY_API_CRDS_{STANDARD,EXPERIMENTAL}
version="$(sed -n 's/^  "version": "\([^"]*\)".*/\1/p' package.json | head -n1)"

if [[ "$mode" == down ]]; then
  if ! kubectl get --raw /readyz >/dev/null 2>&1; then log "no cluster: nothing to remove"; exit 0; fi
  # Everything the suite may have left (it cleans up after itself unless told not to, or when killed).
  mapfile -t nss < <(kubectl get ns -o name | sed -n 's#^namespace/##p' | grep -E '^(gateway-conformance-|gateway-api-)' || true)
  if ((${#nss[@]})); then
    log "deleting namespaces: ${nss[*]}"
    kubectl delete ns "${nss[@]}" --ignore-not-found --wait=true --timeout=180s >/dev/null
  fi
  kubectl delete gatewayclass --all --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1 || true
  if kubectl get crd gatewayclasses.gateway.networking.k8s.io >/dev/null 2>&1; then
    log "deleting the Gateway API CRDs and the safe-upgrades admission policy"
    kubectl delete -f "$GATEWAY_API_CRDS_EXPERIMENTAL" --ignore-not-found --wait=true --timeout=120s >/dev/null
  fi
  log "done (Portico, the node and the control plane stay: make down removes them)"
  exit 0
fi
[[ "$mode" == run ]] || { echo "usage: $0 [run|down]" >&2; exit 2; }

PROFILES="${PROFILES:-GATEWAY-HTTP,GATEWAY-GRPC,GATEWAY-TCP,GATEWAY-UDP,GATEWAY-TLS}"
if [[ -z "${FEATURES:-}" ]]; then
  FEATURES="$(sed 's/#.*//; s/[[:space:]]//g; /^$/d' e2e/gateway-api/supported-features | paste -sd, -)"
fi
RUN_TEST="${RUN_TEST:-}"
SKIP_TESTS="${SKIP_TESTS:-}"
REPORT="${REPORT:-docs/conformance/gateway-api-v1.7.0-portico-$version.yaml}"
ACCEPT_TIMEOUT="${ACCEPT_TIMEOUT:-180}"
# GatewayStaticAddresses requests these as the cluster IP of a Gateway's Service (docs/gateway-api.md §4): usable
# is inside the Service CIDR (198.19.0.0/17, e2e/controlplane/env.sh) in the API server's static band (its first
# 256 addresses, which it hands out on its own only when the rest is full) and named nowhere else; unusable is
# outside it (TEST-NET-1, RFC 5737), so the API server refuses it. Never 10/8, 172.16/12 or 192.168/16.
USABLE_ADDRESS="${USABLE_ADDRESS:-198.19.0.200}"
UNUSABLE_ADDRESS="${UNUSABLE_ADDRESS:-192.0.2.77}"
# README names no public repository yet: a placeholder under the reserved .invalid domain (RFC 2606). The suite
# requires an absolute http(s) URL and a contact.
URL="${URL:-https://portico.invalid/}"
CONTACT="${CONTACT:-see README}"

# ---- 1. what the run needs, as `make up` does it (each step idempotent and cached) --------------------------------
bash e2e/setup/install-deps.sh
bash e2e/gateway-api/build.sh
bash image/build-portico.sh
bash image/build-small.sh pause echo gateway-api-echo-basic
bash e2e/node/up.sh # brings the control plane up first; imports dist/*.oci.tar (the echo-basic archive included)
log "cluster, node and images ready"

# ---- 2. the Gateway API CRDs, exactly as build.sh wrote them (the suite refuses another bundle version) -----------
# Server-side: the CRDs are too large for client-side apply's last-applied annotation (256 KiB).
mapfile -t crds < <(kubectl apply --server-side --force-conflicts --field-manager=portico-conformance \
  -f "$GATEWAY_API_CRDS_EXPERIMENTAL" -o name | grep '^customresourcedefinition')
kubectl wait --for=condition=Established --timeout=60s "${crds[@]}" >/dev/null
log "Gateway API v1.7.0 CRDs (experimental channel): ${#crds[@]} established"

# ---- 3. Portico, as `make up` installs it ---------------------------------------------------------------------------
kubectl apply -k e2e/overlays/node >/dev/null
kubectl -n portico-system rollout status deployment/portico --timeout=240s >/dev/null
# The tag stays portico/portico:<version> when the sources change, so apply alone would keep pods that run an older
# build: restart when a pod's image (its config digest) is not the one in dist/ (the one node-up just imported).
archive="dist/portico-$version.oci.tar"
manifest="$(tar -xOf "$archive" index.json | grep -o '"digest":"sha256:[0-9a-f]*"' | head -n1 | cut -d'"' -f4)"
config="$(tar -xOf "$archive" "blobs/sha256/${manifest#sha256:}" | grep -o '"config":{[^}]*}' | grep -o 'sha256:[0-9a-f]*')"
running="$(kubectl -n portico-system get pods -l app.kubernetes.io/name=portico,app.kubernetes.io/component=controller \
  -o jsonpath='{range .items[*]}{.status.containerStatuses[*].imageID}{"\n"}{end}' | sort -u)"
# Portico decides at start whether to serve Gateway API (--enable-gateway-api=auto: whether the API server serves it):
# pods that started before the CRDs were created run without it.
crd_created="$(kubectl get crd gatewayclasses.gateway.networking.k8s.io -o jsonpath='{.metadata.creationTimestamp}')"
oldest_pod="$(kubectl -n portico-system get pods -l app.kubernetes.io/name=portico,app.kubernetes.io/component=controller \
  -o jsonpath='{range .items[*]}{.status.startTime}{"\n"}{end}' | sort | head -n1)"
if [[ "$running" != "$config" || "$oldest_pod" < "$crd_created" ]]; then
  log "Portico's pods run another build than $archive, or started before the Gateway API CRDs: rollout restart"
  kubectl -n portico-system rollout restart deployment/portico >/dev/null
  kubectl -n portico-system rollout status deployment/portico --timeout=240s >/dev/null
fi
log "Portico $version installed (kubectl apply -k e2e/overlays/node) and rolled out (image $config)"

# ---- 4. the GatewayClass the suite uses ----------------------------------------------------------------------------
kubectl apply -f - >/dev/null <<YAML
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: $GATEWAY_CLASS }
spec:
  controllerName: $CONTROLLER_NAME
  description: Portico (make conformance)
YAML
log "GatewayClass $GATEWAY_CLASS (controllerName $CONTROLLER_NAME) applied"
if ((ACCEPT_TIMEOUT > 0)); then
  log "waiting up to ${ACCEPT_TIMEOUT}s for Portico to accept GatewayClass $GATEWAY_CLASS"
  if ! kubectl wait --for=condition=Accepted=True --timeout="${ACCEPT_TIMEOUT}s" "gatewayclass/$GATEWAY_CLASS" >/dev/null 2>&1; then
    log "FAILED: GatewayClass $GATEWAY_CLASS is not Accepted after ${ACCEPT_TIMEOUT}s: Portico does not (yet) serve"
    log "controllerName $CONTROLLER_NAME. Its status:"
    kubectl get gatewayclass "$GATEWAY_CLASS" -o jsonpath='{.status}' >&2; echo >&2
    exit 1
  fi
  log "GatewayClass $GATEWAY_CLASS Accepted"
fi

# ---- 5. the suite ---------------------------------------------------------------------------------------------------
mkdir -p "$(dirname "$REPORT")" .dev/logs
args=(-test.run '^TestConformance$' -test.v -test.timeout 0
  -kubeconfig "$KUBECONFIG" -gateway-class "$GATEWAY_CLASS" -conformance-profiles "$PROFILES"
  -report-output "$REPORT" -organization portico -project portico -url "$URL" -version "$version" -contact "$CONTACT"
  -usable-address "$USABLE_ADDRESS" -unusable-address "$UNUSABLE_ADDRESS")
[[ "$FEATURES" == inferred ]] || args+=(-supported-features "$FEATURES")
[[ -n "$RUN_TEST" ]] && args+=(-run-test "$RUN_TEST")
[[ -n "$SKIP_TESTS" ]] && args+=(-skip-tests "$SKIP_TESTS")
# shellcheck disable=SC2206 # word-split on purpose
[[ -n "${EXTRA_ARGS:-}" ]] && args+=(${EXTRA_ARGS})
out=.dev/logs/conformance.log
log "running $(basename "$CONFORMANCE_BIN") (profiles $PROFILES; features ${FEATURES}; log $out)"
t1=$SECONDS
rm -f "$REPORT" # a report left from an earlier run must not pass for this one's
set +e
"$CONFORMANCE_BIN" "${args[@]}" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e

# ---- 6. summary: the subtests of TestConformance from the -test.v output, each profile's line from the report -----
echo
awk -v rc="$rc" -v secs="$((SECONDS - t1))" '
  match($0, /--- (PASS|FAIL|SKIP): TestConformance\/[^ \/]+ /) {
    r = substr($0, RSTART + 4, 4); name = substr($0, RSTART + 26, RLENGTH - 27)
    n[r]++; if (r == "FAIL") failed = failed "\n  " name
  }
  /^--- FAIL: TestConformance / { top = 1 }
  grab > 0 { grab--; err = err "\n  " $0 }
  /^[[:space:]]+(Error|Messages):/ && errs < 4 { errs++; grab = /Error:/ ? 1 : 0; err = err "\n  " $0 }
  END {
    printf "[conformance] suite: %d passed, %d failed, %d skipped (exit %d, %d s)\n", n["PASS"], n["FAIL"], n["SKIP"], rc, secs
    if (failed != "") printf "[conformance] failed tests:%s\n", failed
    if (top && n["PASS"] + n["FAIL"] + n["SKIP"] == 0) printf "[conformance] TestConformance failed before any test ran (set-up):%s\n", err
  }' "$out"
if [[ -s "$REPORT" ]]; then
  awk '/^  name: / { name = $2 } /^  summary: / { sub(/^  summary: /, ""); print "[conformance] " name ": " $0 }' "$REPORT"
  echo "[conformance] report: $REPORT"
fi
log "done"
exit "$rc"
