# Sourced by the build scripts that make one binary of a Go module at a pinned version (e2e/oauth2-proxy/build.sh,
# e2e/bench/peers/build-traefik.sh). Defines
#
#   go_pinned_build OUT MODULE VERSION PACKAGE [LDFLAGS]
#
# which builds PACKAGE (a main package of MODULE) into OUT, unless OUT already is that build. How:
#   - a scratch module in ${PORTICO_CACHE:-$HOME/.cache/portico}/src/<basename of OUT> requires MODULE@VERSION and
#     nothing else, so every other requirement is the one MODULE's own go.mod pins (minimal version selection);
#   - MODULE's own replace and exclude directives are copied into it: a dependency's replaces are ignored by Go, and
#     without them a module that builds against its forks (Traefik does) fails, or builds something else. This is also
#     why `go install MODULE@VERSION` is not used: it refuses any module whose go.mod has a replace;
#   - MODULE's go.sum seeds the scratch module's, and anything missing is checked against the checksum database as
#     usual (GOFLAGS=-mod=mod);
#   - CGO_ENABLED=0, -trimpath, -ldflags "-s -w LDFLAGS" (LDFLAGS: e.g. -X ...Version=...).
# "Already that build": OUT exists and `go version -m OUT` names MODULE at VERSION (as the main module of a
# `go install`, or as a dependency of the scratch module), so a binary built either way is kept.
# Logs go to stderr; the build time is logged. GOTOOLCHAIN is `local` unless set (GOTOOLCHAIN=go1.27.3 fetches a newer
# Go when MODULE's go.mod asks for one).

go_pinned_log() { echo "[build] $*" >&2; }

# go_pinned_is OUT MODULE VERSION: OUT is a Go binary built from MODULE at VERSION.
go_pinned_is() {
  [[ -x "$1" ]] || return 1
  go version -m "$1" 2>/dev/null | awk -v m="$2" -v v="$3" '($1 == "mod" || $1 == "dep") && $2 == m && $3 == v { ok = 1 } END { exit !ok }'
}

go_pinned_build() {
  local out="$1" module="$2" version="$3" pkg="$4" ldflags="${5:-}"
  local name cache src t0=$SECONDS
  name="$(basename "$out")"
  if go_pinned_is "$out" "$module" "$version"; then
    go_pinned_log "$name cached ($module $version)"
    return 0
  fi
  cache="${PORTICO_CACHE:-$HOME/.cache/portico}"
  src="$cache/src/$name"
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOFLAGS=-mod=mod
  mkdir -p "$(dirname "$out")" "$src"

  # The module's own go.mod and go.sum, from the module cache (downloaded from the proxy the first time).
  local json modfile moddir
  json="$(cd "$src" && go mod download -json "$module@$version")"
  modfile="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  moddir="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  [[ -f "$modfile" && -d "$moddir" ]] || { go_pinned_log "cannot download $module@$version: $json"; return 1; }

  # Its replace and exclude directives, single-line or in blocks, verbatim. A replacement by a local path (./x, ../x)
  # points into the module's own tree, which a dependency cannot use: refuse rather than build something else.
  local directives
  directives="$(awk '
    /^(replace|exclude)[[:space:]]*\($/ { inblock = 1; print; next }
    inblock { print; if ($0 ~ /^\)/) inblock = 0; next }
    /^(replace|exclude)[[:space:]]/ { print }
  ' "$modfile")"
  if printf '%s\n' "$directives" | grep -Eq '=>[[:space:]]*\.\.?/'; then
    go_pinned_log "$module@$version replaces a module with a local path; go_pinned_build cannot build it"
    return 1
  fi
  local godirective
  godirective="$(awk '$1 == "go" { print $2; exit }' "$modfile")"

  {
    echo "// Written by e2e/setup/go-pinned.sh: $module $version and nothing else, with its own replaces and excludes."
    echo "module portico.dev/pinned/${name//[^A-Za-z0-9._-]/-}"
    echo
    echo "go ${godirective:-1.21}"
    echo
    echo "require $module $version"
    echo
    printf '%s\n' "$directives"
  } > "$src/go.mod"
  cp "$moddir/go.sum" "$src/go.sum" 2>/dev/null || : > "$src/go.sum"
  chmod u+w "$src/go.sum"

  (cd "$src" && go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg")
  mv "$out.tmp" "$out"
  go_pinned_is "$out" "$module" "$version" || { go_pinned_log "$out does not say it is $module $version"; return 1; }
  go_pinned_log "$name built in $((SECONDS - t0))s ($module $version, $(du -m "$out" | cut -f1) MB)"
}
