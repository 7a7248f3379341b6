import { test } from 'node:test';
import assert from 'node:assert/strict';
import { excludeSources, findCulprits, fingerprint } from './isolate.ts';
import type { Structure } from './config-types.ts';

function structure(sources: string[]): Structure {
  return {
    global: {} as Structure['global'],
    servers: sources.map((src, i) => ({ host: `h${i}.example.com`, tls: false, locations: [{ path: '/', match: 'prefix' as const, backendId: `b${i}`, source: src, sslRedirect: false }] })),
    backendIds: sources.map((_, i) => `b${i}`).sort(),
    observeLatency: false,
  };
}

test('finds every culprit among many sources with few nginx -t runs', async () => {
  const sources = Array.from({ length: 100 }, (_, i) => `ns/ing-${String(i).padStart(3, '0')}`);
  const bad = new Set(['ns/ing-017', 'ns/ing-063']);
  let runs = 0;
  const passes = async (s: Structure) => {
    runs++;
    return !s.servers.some((srv) => srv.locations.some((l) => bad.has(l.source)));
  };
  const r = await findCulprits(structure(sources), passes);
  assert.equal(r.isolated, true);
  assert.deepEqual(r.culprits.sort(), [...bad].sort());
  assert.ok(runs <= 2 * 8 + 4, `${runs} nginx -t runs`);
});

test('a global fault (fails with every source left out) excludes nothing', async () => {
  const r = await findCulprits(structure(['a/x', 'a/y']), async () => false);
  assert.deepEqual(r, { culprits: [], isolated: false });
});

test('excluding a source drops its locations, empty servers and unused backends; fingerprints track its content', () => {
  const s = structure(['a/x', 'a/y']);
  const e = excludeSources(s, new Set(['a/x']));
  assert.deepEqual(e.servers.map((x) => x.host), ['h1.example.com']);
  assert.deepEqual(e.backendIds, ['b1']);
  assert.notEqual(fingerprint(s, 'a/x'), fingerprint(s, 'a/y'));
  assert.equal(fingerprint(s, 'a/x'), fingerprint(structure(['a/x', 'a/z']), 'a/x'));
});
