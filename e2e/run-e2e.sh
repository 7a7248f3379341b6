#!/usr/bin/env bash
# Brings the local control plane up, runs every e2e test file, and tears everything down (also on failure or
# Ctrl-C). E2E_KEEP=1 leaves the cluster running for debugging. Extra args: test files to run instead of all.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
cleanup() { [[ "${E2E_KEEP:-0}" == 1 ]] || bash e2e/controlplane/down.sh >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
bash e2e/controlplane/up.sh
files=("$@")
((${#files[@]})) || mapfile -t files < <(ls e2e/*.e2e.test.ts)
node_modules/.bin/node --test --test-concurrency=1 --test-timeout=600000 "${files[@]}"
echo "[e2e] suite took $((SECONDS - t0))s" >&2
