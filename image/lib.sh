# Shared helpers of the image builds (sourced, not run). The caller has `set -euo pipefail` and runs from the
# repository root.

# Everything reusable between builds lives here: the Debian base layer, compressed layers, the Go binaries, the
# production node_modules. Safe to delete at any time.
IMAGE_CACHE="${PORTICO_CACHE:-$HOME/.cache/portico}/images"
mkdir -p "$IMAGE_CACHE"

# Go: the toolchain installed on the machine, never a downloaded one; static binaries.
export GOTOOLCHAIN=local CGO_ENABLED=0

log() { printf '[image] %s\n' "$*" >&2; }

need() {
  local missing=() c
  for c in "$@"; do command -v "$c" >/dev/null || missing+=("$c"); done
  if ((${#missing[@]})); then
    log "missing: ${missing[*]} (make deps installs them)"
    exit 1
  fi
}

# The version in package.json, read without jq or Node (neither is needed by the image build otherwise).
project_version() {
  sed -n 's/^  "version": "\([^"]*\)".*/\1/p' package.json | head -n1
}

# Timestamps inside the images: the last commit's time (SOURCE_DATE_EPOCH if the caller set one), so the same
# sources give the same bytes; 0 outside a git checkout.
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH

# det_tar DIR OUT [MEMBER...]: a reproducible tarball of DIR (default member "."): sorted, fixed times, owned by
# root, no atime/ctime or other host-specific PAX records. Named members are taken without recursion (so a layer
# can hold exactly /usr/local/bin/node and its parent directories) unless DET_TAR_RECURSE=1.
det_tar() {
  local dir=$1 out=$2
  shift 2
  local rec=(--no-recursion)
  if (($# == 0)) || [[ ${DET_TAR_RECURSE:-} == 1 ]]; then rec=(); fi
  (($#)) || set -- .
  tar -C "$dir" --sort=name --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --no-acls --no-xattrs --no-selinux "${rec[@]}" -cf "$out" "$@"
}

# go_binary NAME: path of a static binary built from image/cmd/NAME, cached by a hash of the Go sources and the
# toolchain version (a source change rebuilds it; otherwise `go` is not even started).
go_binary() {
  local name=$1 key bin
  need go
  key=$( (go version; cat image/go.mod; find "image/cmd/$name" -type f -name '*.go' | LC_ALL=C sort | xargs cat) | sha256sum | cut -c1-16)
  bin="$IMAGE_CACHE/bin/$name-$key"
  if [[ ! -x $bin ]]; then
    log "go build $name"
    mkdir -p "$IMAGE_CACHE/bin"
    (cd image && go build -trimpath -buildvcs=false -ldflags='-s -w' -o "$bin.tmp.$$" "./cmd/$name")
    mv -f "$bin.tmp.$$" "$bin"
  fi
  printf '%s\n' "$bin"
}
