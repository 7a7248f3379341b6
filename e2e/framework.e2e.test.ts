// The operator framework against the real API server (RBAC on): informers, controllers, events.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, isForbidden } from '../operator/kube/client.ts';
import { Informer } from '../operator/informer.ts';
import { Controller } from '../operator/controller.ts';
import { EventRecorder } from '../operator/events.ts';
import { resourcePath } from '../operator/kube/resources.ts';
import { Resources } from '../reconcilers/resources.ts';
import type { KubeObject } from '../operator/kube/object.ts';
import { createLogger } from '../operator/log.ts';
import { Metrics } from '../operator/metrics.ts';
import { CuttableProxy } from './harness/proxy.ts';
import { until } from './harness/http.ts';
import { deleteNamespace, waitForEndpointSliceController } from './harness/pods.ts';
import { adminCredentials, compactEtcd, ensureCluster, fileCredentials, kubectl, restartApiserver, uniqueNamespace, serviceAccountKubeConfig, serviceAccountKubeconfigFile } from './harness/cluster.ts';
import { installPorticoRbac } from './harness/portico.ts';

const log = createLogger((process.env.E2E_LOG_LEVEL as 'debug' | undefined) ?? 'error');


type CM = KubeObject & { data?: Record<string, string> };

let admin: KubeClient;
let portico: KubeClient;
let ns: string;

before(async () => {
  await ensureCluster();
  admin = new KubeClient(adminCredentials());
  await installPorticoRbac();
  portico = new KubeClient(await serviceAccountKubeConfig('portico-system', 'portico'));
  ns = await uniqueNamespace('fw');
});

const cmPath = (name?: string) => resourcePath(Resources.ConfigMap, ns, name);
const createCM = (name: string, data: Record<string, string> = {}) =>
  admin.request('POST', cmPath(), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data } });
const deleteCM = (name: string) => admin.request('DELETE', cmPath(name));

