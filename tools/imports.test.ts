// The import rules of tools/imports.ts: no cycles, no import from a lower layer into a higher one (operator/ is a
// framework: nothing of Portico's), and the list of known exceptions only shrinks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KNOWN_WRONG_WAY, cycles, importGraph, knownException, layerOf, parseImports, wrongWay, type Import } from './imports.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { files, imports } = importGraph(ROOT);
const show = (i: Import) => `${i.from} → ${i.to}`;

test('the checker sees the code base (every root, some imports)', () => {
  for (const r of ['operator/manager.ts', 'crds/schema/index.ts', 'reconcilers/model/model.ts', 'app/main.ts']) assert.ok(files.includes(r), r);
  assert.ok(imports.length > 500, `${imports.length} imports`);
  assert.ok(imports.some((i) => i.from === 'app/main.ts' && i.to === 'app/migrate.ts'), 'dynamic import() is an edge');
});

test('no import cycles (type-only imports count)', () => {
  assert.deepEqual(cycles(files, imports).map((c) => c.join(' ↔ ')), []);
});

test('operator/ imports nothing of Portico\'s (app/, reconcilers/, crds/), tests included', () => {
  assert.deepEqual(imports.filter((i) => i.from.startsWith('operator/') && !i.to.startsWith('operator/')).map(show), []);
});

test('no new wrong-way import (a lower layer importing a higher one)', () => {
  assert.deepEqual(wrongWay(imports).filter((i) => !knownException(i)).map(show), []);
});

test('every known wrong-way exception is still needed (remove the ones that are fixed)', () => {
  const used = new Set(wrongWay(imports).map(knownException));
  assert.deepEqual(KNOWN_WRONG_WAY.filter((k) => !used.has(k)), []);
});

test('parser: static, multi-line, type-only, re-exports, side effects, dynamic; comments and packages ignored', () => {
  const src = [
    "import { a } from './a.ts';",
    "import type { B } from './b.ts';",
    "import { type C, type D } from './c.ts';",
    "import { e, type E } from './e.ts';",
    'import {\n  f,\n  g,\n} from "./f.ts";',
    "export { h } from './h.ts';",
    "export * from './i.ts';",
    "import './j.ts';",
    "const k = await import('./k.ts');",
    "import { z } from 'zod';",
    "// import { no } from './comment.ts';",
    " * import { no } from './doc.ts';",
  ].join('\n');
  assert.deepEqual(parseImports(src), [
    { spec: './a.ts', typeOnly: false },
    { spec: './b.ts', typeOnly: true },
    { spec: './c.ts', typeOnly: true },
    { spec: './e.ts', typeOnly: false },
    { spec: './f.ts', typeOnly: false },
    { spec: './h.ts', typeOnly: false },
    { spec: './i.ts', typeOnly: false },
    { spec: './j.ts', typeOnly: false },
    { spec: './k.ts', typeOnly: false },
  ]);
});

test('cycles and layers on a small graph', () => {
  const edge = (from: string, to: string): Import => ({ from, to, typeOnly: false });
  const g = [edge('x/a.ts', 'x/b.ts'), edge('x/b.ts', 'x/c.ts'), edge('x/c.ts', 'x/a.ts'), edge('x/d.ts', 'x/a.ts'), edge('x/e.ts', 'x/e.ts')];
  assert.deepEqual(cycles(['x/a.ts', 'x/b.ts', 'x/c.ts', 'x/d.ts', 'x/e.ts'], g), [['x/a.ts', 'x/b.ts', 'x/c.ts'], ['x/e.ts']]);
  assert.equal(layerOf('reconcilers/model/types.ts'), 4);
  assert.equal(layerOf('reconcilers/ingress.ts'), 6);
  assert.deepEqual(
    wrongWay([edge('operator/a.test.ts', 'app/b.ts'), edge('reconcilers/model/a.ts', 'reconcilers/nginx-driver/b.ts'), edge('reconcilers/model/a.test.ts', 'reconcilers/nginx-driver/b.ts'), edge('app/a.ts', 'operator/b.ts')]).map(show),
    ['operator/a.test.ts → app/b.ts', 'reconcilers/model/a.ts → reconcilers/nginx-driver/b.ts'],
  );
});

test('a kind folder\'s claim processor is of the translation layer; the rest of the folder is not', () => {
  assert.equal(layerOf('reconcilers/kinds/ingress/processor.ts'), layerOf('reconcilers/translate/translate.ts'));
  assert.equal(layerOf('reconcilers/kinds/processors.ts'), layerOf('reconcilers/translate/translate.ts'));
  assert.equal(layerOf('reconcilers/kinds/ingress/index.ts'), 6);
  assert.equal(layerOf('reconcilers/kinds/ingress/sub/processor.ts'), 6);
  assert.equal(layerOf('reconcilers/kinds/processor.ts'), 6);
});
