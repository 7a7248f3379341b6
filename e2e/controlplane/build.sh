#!/usr/bin/env bash
# Builds (once) the real control-plane binaries Portico's tests run against:
#   etcd, kube-apiserver and kube-controller-manager, from Go modules;
#   `build.sh node`: what the real node (e2e/node) adds: kubelet, kube-proxy, kube-scheduler, and containerd
#   (containerd, ctr, containerd-shim-runc-v2);
#   ingress-nginx's controller (its Go part, and its nginx.tmpl), for the side-by-side and takeover tests with the
#   real thing (e2e/harness/ingress-nginx.ts).
# Binaries are cached outside the work tree, keyed by version, so that a fresh clone
# (as CI makes) reuses them:  ${PORTICO_CACHE:-$HOME/.cache/portico}/bin/<name>-<version>
# A second run finds them and returns at once.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CONTAINERD_VERSION="${CONTAINERD_VERSION:-v2.4.2}"
# ingress-nginx's release tags (controller-v1.x.y) are not Go versions: this pseudo-version, commit 52c50467d67d of
# 2024-07-08 on its main branch, is the newest the Go module proxy serves.
INGRESS_NGINX_VERSION="${INGRESS_NGINX_VERSION:-v0.0.0-20240708192948-52c50467d67d}"
CACHE="${PORTICO_CACHE:-$HOME/.cache/portico}"
BIN="$CACHE/bin"
mkdir -p "$BIN"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
log() { echo "[build] $*" >&2; }

build_etcd() {
  local out="$BIN/etcd-$ETCD_VERSION"
  [[ -x "$out" ]] && { log "etcd $ETCD_VERSION cached"; return; }
  local t0=$SECONDS work
  work="$(mktemp -d)"; trap 'rm -rf "$work"' RETURN
  # etcd's own go.mod has relative replaces, so `go install` refuses it; a wrapper module
  # that just calls etcdmain.Main ignores them.
  cat > "$work/go.mod" <<MOD
module portico.dev/etcd-wrapper

go 1.24
MOD
  cat > "$work/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$work" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2 && go mod tidy >&2 &&
    go build -trimpath -ldflags "-s -w" -o "$out.tmp" . )
  mv "$out.tmp" "$out"
  log "etcd $ETCD_VERSION built in $((SECONDS - t0))s"
}

k8s_module_dir() {
  local json gomod
  json="$(cd /tmp && go mod download -json "k8s.io/kubernetes@$K8S_VERSION")"
  gomod="$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  printf '%s' "$gomod"
}

