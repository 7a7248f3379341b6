// The model: O(1) snapshots that are live read-only views, slices sorted on write, reverse indexes, change
// notifications only on real changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model, recordsOf } from './model.ts';
import { normalizeEndpointSlice, normalizeIngress } from './normalize.ts';
import { ing, rule, slice, svcRef } from '../translate/fixtures.test-helpers.ts';
import type { NormalizedIngress, NormalizedPlugin, NormalizedSlice } from './types.ts';

const norm = (o: ReturnType<typeof ing>): NormalizedIngress => {
  const r = normalizeIngress(o);
  if (!r.ok) throw new Error(r.reason);
  return r.ingress;
};
const sl = (name: string, ip: string): NormalizedSlice => {
  const s = normalizeEndpointSlice(slice(name, 'web', [{ name: 'http', port: 8080 }], [{ ip }]));
  if (!s) throw new Error('bad slice');
  return s;
};

test('snapshot is a view, not a copy: taking one costs the same at 1 and at 20,000 Ingresses', () => {
  const m = new Model();
  const a = norm(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }));
  m.setIngress(a);
  const snap = m.snapshot();
  for (let i = 0; i < 20_000; i++) m.setIngress({ ...a, key: `default/i${i}`, name: `i${i}` });
  assert.equal(snap.ingresses.size, 20_001, 'the snapshot sees the live map');
  assert.equal(m.snapshot().ingresses, snap.ingresses, 'no per-call copy');
});

test("a Service's slices are kept sorted by key when written, and slicesOf does not copy", () => {
  const m = new Model();
  m.setEndpointSlices('default/web', [sl('web-c', '198.51.100.3'), sl('web-a', '198.51.100.1'), sl('web-b', '198.51.100.2')]);
  assert.deepEqual(m.slicesOf('default/web').map((s) => s.key), ['default/web-a', 'default/web-b', 'default/web-c']);
  assert.equal(m.slicesOf('default/web'), m.slicesOf('default/web'));
  assert.equal(m.snapshot().slices.get('default/web'), m.slicesOf('default/web'));
  assert.deepEqual(m.slicesOf('default/none'), []);
});

test('changes are announced only when something really changed', () => {
  const m = new Model();
  const seen: string[] = [];
  m.onChange((c) => seen.push(...c.map((x) => `${x.kind} ${x.key}`)));
  const a = norm(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }));
  m.setIngress(a);
  m.setIngress({ ...a });
  m.setEndpointSlices('default/web', [sl('web-a', '198.51.100.1')]);
  m.setEndpointSlices('default/web', [sl('web-a', '198.51.100.1')]);
  m.setEndpointSlices('default/web', [sl('web-a', '198.51.100.2')]);
  m.setEndpointSlices('default/gone', []);
  m.deleteIngress('default/nope');
  assert.deepEqual(seen, ['Ingress default/a', 'EndpointSlice default/web', 'EndpointSlice default/web']);
});

test('reverse indexes follow Ingress updates and deletes; Secrets are referenced only while an Ingress names them', () => {
  const m = new Model();
  const a = norm(ing('a', { tls: [{ hosts: ['a.example.com'], secretName: 'a-tls' }], rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }));
  m.setIngress(a);
  assert.deepEqual(m.ingressesUsingService('default/web'), ['default/a']);
  assert.equal(m.isSecretReferenced('default/a-tls'), true);
  m.setIngress(norm(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('api', 80) }])] })));
  assert.deepEqual(m.ingressesUsingService('default/web'), []);
  assert.deepEqual(m.ingressesUsingService('default/api'), ['default/a']);
  assert.equal(m.isSecretReferenced('default/a-tls'), false);
  m.rejectIngress({ key: 'default/a', reason: 'bad' });
  assert.deepEqual(m.ingressesUsingService('default/api'), []);
  assert.equal(m.snapshot().rejected.get('default/a')?.reason, 'bad');
});

test('CRs are stored by kind with what they read: the Secrets are indexed until the record goes or reads others', () => {
  const m = new Model();
  const changes: string[] = [];
  m.onChange((cs) => changes.push(...cs.map((c) => `${c.kind} ${c.key}`)));
  assert.equal(recordsOf(m.snapshot(), 'Plugin').size, 0, 'a kind without records reads as empty');
  const rec = { key: 'default/lim', namespace: 'default', name: 'lim', uid: 'u', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' } as NormalizedPlugin;
  m.setCrd('Plugin', rec, { secrets: ['default/conf'] });
  assert.equal(m.crd('Plugin', 'default/lim'), rec);
  assert.equal(recordsOf(m.snapshot(), 'Plugin').get('default/lim'), rec);
  assert.deepEqual([...m.records('Plugin').keys()], ['default/lim']);
  assert.deepEqual(m.crdsUsingSecret('default/conf'), ['Plugin/default/lim']);
  assert.equal(m.isSecretReferenced('default/conf'), true);
  assert.deepEqual(m.readsOf('Plugin/default/lim').secrets, ['default/conf']);
  m.setCrd('Plugin', rec, { secrets: ['default/conf'] });
  assert.deepEqual(changes, ['Plugin default/lim'], 'the same record reading the same Secrets is no change');
  m.setCrd('Plugin', rec, { secrets: ['default/other'] });
  assert.deepEqual(m.crdsUsingSecret('default/conf'), []);
  assert.deepEqual(m.crdsUsingSecret('default/other'), ['Plugin/default/lim']);
  m.rejectCrd('Plugin', { key: 'default/lim', generation: 2, reason: 'bad' });
  assert.equal(m.crd('Plugin', 'default/lim'), undefined);
  assert.equal(m.isSecretReferenced('default/other'), false, 'a rejected record reads nothing');
  assert.equal(m.snapshot().rejectedCrds.get('Plugin/default/lim')?.reason, 'bad');
  m.setCrd('Plugin', rec, { secrets: ['default/conf'] });
  m.deleteCrd('Plugin', 'default/lim');
  assert.equal(m.isSecretReferenced('default/conf'), false);
  assert.deepEqual(m.readsOf('Plugin/default/lim').secrets, []);
  assert.deepEqual(changes, ['Plugin default/lim', 'Plugin default/lim', 'Plugin default/lim', 'Plugin default/lim', 'Plugin default/lim']);
});
