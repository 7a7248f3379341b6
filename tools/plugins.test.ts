// The generated lists of plugins (tools/plugins.ts): registry.lua's MODULES and reconcilers/config/plugins/index.ts
// are what the plugin modules generate (else run `make plugins`), and the generator refuses what it cannot list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drifted, generated, INDEX_FILE, plugins, REGISTRY_FILE, ROOT } from './plugins.ts';

test('registry.lua\'s MODULES and reconcilers/config/plugins/index.ts are what the plugin modules generate (else run `make plugins`)', () => {
  assert.deepEqual(drifted(), [], 'out of date with the plugin modules: regenerate with `make plugins`');
  execFileSync(process.execPath, [fileURLToPath(new URL('./plugins.ts', import.meta.url)), '--check'], { stdio: 'pipe' });
});

test('generating is idempotent and keeps the rest of registry.lua', () => {
  const registry = generated().get(REGISTRY_FILE) as string;
  const current = readFileSync(path.join(ROOT, REGISTRY_FILE), 'utf8');
  const outside = (s: string) => s.replace(/^(-- Generated: .*\n)?local MODULES = \{\n[\s\S]*?^\}\n/m, '');
  assert.equal(outside(registry), outside(current));
  assert.match(registry, /^ {2}"portico\.plugins\.snippet", +-- snippet$/m);
});

/** A copy of the two plugin folders (and nothing else) to break. */
function sandbox(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-plugins-'));
  for (const d of ['nginx-assets/lua/portico/plugins', 'reconcilers/config/plugins']) cpSync(path.join(ROOT, d), path.join(dir, d), { recursive: true });
  return dir;
}

test('a new plugin: its Lua module takes its place by _M.order, and needs its TypeScript module', () => {
  const dir = sandbox();
  try {
    const lua = path.join(dir, 'nginx-assets/lua/portico/plugins/stamp_it.lua');
    writeFileSync(lua, 'local _M = {}\n_M.name = "stamp-it"\n_M.order = 12.5\nreturn _M\n');
    assert.throws(() => plugins(dir), /plugin stamp-it has no TypeScript module: add reconcilers\/config\/plugins\/stamp-it\.ts/);
    writeFileSync(path.join(dir, 'reconcilers/config/plugins/stamp-it.ts'), '');
    const names = plugins(dir).map((p) => p.name);
    assert.deepEqual(names.slice(-3), ['rewrite', 'stamp-it', 'snippet']);
    const out = generated(dir);
    assert.match(out.get(REGISTRY_FILE) as string, /\n {2}"portico\.plugins\.rewrite", +-- rewrite\n {2}"portico\.plugins\.stamp_it", +-- stamp-it\n/);
    assert.match(out.get(INDEX_FILE) as string, /import \* as stampIt from '\.\/stamp-it\.ts';[\s\S]*stampIt\.plugin,[\s\S]*\| stampIt\.Instance/);
    writeFileSync(lua, 'local _M = {}\n_M.name = "stamp-it"\n_M.order = 12\nreturn _M\n');
    assert.throws(() => plugins(dir), /same _M\.order \(12\)/);
    writeFileSync(lua, 'local _M = {}\n_M.name = "stamp"\n_M.order = 12.5\nreturn _M\n');
    assert.throws(() => plugins(dir), /plugin stamp belongs in stamp\.lua/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
