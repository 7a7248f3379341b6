// The Gateway status writer: Service names, condition merging, and which orphaned Gateway Services it removes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { GatewayStatusReconciler, gatewayServiceName, mergeApiConditions, SUPPORTED_FEATURES } from './status.ts';
import { Model } from '../../model/model.ts';

test('a Gateway\'s Service name: "<gateway>-portico", or a readable head and a hash when that is no DNS label', () => {
  assert.equal(gatewayServiceName('same-namespace'), 'same-namespace-portico');
  const long = gatewayServiceName('a'.repeat(70));
  assert.ok(long.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(long), long);
  const dotted = gatewayServiceName('gw.example.com');
  assert.ok(/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(dotted) && dotted.length <= 63, dotted);
  assert.notEqual(gatewayServiceName('gw.example.com'), gatewayServiceName('gw.example.org'));
  assert.ok(/^gw-[0-9a-f]{10}-portico$/.test(gatewayServiceName('1.2')), gatewayServiceName('1.2'));
});

test('conditions: others\' kept, lastTransitionTime kept while the status does not flip, observedGeneration ours', () => {
  const cur = [
    { type: 'Accepted', status: 'True', observedGeneration: 1, lastTransitionTime: 't0', reason: 'Accepted', message: 'm' },
    { type: 'example.com/Foo', status: 'True', observedGeneration: 1, lastTransitionTime: 't0', reason: 'Foo', message: 'theirs' },
  ];
  const out = mergeApiConditions(cur, [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'm2' }, { type: 'Programmed', status: 'False', reason: 'Pending', message: '' }], 2, 't1');
  assert.deepEqual(out.map((c) => [c.type, c.lastTransitionTime, c.observedGeneration ?? null, c.message]), [
    ['example.com/Foo', 't0', 1, 'theirs'],
    ['Accepted', 't0', 2, 'm2'],
    ['Programmed', 't1', 2, 'Pending'],
  ]);
});

test('the GatewayClass status names exactly the features the conformance run claims (e2e/gateway-api/supported-features)', () => {
  const file = readFileSync(new URL('../../../e2e/gateway-api/supported-features', import.meta.url), 'utf8');
  const claimed = file.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean).sort();
  assert.deepEqual(claimed, [...SUPPORTED_FEATURES]);
});

test('orphans: only Gateway Services and EndpointSlices this Portico (or an older one) wrote are removed, never another Portico\'s', async () => {
  const deleted: string[] = [];
  const item = (name: string, controller?: string) => ({ metadata: { name, namespace: 'apps', annotations: { 'portico.dev/gateway': `apps/${name}`, ...(controller ? { 'portico.dev/gateway-controller': controller } : {}) } } });
  const client = {
    request: async (method: string, path: string) => {
      if (method === 'GET') return { items: [item('mine', 'portico.dev/gateway-controller'), item('legacy'), item('theirs', 'example.org/other-portico')] };
      if (method === 'DELETE') deleted.push(path);
      return {};
    },
  };
  const r = new GatewayStatusReconciler({
    model: new Model(),
    client: client as never,
    o: { controllerName: 'portico.dev/gateway-controller', reservedPorts: [], namespace: 'portico-system' },
    informers: {} as never,
    isLeader: () => true,
    programmed: () => true,
  });
  await r.removeOrphans();
  assert.deepEqual(deleted.map((p) => p.replace(/^.*\//, '')).sort(), ['legacy', 'legacy', 'mine', 'mine'], 'Services and EndpointSlices of gone Gateways: ours and pre-annotation ones, not the other controller\'s');
});