describe('informer', () => {
  test('sees add, update and delete, survives an apiserver restart, and replays a delete missed during a 410', async () => {
    const proxy = new CuttableProxy({ host: '127.0.0.1', port: Number(new URL(admin.server).port) });
    await proxy.start();
    // The informer talks to the apiserver through a proxy the test can cut, as the Portico ServiceAccount.
    const client = new KubeClient(fileCredentials(await serviceAccountKubeconfigFile('portico-system', 'portico'), { server: `https://127.0.0.1:${proxy.port}` }));
    const seen: string[] = [];
    const metrics = new Metrics({ prefix: 'portico' });
    const inf = new Informer<CM>(client, Resources.ConfigMap, log, metrics, {
      namespace: ns,
      backoff: { initialMs: 100, maxMs: 1000 },
    });
    inf.addHandler({
      add: (o) => seen.push(`add ${o.metadata.name}`),
      update: (_o, n) => seen.push(`update ${n.metadata.name} ${n.data?.v ?? ''}`),
      delete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    try {
      assert.ok(await inf.waitForSync());
      await createCM('a', { v: '1' });
      await until('add a', () => seen.includes('add a'));
      await admin.request('PATCH', cmPath('a'), { body: { data: { v: '2' } }, contentType: 'application/merge-patch+json' });
      await until('update a', () => seen.includes('update a 2'));
      await deleteCM('a');
      await until('delete a', () => seen.includes('delete a'));

      // 1. apiserver restart: the watch breaks, the informer backs off, reconnects and keeps delivering.
      await restartApiserver();
      await createCM('b');
      await until('add b after apiserver restart', () => seen.includes('add b'), 30_000);

      // 2. A delete made while the watch is down, with the watch history gone (apiserver restarted → its watch
      //    cache starts at the current revision; etcd compacted), must still reach the delete handler.
      await createCM('c');
      await until('add c', () => seen.includes('add c'));
      const relistsBefore = await metricValue(metrics, 'portico_informer_relists_total');
      proxy.cutAll();
      await deleteCM('c');
      await createCM('d');
      await restartApiserver();
      await compactEtcd();
      proxy.restore();
      await until('delete c replayed after 410', () => seen.includes('delete c'), 30_000);
      await until('add d after relist', () => seen.includes('add d'));
      assert.ok((await metricValue(metrics, 'portico_informer_relists_total')) > relistsBefore, 'a relist happened');
      assert.equal(inf.store.has(`${ns}/c`), false);
      assert.equal(inf.store.has(`${ns}/d`), true);
    } finally {
      ac.abort();
      await running;
      await proxy.stop();
    }
  });
});

describe('controller', () => {
  test('a failing reconcile is retried with backoff and succeeds once its cause is fixed; a key never runs twice at once, distinct keys run on every worker', async () => {
    const WORKERS = 3;
    const inf = new Informer<CM>(portico, Resources.ConfigMap, log, undefined, { namespace: ns });
    const attempts: { key: string; at: number; ok: boolean }[] = [];
    const activeByKey = new Map<string, number>();
    let active = 0;
    let maxActive = 0;
    let maxSameKey = 0;
    // "par-*" reconciles hold until WORKERS of them run at once: only a controller that really runs distinct keys
    // in parallel gets past this (with one worker the test times out).
    let parActive = 0;
    let releasePar: () => void = () => undefined;
    const parBarrier = new Promise<void>((r) => (releasePar = r));
    const ctrl = new Controller(
      {
        name: 'e2e',
        workers: WORKERS,
        rateLimit: { baseDelayMs: 50, maxDelayMs: 2000, qps: 100, burst: 100 },
        reconciler: {
          async reconcile(_ctx, key) {
            active++;
            activeByKey.set(key, (activeByKey.get(key) ?? 0) + 1);
            maxActive = Math.max(maxActive, active);
            maxSameKey = Math.max(maxSameKey, activeByKey.get(key) as number);
            try {
              if (key.startsWith(`${ns}/par-`)) {
                if (++parActive >= WORKERS) releasePar();
                await parBarrier;
                return;
              }
              // Simulated work, so that the 20 updates below arrive while this key is being reconciled.
              await new Promise((r) => setTimeout(r, 20));
              const obj = inf.store.get(key);
              if (!obj || !obj.metadata.name.startsWith('needs-')) return;
              const dep = obj.data?.dependsOn;
              const ok = dep !== undefined && inf.store.has(`${ns}/${dep}`);
              attempts.push({ key, at: performance.now(), ok });
              if (!ok) throw new Error(`dependency ${dep} missing`);
            } finally {
              active--;
              activeByKey.set(key, (activeByKey.get(key) as number) - 1);
            }
          },
        },
      },
      log,
    );
    ctrl.watch(inf);
    // The dependency's arrival re-triggers its dependents (a cross-object mapping, like Service → Ingress).
    ctrl.watch(inf, (o) => (o.metadata.name.startsWith('dep-') ? [`${ns}/needs-x`] : []));
    const ac = new AbortController();
    const runInf = inf.run(ac.signal);
    await inf.waitForSync();
    const runCtrl = ctrl.run(ac.signal);
    try {
      await createCM('needs-x', { dependsOn: 'dep-x' });
      await until('three failed attempts', () => attempts.filter((a) => !a.ok).length >= 3);
      for (let i = 0; i < 20; i++) {
        await admin.request('PATCH', cmPath('needs-x'), { body: { data: { dependsOn: 'dep-x', n: String(i) } }, contentType: 'application/merge-patch+json' });
      }
      await createCM('dep-x');
      await until('success after the dependency appeared', () => attempts.some((a) => a.ok));
      const failures = attempts.filter((a) => !a.ok);
      assert.ok(failures.length >= 3);
      const firstGap = (failures[1] as { at: number }).at - (failures[0] as { at: number }).at;
      assert.ok(firstGap >= 45, `retry came after backoff (${firstGap.toFixed(0)}ms)`);
      assert.equal(ctrl.queue.numRequeues(`${ns}/needs-x`), 0, 'forgotten after success');

      for (let i = 0; i < WORKERS + 2; i++) await createCM(`par-${i}`);
      await until(`${WORKERS} distinct keys reconciled at once`, () => parActive >= WORKERS);
      await until('every par-* key reconciled', () => parActive === WORKERS + 2 && active === 0);
      assert.equal(maxSameKey, 1, 'a key was reconciled by two workers at once');
      assert.equal(maxActive, WORKERS, `distinct keys run in parallel, never on more than ${WORKERS} workers`);
    } finally {
      ac.abort();
      releasePar();
      await Promise.all([runInf, runCtrl]);
    }
  });
});

describe('events', () => {
  test('appear in kubectl get events with reason and object; a repeated event is counted, not duplicated', async () => {
    await createCM('evt');
    const obj = await admin.request<CM>('GET', cmPath('evt'));
    const rec = new EventRecorder(
      portico,
      { reportingController: 'portico.dev/ingress-controller', reportingInstance: 'e2e', seriesFlushMs: 100 },
      log,
    );
    const withKind = { ...obj, apiVersion: 'v1', kind: 'ConfigMap' };
    for (let i = 0; i < 10; i++) rec.event(withKind, 'Warning', 'BadThing', 'Testing', 'something is wrong with evt');
    rec.event(withKind, 'Normal', 'Fine', 'Testing', 'evt is fine');
    await rec.flushAll();
    const out = kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=evt']);
    assert.match(out, /Warning\s+BadThing\s+configmap\/evt\s+something is wrong with evt/);
    assert.match(out, /Normal\s+Fine\s+configmap\/evt\s+evt is fine/);
    const list = JSON.parse(kubectl(['get', 'events.events.k8s.io', '-n', ns, '-o', 'json'])) as {
      items: { reason: string; series?: { count: number }; reportingController: string; eventTime: string; regarding: { name: string } }[];
    };
    const bad = list.items.filter((e) => e.reason === 'BadThing' && e.regarding.name === 'evt');
    assert.equal(bad.length, 1, 'repeats folded into one Event');
    assert.equal(bad[0]?.series?.count, 10);
    assert.equal(bad[0]?.reportingController, 'portico.dev/ingress-controller');
    assert.match(bad[0]?.eventTime ?? '', /\.\d{6}Z$/);
  });
});

describe('events at scale', () => {
  test('one event on each of 500 objects: all of them reach the API server, none dropped or failed', async () => {
    const metrics = new Metrics({ prefix: 'portico' });
    const rec = new EventRecorder(
      portico,
      { reportingController: 'portico.dev/ingress-controller', reportingInstance: 'e2e-scale', qps: 100, writeBurst: 100 },
      log,
      metrics,
    );
    // Events may name objects that do not exist; the API server does not check `regarding`.
    for (let i = 0; i < 500; i++) {
      rec.event({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name: `many-${i}`, uid: `uid-${i}` } }, 'Normal', 'Programmed', 'Programming', `object ${i} is served`);
    }
    await until('the queue drained', () => rec.queued() === 0, 60_000);
    await rec.flushAll(30_000);
    const list = await admin.request<{ items: { reportingInstance?: string }[] }>('GET', resourcePath(Resources.Event, ns), { query: { limit: 5000 } });
    assert.equal(list.items.filter((e) => e.reportingInstance === 'e2e-scale').length, 500);
    const outcomes = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'portico_events_total')?.values ?? [];
    assert.deepEqual(Object.fromEntries(outcomes.map((v) => [v.labels.outcome, v.value])), { created: 500 });
  });
});

describe('RBAC', () => {
  test('a verb the ClusterRole lacks fails with a clear 403', async () => {
    await createCM('rbac');
    await assert.rejects(portico.request('DELETE', cmPath('rbac')), (e: unknown) => {
      assert.ok(isForbidden(e), String(e));
      assert.match(String(e), /system:serviceaccount:portico-system:portico.*cannot delete resource "configmaps"/);
      return true;
    });
    await assert.rejects(portico.request('GET', resourcePath(Resources.Pod, ns)), (e: unknown) => isForbidden(e));
  });
});

async function metricValue(m: Metrics, name: string): Promise<number> {
  const metric = (await m.registry.getMetricsAsJSON()).find((x) => x.name === name);
  return (metric?.values ?? []).reduce((s, v) => s + Number(v.value), 0);
}

after(async () => {
  if (ns) await deleteNamespace(ns);
  // This suite restarts the apiserver: leave only once the controllers behind it publish EndpointSlices again.
  await waitForEndpointSliceController();
});
