// The repository's test and type-check sets are defined once (package.json scripts) and cover every file: a test
// file or a .ts file nobody runs or type-checks is how nginx-assets' tests were silently skipped by `npm run`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const tsconfig = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8')) as { include: string[]; exclude?: string[] };

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      walk(rel, out);
    } else out.push(rel);
  }
  return out;
}
const files = walk('');
const globsOf = (script: string) => [...(pkg.scripts[script] ?? '').matchAll(/'([^']+)'/g)].map((m) => m[1] as string);

test('make and npm run the same sets: each Makefile test target runs the package.json script', () => {
  const makefile = readFileSync(path.join(root, 'Makefile'), 'utf8');
  for (const [target, script] of [['typecheck', 'typecheck'], ['unit', 'test:unit'], ['e2e', 'test:e2e']] as const) {
    const recipe = new RegExp(`^${target}:.*\\n\\t(.*)$`, 'm').exec(makefile)?.[1];
    assert.equal(recipe, `$(NODE) --run ${script}`, `make ${target}`);
    assert.ok(pkg.scripts[script], `package.json has a "${script}" script`);
  }
});

test('every unit test file is in test:unit, and no e2e file is', () => {
  const globs = globsOf('test:unit');
  assert.ok(globs.length > 0);
  const tests = files.filter((f) => f.endsWith('.test.ts'));
  const e2e = tests.filter((f) => f.endsWith('.e2e.test.ts'));
  const unit = tests.filter((f) => !f.endsWith('.e2e.test.ts'));
  assert.ok(unit.includes('nginx-assets/lua/tests/lua.test.ts'));
  for (const f of unit) assert.ok(globs.some((g) => path.matchesGlob(f, g)), `${f} is not run by test:unit (${globs.join(' ')})`);
  for (const f of e2e) assert.ok(!globs.some((g) => path.matchesGlob(f, g)), `${f} needs the cluster; not a unit test`);
  assert.ok(e2e.every((f) => /^e2e\/[^/]+\.e2e\.test\.ts$/.test(f)), 'run-e2e.sh runs e2e/*.e2e.test.ts');
});

test('tsconfig type-checks every .ts file', () => {
  const excluded = (f: string) => (tsconfig.exclude ?? []).some((x) => f === x || f.startsWith(`${x}/`));
  for (const f of files.filter((x) => x.endsWith('.ts'))) {
    assert.ok(!excluded(f) && tsconfig.include.some((g) => path.matchesGlob(f, g)), `${f} is not type-checked`);
  }
});
