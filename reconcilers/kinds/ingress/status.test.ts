// Ingress status publishing side by side with ingress-nginx: Portico writes only the Ingresses it serves, never
// touches another class's status, and clears status on shutdown only when told to (--update-status-on-shutdown).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../../../operator/cache.ts';

import type { KubeClient } from '../../../operator/kube/client.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { createLogger } from '../../../operator/log.ts';
import { Metrics } from '../../../operator/metrics.ts';
import { StatusReconciler, type LbIngress } from './status.ts';

const ctx = { signal: new AbortController().signal, log: createLogger('error') };
const OURS: LbIngress[] = [{ ip: '192.0.2.10' }];
const THEIRS: LbIngress[] = [{ ip: '198.51.100.7' }];

const ingress = (name: string, lb: LbIngress[]): KubeObject =>
  ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: 'default' }, status: { loadBalancer: { ingress: lb } } }) as KubeObject;

function setup(objs: KubeObject[], served: string[], leader = true) {
  const store = new Store<KubeObject>();
  for (const o of objs) store.upsert(o);
  const patches: { path: string; body: unknown }[] = [];
  const client = { request: async (_m: string, path: string, o: { body: unknown }) => void patches.push({ path, body: o.body }) } as unknown as KubeClient;
  const rec = new StatusReconciler(
    {
      ingresses: { store } as never,
      services: { store: new Store<KubeObject>() } as never,
      client,
      metrics: new Metrics({ prefix: 'portico' }),
      isLeader: () => leader,
      programmed: (k) => served.includes(k),
    },
    { publishStatusAddress: '192.0.2.10' },
  );
  return { rec, patches };
}

test('an Ingress of another class (ingress-nginx side by side) keeps its status untouched', async () => {
  const { rec, patches } = setup([ingress('theirs', THEIRS), ingress('theirs-empty', []), ingress('mine', [])], ['default/mine']);
  await rec.reconcile(ctx, 'default/theirs');
  await rec.reconcile(ctx, 'default/theirs-empty');
  assert.equal(patches.length, 0, 'nothing written on Ingresses Portico does not serve');
  await rec.reconcile(ctx, 'default/mine');
  assert.equal(patches.length, 1);
  assert.match(patches[0]?.path ?? '', /\/namespaces\/default\/ingresses\/mine\/status$/);
  assert.deepEqual(patches[0]?.body, { status: { loadBalancer: { ingress: OURS } } });
});

test('an Ingress moved to another class loses only addresses Portico wrote', async () => {
  const { rec, patches } = setup([ingress('moved', OURS), ingress('theirs', THEIRS)], []);
  await rec.reconcile(ctx, 'default/moved');
  await rec.reconcile(ctx, 'default/theirs');
  assert.equal(patches.length, 1);
  assert.match(patches[0]?.path ?? '', /ingresses\/moved\/status$/);
  assert.deepEqual(patches[0]?.body, { status: { loadBalancer: { ingress: [] } } });
});

test('shutdown: clearAll removes Portico\'s addresses from served Ingresses only, and only as leader', async () => {
  const objs = [ingress('mine', OURS), ingress('mine-other-address', THEIRS), ingress('theirs', OURS)];
  const follower = setup(objs, ['default/mine', 'default/mine-other-address'], false);
  assert.equal(await follower.rec.clearAll(), 0);
  assert.deepEqual(follower.patches, []);
  const { rec, patches } = setup(objs, ['default/mine', 'default/mine-other-address']);
  assert.equal(await rec.clearAll(), 1);
  assert.equal(patches.length, 1);
  assert.match(patches[0]?.path ?? '', /ingresses\/mine\/status$/);
  assert.deepEqual(patches[0]?.body, { status: { loadBalancer: { ingress: [] } } });
});

test('non-leaders never write', async () => {
  const { rec, patches } = setup([ingress('mine', [])], ['default/mine'], false);
  await rec.reconcile(ctx, 'default/mine');
  assert.deepEqual(patches, []);
});
