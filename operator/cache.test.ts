import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from './cache.ts';
import type { KubeObject } from './kube/object.ts';

type Ing = KubeObject & { spec: { services: string[] } };
const ing = (ns: string, name: string, services: string[], rv = '1'): Ing => ({
  metadata: { namespace: ns, name, resourceVersion: rv },
  spec: { services },
});

test('secondary index follows upserts and removals', () => {
  const s = new Store<Ing>({ service: (o) => o.spec.services.map((x) => `${o.metadata.namespace}/${x}`) });
  s.upsert(ing('a', 'i1', ['svc1', 'svc2']));
  s.upsert(ing('a', 'i2', ['svc1']));
  assert.deepEqual(s.indexKeys('service', 'a/svc1'), ['a/i1', 'a/i2']);
  s.upsert(ing('a', 'i1', ['svc2'], '2'));
  assert.deepEqual(s.indexKeys('service', 'a/svc1'), ['a/i2']);
  assert.deepEqual(s.indexKeys('service', 'a/svc2'), ['a/i1']);
  s.remove('a/i2');
  assert.deepEqual(s.indexKeys('service', 'a/svc1'), []);
  assert.equal(s.size(), 1);
});

test('cached objects are read-only', () => {
  const s = new Store<Ing>();
  s.upsert(ing('a', 'i1', ['x']));
  const o = s.get('a/i1') as Ing;
  assert.throws(() => {
    (o.spec.services as string[]).push('y');
  }, TypeError);
});

test('indexers added later index existing objects', () => {
  const s = new Store<Ing>();
  s.upsert(ing('a', 'i1', ['x']));
  s.addIndexers({ svc: (o) => o.spec.services });
  assert.deepEqual(s.indexKeys('svc', 'x'), ['a/i1']);
  assert.throws(() => s.indexKeys('nope', 'x'), /no index/);
});
