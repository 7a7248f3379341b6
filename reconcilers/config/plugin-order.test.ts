// PLUGIN_ORDER (the TypeScript side's table of plugin names) against the Lua side's one list of plugin modules,
// nginx-assets/lua/portico/plugins/registry.lua: the same names, in the same order, each module declaring its name,
// order, new and check. Read as text (the modules need nginx to load), so the declarations keep one simple form:
// `_M.name = "..."`, `_M.order = <integer>` at the start of a line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PLUGIN_ORDER } from './types.ts';
import { PLUGIN_TYPES } from '../../crds/schema/plugin.ts';

const luaRoot = new URL('../../nginx-assets/lua/', import.meta.url);

type LuaPlugin = { module: string; name: string; order: number; source: string };

function registry(): LuaPlugin[] {
  const text = readFileSync(new URL('portico/plugins/registry.lua', luaRoot), 'utf8');
  const block = /^local MODULES = \{\n([\s\S]*?)^\}/m.exec(text);
  assert.ok(block, 'registry.lua has a `local MODULES = { ... }` list');
  const modules = [...(block[1] as string).matchAll(/^\s*"(portico\.plugins\.[a-z_]+)",/gm)].map((m) => m[1] as string);
  assert.ok(modules.length > 0, 'registry.lua lists plugin modules');
  return modules.map((module) => {
    const source = readFileSync(new URL(`${module.replaceAll('.', '/')}.lua`, luaRoot), 'utf8');
    const name = /^_M\.name = "([a-z-]+)"$/m.exec(source)?.[1];
    const order = /^_M\.order = (-?\d+)$/m.exec(source)?.[1];
    assert.ok(name !== undefined, `${module} declares _M.name = "<type>"`);
    assert.ok(order !== undefined, `${module} declares _M.order = <integer>`);
    return { module, name, order: Number(order), source };
  });
}

test('plugins: PLUGIN_ORDER names the Lua registry\'s plugin modules, in their order', () => {
  const lua = registry();
  assert.deepEqual(lua.map((p) => p.name), [...PLUGIN_ORDER]);
  for (let i = 1; i < lua.length; i++) {
    const [prev, cur] = [lua[i - 1] as LuaPlugin, lua[i] as LuaPlugin];
    assert.ok(prev.order < cur.order, `${cur.module}: order ${cur.order} ascends after ${prev.name}'s ${prev.order}`);
  }
});

test('plugins: each Lua plugin module compiles instances and checks its configuration', () => {
  for (const p of registry()) {
    assert.match(p.source, /^function _M\.new\(/m, `${p.module} has new(conf, id)`);
    assert.match(p.source, /^function _M\.check\(/m, `${p.module} has check(conf)`);
  }
});

test('plugins: every type a Plugin object may configure is a Lua plugin', () => {
  const known = new Set<string>(PLUGIN_ORDER);
  for (const t of PLUGIN_TYPES) assert.ok(known.has(t), `${t} is in PLUGIN_ORDER`);
});
