#!/usr/bin/env bash
# Operations tests perform on the running control plane:
#   restart-apiserver | stop-apiserver | start-apiserver | compact
set -euo pipefail
source "$(dirname "$0")/env.sh"
case "${1:-}" in
  stop-apiserver) stop_pid kube-apiserver ;;
  start-apiserver) start_apiserver ;;
  restart-apiserver) stop_pid kube-apiserver; start_apiserver ;;
  compact)
    # Compact etcd to its current revision through its JSON gateway: watchers resuming from older revisions
    # then get 410 Gone.
    rev="$(curl -sf -X POST "http://127.0.0.1:$ETCD_CLIENT_PORT/v3/kv/range" -d '{"key":"AA=="}' |
      sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p')"
    curl -sf -X POST "http://127.0.0.1:$ETCD_CLIENT_PORT/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null
    echo "$rev"
    ;;
  *) echo "usage: $0 restart-apiserver|stop-apiserver|start-apiserver|compact" >&2; exit 2 ;;
esac
