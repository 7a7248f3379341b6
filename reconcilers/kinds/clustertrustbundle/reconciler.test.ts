// The ClusterTrustBundle kind: what its cache keeps of a bundle, the reader the normalizers get, and the reconciler
// normalizing again the records made from a bundle when it appears, changes or goes — and nothing when it did not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model } from '../../model/model.ts';
import { ClusterTrustBundleReconciler, trustBundleReader, trustBundleTransform, type ClusterTrustBundleObject } from './reconciler.ts';
import { clusterTrustBundle } from './index.ts';

const bundle = (name: string, trustBundle?: unknown): ClusterTrustBundleObject =>
  ({
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'ClusterTrustBundle',
    metadata: { name, uid: `uid-${name}`, resourceVersion: '7', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'the bundle again' }, labels: { a: 'b' } },
    spec: { signerName: '', ...(trustBundle !== undefined ? { trustBundle } : {}) },
  }) as ClusterTrustBundleObject;

test('the cache keeps a bundle\'s name and spec.trustBundle only; the reader says found (its PEM, \'\' when none) or not', () => {
  const t = trustBundleTransform(bundle('corp', 'PEM'));
  assert.deepEqual(t, { apiVersion: 'certificates.k8s.io/v1beta1', kind: 'ClusterTrustBundle', metadata: { name: 'corp', uid: 'uid-corp', resourceVersion: '7' }, spec: { trustBundle: 'PEM' } });
  assert.deepEqual(trustBundleTransform(bundle('odd', 42)).spec, {}, 'a trustBundle that is no string is not kept');
  const store = new Map<string, ClusterTrustBundleObject>([['corp', t], ['none', trustBundleTransform(bundle('none'))]]);
  const read = trustBundleReader({ store } as never);
  assert.deepEqual(read('corp'), { trustBundle: 'PEM' });
  assert.deepEqual(read('none'), { trustBundle: '' }, 'found but empty: the normalizers refuse it as empty, not as missing');
  assert.equal(read('gone'), undefined);
});

test('a bundle that appears, changes or goes normalizes its readers again; an unchanged one does not', async () => {
  const model = new Model();
  const store = new Map<string, ClusterTrustBundleObject>();
  const enqueued: string[] = [];
  const r = new ClusterTrustBundleReconciler({ model, read: trustBundleReader({ store } as never), enqueueCrd: (ref) => enqueued.push(ref) });
  const rec = (key: string) => ({ key, namespace: key.split('/')[0]!, name: key.split('/')[1]!, uid: key, generation: 1, creationTimestamp: '' });
  model.setCrd('Gateway', rec('apps/gw') as never, { secrets: [], clusterTrustBundles: ['corp'] });
  model.setCrd('BackendTLSPolicy', rec('web/p') as never, { secrets: [], clusterTrustBundles: ['corp', 'other'] });
  const step = async (name: string): Promise<string[]> => {
    enqueued.length = 0;
    await r.reconcile({} as never, name);
    return [...enqueued].sort();
  };
  assert.deepEqual(await step('corp'), [], 'not there, never was: nothing to tell');
  store.set('corp', trustBundleTransform(bundle('corp', 'PEM 1')));
  assert.deepEqual(await step('corp'), ['BackendTLSPolicy/web/p', 'Gateway/apps/gw'], 'created');
  assert.deepEqual(await step('corp'), [], 'the same bundle again (a resync, a label change)');
  store.set('corp', trustBundleTransform(bundle('corp', 'PEM 2')));
  assert.deepEqual(await step('corp'), ['BackendTLSPolicy/web/p', 'Gateway/apps/gw'], 'rotated');
  store.delete('corp');
  assert.deepEqual(await step('corp'), ['BackendTLSPolicy/web/p', 'Gateway/apps/gw'], 'deleted: they must stop using it');
  store.set('unread', trustBundleTransform(bundle('unread', 'PEM')));
  assert.deepEqual(await step('unread'), [], 'a bundle nothing reads');
});

test('the kind: cluster-scoped certificates.k8s.io/clustertrustbundles, list and watch only, Gateway API only, before the kinds reading it', () => {
  assert.deepEqual(clusterTrustBundle.resource, { group: 'certificates.k8s.io', version: 'v1beta1', plural: 'clustertrustbundles', kind: 'ClusterTrustBundle', namespaced: false });
  assert.equal(clusterTrustBundle.feature, 'gateway-api');
  assert.equal(clusterTrustBundle.stage, 0);
  assert.deepEqual(clusterTrustBundle.rbac.map((r) => [r.resource.plural, r.verbs.join()]), [['clustertrustbundles', 'list,watch']]);
});
