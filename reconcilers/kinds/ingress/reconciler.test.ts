// The Ingress reconciler filters by class before anything else: another controller's Ingress never reaches
// validation, the model (so no Warning can be raised about it) or the Secret references.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../../../operator/cache.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { createLogger } from '../../../operator/log.ts';
import { IngressReconciler, requestedClass } from './reconciler.ts';
import { Model } from '../../model/model.ts';
import { normalizeIngressClass } from '../../model/normalize.ts';
import { ing, portico, rule, svcRef } from '../../translate/fixtures.test-helpers.ts';

const CLASS = { controllerClass: 'portico.dev/ingress-controller', ingressClassName: 'portico', watchWithoutClass: false };
const ctx = { signal: new AbortController().signal, log: createLogger('error') };

function setup(objs: KubeObject[]) {
  const store = new Store<KubeObject>();
  for (const o of objs) store.upsert(o);
  const model = new Model();
  model.setIngressClass(normalizeIngressClass(portico(false)));
  model.setIngressClass(normalizeIngressClass({ metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } } as KubeObject));
  const r = new IngressReconciler({ store } as unknown as Informer<KubeObject>, model, CLASS);
  return { model, r };
}

// An ingress-nginx Ingress Portico would reject (regex path without use-regex) and whose TLS Secret it must not load.
const foreign = ing(
  'theirs',
  { ingressClassName: 'nginx', tls: [{ hosts: ['t.example.com'], secretName: 'their-key' }], rules: [rule('t.example.com', [{ path: '/app(/|$)(.*)', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) }])] },
);

test("another class's Ingress is neither validated, rejected nor indexed", async () => {
  const { model, r } = setup([foreign]);
  await r.reconcile(ctx, 'default/theirs');
  const snap = model.snapshot();
  assert.equal(snap.ingresses.has('default/theirs'), false);
  assert.equal(snap.rejected.has('default/theirs'), false, 'no rejection, hence no Warning');
  assert.equal(model.isSecretReferenced('default/their-key'), false, 'its TLS key is never loaded');
});

test('an Ingress that moves away from Portico is dropped from the model; a legacy class annotation is honoured', async () => {
  const mine = ing('mine', { rules: [rule('m.example.com', [{ path: '/', backend: svcRef('web', 80) }])] });
  const { model, r } = setup([mine]);
  await r.reconcile(ctx, 'default/mine');
  assert.equal(model.snapshot().ingresses.has('default/mine'), true);
  const { r: r2, model: m2 } = setup([{ ...mine, spec: { ...(mine as unknown as { spec: object }).spec, ingressClassName: 'nginx' } } as KubeObject]);
  m2.setIngress(model.snapshot().ingresses.get('default/mine') as never);
  await r2.reconcile(ctx, 'default/mine');
  assert.equal(m2.snapshot().ingresses.has('default/mine'), false);

  const legacy = { ...mine, spec: { rules: [] }, metadata: { ...mine.metadata, annotations: { 'kubernetes.io/ingress.class': 'portico' } } } as KubeObject;
  assert.deepEqual(requestedClass(legacy), { className: 'portico', classFromAnnotation: true });
  assert.deepEqual(requestedClass(foreign), { className: 'nginx', classFromAnnotation: false });
});
