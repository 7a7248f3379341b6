// image/build-js.sh compiles the controller to the JavaScript the image runs (/app/app/main.js). Built once here
// into a temporary directory (a few seconds), then: only what app/main.ts reaches is in it, every relative import
// names a compiled .js file, and the controller, `portico migrate` and the on-demand client-node adapter load from
// it without a single .ts module (one would bring Node's type stripper back into the process).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
let tmp = '';
let out = '';
let hook = '';

/** Files under dir (symlinks not followed: nginx-assets, package.json and node_modules are links), relative, "/"-separated. */
function files(dir: string, rel = ''): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? files(dir, r) : e.isFile() ? [r] : [];
  });
}

before(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'portico-build-js-'));
  out = path.join(tmp, 'js');
  execFileSync('bash', [path.join(ROOT, 'image/build-js.sh'), ROOT, out, process.execPath, '--link'], { stdio: ['ignore', 'ignore', 'pipe'] });
  // Loaded before the entry point: fails the process on the first module resolved to a TypeScript file.
  hook = path.join(tmp, 'no-ts.mjs');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';
registerHooks({
  resolve(spec, ctx, next) {
    const r = next(spec, ctx);
    if (r.url.startsWith('file:') && /\\.[cm]?tsx?$/.test(new URL(r.url).pathname)) {
      process.stderr.write('TypeScript module loaded: ' + r.url + ' (from ' + ctx.parentURL + ')\\n');
      process.exit(97);
    }
    return r;
  },
});
`,
  );
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test('the build holds the controller as .js and nothing main.ts does not reach (no tests, e2e or dev tools)', () => {
  const all = files(out);
  assert.deepEqual(all.filter((f) => !f.endsWith('.js')), []);
  for (const f of ['app/main.js', 'app/setup.js', 'app/migrate.js', 'operator/kube/kubeconfig.js', 'reconcilers/nginx-driver/nginx/runtime.js']) assert.ok(all.includes(f), f);
  assert.deepEqual(all.filter((f) => /\.test(-helpers)?\.js$/.test(f) || f.startsWith('e2e/') || f.startsWith('tools/')), []);
  for (const f of ['crds/generate.js', 'reconcilers/kinds/processors-gen.js', 'reconcilers/kinds/rbac.js']) assert.ok(!all.includes(f), f);
});

test('every relative import in the build names a compiled .js file of the build', () => {
  const spec = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
  let n = 0;
  const bad: string[] = [];
  for (const f of files(out)) {
    for (const m of readFileSync(path.join(out, f), 'utf8').matchAll(spec)) {
      n++;
      const s = m[1] as string;
      if (!s.endsWith('.js') || !existsSync(path.join(out, path.dirname(f), s))) bad.push(`${f}: ${s}`);
    }
  }
  assert.ok(n > 200, `only ${n} relative imports found: the pattern no longer matches tsc's output`);
  assert.deepEqual(bad, []);
});

const run = (args: string[]) => spawnSync(process.execPath, ['--import', hook, ...args], { cwd: tmp, encoding: 'utf8', timeout: 60_000 });

test('main.js loads its whole module graph without a .ts module (an unknown flag is refused after every import)', () => {
  const r = run([path.join(out, 'app/main.js'), '--help']);
  assert.equal(r.stderr.trim(), 'portico: unknown flag --help');
  assert.equal(r.status, 2);
  const v = run([path.join(out, 'app/main.js'), '--version']);
  assert.equal(v.stdout.trim(), `portico ${(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}`, 'package.json is read next to app/');
});

test('`main.js migrate` (a dynamic import) and the on-demand client-node adapter load without a .ts module', () => {
  const r = run([path.join(out, 'app/main.js'), 'migrate', '-f', path.join(ROOT, 'image/smoke/migrate-ingress.yaml'), '--ingress-class', 'nginx']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^ {2}everything can move as-is$/m);
  const k = run(['--input-type=module', '-e', `const m = await import(${JSON.stringify(path.join(out, 'operator/kube/kubeconfig.js'))}); console.log(typeof m.loadKubeConfig);`]);
  assert.equal(k.status, 0, k.stderr);
  assert.equal(k.stdout.trim(), 'function');
});

test('the compiled runtime finds nginx-assets next to it', () => {
  const r = run(['--input-type=module', '-e', `const m = await import(${JSON.stringify(path.join(out, 'reconcilers/nginx-driver/nginx/runtime.js'))}); console.log(m.ASSETS_DIR);`]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), path.join(out, 'nginx-assets'));
});