build_k8s() { # build_k8s <component...>: the cmd/<component> binaries of k8s.io/kubernetes
  local want=()
  for c in "$@"; do
    if [[ -x "$BIN/$c-$K8S_VERSION" ]]; then log "$c $K8S_VERSION cached"; else want+=("$c"); fi
  done
  ((${#want[@]})) || return 0
  local t0=$SECONDS work gomod staging
  work="$(mktemp -d)"; trap 'rm -rf "$work"' RETURN
  gomod="$(k8s_module_dir)"
  # Every staging module k8s.io/kubernetes replaces with ./staging/... must be replaced by its
  # published v0.x twin of the same release.
  staging="$(sed -n '/^replace (/,/^)/p' "$gomod" | awk '$2=="=>" && $3 ~ /^\.\/staging/ {print $1}')"
  local v0="v0.${K8S_VERSION#v1.}"
  {
    echo "module portico.dev/k8s-wrapper"
    echo
    echo "go 1.26.0"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    for m in $staging; do echo "	$m => $m $v0"; done
    echo ")"
  } > "$work/go.mod"
  log "k8s wrapper replaces $(echo "$staging" | wc -w) staging modules with $v0"
  local minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  local ld="-s -w"
  ld+=" -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  ld+=" -X k8s.io/component-base/version.gitMajor=1"
  ld+=" -X k8s.io/component-base/version.gitMinor=$minor"
  ld+=" -X k8s.io/component-base/version.gitTreeState=clean"
  ld+=" -X k8s.io/component-base/version.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  ld+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  (
    cd "$work"
    for c in "${want[@]}"; do go get "k8s.io/kubernetes/cmd/$c@$K8S_VERSION" >&2; done
    for c in "${want[@]}"; do
      local t1=$SECONDS
      go build -trimpath -ldflags "$ld" -o "$BIN/$c-$K8S_VERSION.tmp" "k8s.io/kubernetes/cmd/$c"
      mv "$BIN/$c-$K8S_VERSION.tmp" "$BIN/$c-$K8S_VERSION"
      log "$c $K8S_VERSION built in $((SECONDS - t1))s"
    done
  )
  log "kubernetes binaries built in $((SECONDS - t0))s"
}

CONTAINERD_CMDS=(containerd ctr containerd-shim-runc-v2)
build_containerd() {
  local want=()
  for c in "${CONTAINERD_CMDS[@]}"; do
    if [[ -x "$BIN/$c-$CONTAINERD_VERSION" ]]; then log "$c $CONTAINERD_VERSION cached"; else want+=("$c"); fi
  done
  ((${#want[@]})) || return 0
  local t0=$SECONDS work
  work="$(mktemp -d)"; trap 'rm -rf "$work"' RETURN
  # A wrapper module (containerd's own go.mod is used as is: no replaces to undo). Static binaries: no cgo, and
  # the snapshotters that need C libraries are left out by their build tags.
  printf 'module portico.dev/containerd-wrapper\n\ngo 1.24\n' > "$work/go.mod"
  local mod=github.com/containerd/containerd/v2
  local ld="-s -w -X $mod/version.Version=$CONTAINERD_VERSION -X $mod/version.Revision=portico"
  (
    cd "$work"
    for c in "${want[@]}"; do go get "$mod/cmd/$c@$CONTAINERD_VERSION" >&2; done
    for c in "${want[@]}"; do
      go build -trimpath -tags "no_btrfs no_devmapper no_zfs" -ldflags "$ld" -o "$BIN/$c-$CONTAINERD_VERSION.tmp" "$mod/cmd/$c"
      mv "$BIN/$c-$CONTAINERD_VERSION.tmp" "$BIN/$c-$CONTAINERD_VERSION"
    done
  )
  log "containerd $CONTAINERD_VERSION (${want[*]}) built in $((SECONDS - t0))s"
}

build_ingress_nginx() {
  local out="$BIN/ingress-nginx-$INGRESS_NGINX_VERSION"
  [[ -x "$out" && -f "$out.tmpl" ]] && { log "ingress-nginx $INGRESS_NGINX_VERSION cached"; return; }
  local t0=$SECONDS work dir
  work="$(mktemp -d)"; trap 'rm -rf "$work"' RETURN
  # Built inside its own module (a copy of the downloaded one), so its go.sum checks every dependency: as a
  # dependency of a wrapper module, one of them (process-exporter) has no entry in the checksum database.
  dir="$(cd /tmp && go mod download -json "k8s.io/ingress-nginx@$INGRESS_NGINX_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  cp -r "$dir" "$work/src"
  chmod -R u+w "$work/src"
  (cd "$work/src" && GOWORK=off go build -trimpath -ldflags "-s -w -X k8s.io/ingress-nginx/version.RELEASE=$INGRESS_NGINX_VERSION" -o "$out.tmp" ./cmd/nginx)
  cp "$work/src/rootfs/etc/nginx/template/nginx.tmpl" "$out.tmpl"
  mv "$out.tmp" "$out"
  log "ingress-nginx $INGRESS_NGINX_VERSION built in $((SECONDS - t0))s"
}

what="${1:-all}"
case "$what" in
  etcd) build_etcd ;;
  k8s) build_k8s kube-apiserver kube-controller-manager ;;
  all) build_etcd; build_k8s kube-apiserver kube-controller-manager; build_ingress_nginx ;;
  ingress-nginx) build_ingress_nginx ;;
  node) build_k8s kubelet kube-proxy kube-scheduler; build_containerd ;;
  containerd) build_containerd ;;
  paths)
    echo "ETCD_BIN=$BIN/etcd-$ETCD_VERSION"
    echo "APISERVER_BIN=$BIN/kube-apiserver-$K8S_VERSION"
    echo "KCM_BIN=$BIN/kube-controller-manager-$K8S_VERSION"
    echo "KUBELET_BIN=$BIN/kubelet-$K8S_VERSION"
    echo "KUBE_PROXY_BIN=$BIN/kube-proxy-$K8S_VERSION"
    echo "SCHEDULER_BIN=$BIN/kube-scheduler-$K8S_VERSION"
    echo "INGRESS_NGINX_BIN=$BIN/ingress-nginx-$INGRESS_NGINX_VERSION"
    for c in "${CONTAINERD_CMDS[@]}"; do
      v="${c//-/_}"; echo "${v^^}_BIN=$BIN/$c-$CONTAINERD_VERSION"
    done
    ;;
  *) echo "usage: $0 [all|etcd|k8s|node|containerd|ingress-nginx|paths]" >&2; exit 2 ;;
esac
