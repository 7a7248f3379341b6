#!/usr/bin/env bash
# Runs the benchmarks against a fresh local control plane and tears it down. Prints figures only.
set -euo pipefail
cd "$(dirname "$0")/../.."
trap 'bash e2e/controlplane/down.sh >/dev/null 2>&1 || true' EXIT
bash e2e/controlplane/up.sh
node_modules/.bin/node e2e/bench/propagation.ts "${TRIALS:-50}" "${INGRESS_TRIALS:-30}"
