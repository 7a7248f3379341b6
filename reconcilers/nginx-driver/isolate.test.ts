import { test } from 'node:test';
import assert from 'node:assert/strict';
import { excludeProfiles, findCulprits, withoutProfiles } from './isolate.ts';
import type { DataPlane, Structure } from '../config/types.ts';

function structure(names: string[]): Structure {
  return { global: {} as Structure['global'], profiles: names.map((name) => ({ name, proxyBodySize: '1m' })) };
}

test('finds every failing profile among many with few nginx -t runs', async () => {
  const names = Array.from({ length: 100 }, (_, i) => `p_${String(i).padStart(3, '0')}`);
  const bad = new Set(['p_017', 'p_063']);
  let runs = 0;
  const passes = async (s: Structure) => {
    runs++;
    return !s.profiles.some((p) => bad.has(p.name));
  };
  const r = await findCulprits(structure(names), passes);
  assert.equal(r.isolated, true);
  assert.deepEqual(r.culprits.sort(), [...bad].sort());
  assert.ok(runs <= 2 * 8 + 4, `${runs} nginx -t runs`);
});

test('a global fault (fails with every profile left out) excludes nothing', async () => {
  const r = await findCulprits(structure(['p_a', 'p_b']), async () => false);
  assert.deepEqual(r, { culprits: [], isolated: false });
});

test('excluding a profile drops it and the routes using it; their sources are named; other hosts keep their objects', () => {
  assert.deepEqual(excludeProfiles(structure(['p_a', 'p_b']), new Set(['p_a'])).profiles.map((p) => p.name), ['p_b']);
  const route = (source: string, profile?: string) => ({ source, backendId: 'b', sslRedirect: false, ...(profile ? { profile } : {}) });
  const routes: DataPlane['routes'] = {
    'a.example.com': { tls: false, rules: [{ path: '/', match: 'prefix', route: route('Ingress/ns/a', 'p_a') }] },
    'b.example.com': { tls: false, rules: [{ path: '/x', match: 'prefix', route: route('Ingress/ns/b', 'p_a') }, { path: '/', match: 'prefix', route: route('Ingress/ns/c') }] },
    'c.example.com': { tls: false, rules: [{ path: '/', match: 'prefix', route: route('Ingress/ns/c', 'p_b') }] },
  };
  const r = withoutProfiles(routes, new Set(['p_a']));
  assert.deepEqual(Object.keys(r.routes).sort(), ['b.example.com', 'c.example.com']);
  assert.deepEqual(r.routes['b.example.com']?.rules.map((x) => x.path), ['/']);
  assert.equal(r.routes['c.example.com'], routes['c.example.com'], 'untouched host is the same object');
  assert.deepEqual([...r.sources].sort(), ['Ingress/ns/a', 'Ingress/ns/b']);
});
