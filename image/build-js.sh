#!/usr/bin/env bash
# Compiles the controller to JavaScript: app/main.ts and every module it reaches (static and dynamic imports,
# type-only ones as empty modules; nothing from e2e/, no tests, no dev tools such as crds/generate.ts), with the
# project's own TypeScript and tsconfig.build.json: types erased, no type check (`make typecheck` does that),
# relative `./x.ts` specifiers rewritten to `./x.js`. The output keeps the source layout (OUT/app/main.js,
# OUT/operator/..., OUT/reconcilers/..., OUT/crds/...), so the paths the code builds from import.meta.url still
# resolve once nginx-assets/ and package.json sit next to them in OUT.
#
# Why: Node's built-in type stripping loads a WASM TypeScript stripper that stays resident for the life of the
# process (about 28 MB of RSS); running .js never loads it.
#
#   image/build-js.sh SRC_REPO OUT NODE_BINARY [--link]
# SRC_REPO must hold node_modules with typescript (the full `npm ci`). OUT is replaced. --link (development,
# benchmarks): also symlinks SRC_REPO's nginx-assets, package.json and node_modules into OUT, so `node OUT/app/main.js`
# runs as the image runs /app/app/main.js. Used by image/stage-app.sh (the image) and `make build-js` (.dev/js).
set -euo pipefail

src=$(cd "$1" && pwd)
out=$2
node_bin=$3
link=${4:-}

rm -rf "$out"
mkdir -p "$out"
"$node_bin" "$src/node_modules/typescript/bin/tsc" -p "$src/tsconfig.build.json" --outDir "$out"

# Every relative specifier must now name a .js file: a `.ts` one left over would load Node's type stripper again
# (or fail in the image, which holds no .ts). tsc rewrites literal specifiers only; a computed dynamic import would
# carry its runtime helper instead, which the controller must not need either.
if grep -rlE "(from|import)[[:space:]]*\(?[[:space:]]*['\"]\.{1,2}/[^'\"]*\.[cm]?tsx?['\"]|__rewriteRelativeImportExtension" \
  --include='*.js' "$out" >&2; then
  echo "build-js: the files above still import .ts modules (or compute their specifiers)" >&2
  exit 1
fi

if [[ $link == --link ]]; then
  for f in nginx-assets package.json node_modules; do ln -s "$src/$f" "$out/$f"; done
fi
