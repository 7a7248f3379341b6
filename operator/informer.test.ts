import { afterEach, beforeEach, test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import winston from 'winston';
import { Informer, type WatchClient } from './informer.ts';
import type { WatchEvent } from './kube/client.ts';
import type { KubeObject } from './kube/object.ts';
import type { ResourceType } from './kube/resources.ts';
import { Metrics } from './metrics.ts';
import { nullLogger } from './log.ts';

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 0 }));
afterEach(() => mock.timers.reset());

const ConfigMaps: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

type CM = KubeObject & { data?: Record<string, string> };

const cm = (name: string, rv: string, data: Record<string, string> = {}): CM => ({
  metadata: {
    namespace: 'ns',
    name,
    resourceVersion: rv,
    managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:data': { 'f:big': {} } } }],
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data }), team: 'shop' },
  },
  data,
});

/** A client whose list answers at once and whose watches deliver what the test pushes (or nothing at all). */
function fakeClient(items: CM[]) {
  const lists: string[] = [];
  const watches: { query: Record<string, unknown>; push: (ev: WatchEvent) => void; signal: AbortSignal }[] = [];
  const client: WatchClient = {
    async request<T>(_method: string, path: string): Promise<T> {
      lists.push(path);
      return { metadata: { resourceVersion: '10' }, items } as T;
    },
    async *watch(_path, query, signal, onActivity) {
      const queue: WatchEvent[] = [];
      let wake: (() => void) | undefined;
      watches.push({ query, signal, push: (ev) => (queue.push(ev), wake?.()) });
      for (;;) {
        if (signal.aborted) throw signal.reason;
        const ev = queue.shift();
        if (ev) {
          onActivity?.();
          yield ev;
          continue;
        }
        // Like the real client: an abort surfaces as the stream's error.
        await new Promise<void>((r) => {
          wake = r;
          signal.addEventListener('abort', () => r(), { once: true });
        });
      }
    },
  };
  return { client, lists, watches };
}

function capturingLogger() {
  const lines: { level: string; message: string; cause?: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as { level: string; message: string });
      cb();
    },
  });
  return { log: winston.createLogger({ level: 'debug', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] }), lines };
}

test('a stalled watch is aborted, logged, counted, and re-opened after a backoff from the same resourceVersion', async () => {
  const { client, lists, watches } = fakeClient([cm('a', '5')]);
  const metrics = new Metrics({ prefix: 'portico' });
  const { log, lines } = capturingLogger();
  const inf = new Informer<CM>(client, ConfigMaps, log, metrics, {
    namespace: 'ns',
    stallTimeoutMs: 1_000,
    backoff: { initialMs: 200, maxMs: 200 },
  });
  const ac = new AbortController();
  const running = inf.run(ac.signal);
  await settle();
  assert.equal(watches.length, 1);
  assert.equal(watches[0]?.query.resourceVersion, '10');

  // Activity (a bookmark) re-arms the watchdog.
  mock.timers.tick(900);
  watches[0]?.push({ type: 'BOOKMARK', object: { metadata: { name: '', resourceVersion: '11' } } });
  await settle();
  mock.timers.tick(900);
  await settle();
  assert.equal(watches[0]?.signal.aborted, false, 'not stalled: a bookmark arrived 900 ms ago');

  mock.timers.tick(100);
  await settle();
  assert.equal(watches[0]?.signal.aborted, true, 'aborted 1,000 ms after the last activity');
  const restarts = await metrics.registry.getSingleMetricAsString('portico_informer_watch_restarts_total');
  assert.match(restarts, /kind="ConfigMap",cause="stalled"} 1/);
  assert.doesNotMatch(restarts, /cause="closed"/, 'a stall is not a clean close');
  const warn = lines.find((l) => l.message === 'watch stalled, reconnecting');
  assert.ok(warn, `logged: ${JSON.stringify(lines)}`);
  assert.equal(warn.level, 'warn');
  assert.equal(watches.length, 1, 'waits for the backoff before reconnecting');

  mock.timers.tick(300); // 200 ms ± 50 % jitter
  await settle();
  assert.equal(watches.length, 2, 'reconnected');
  assert.equal(watches[1]?.query.resourceVersion, '11', 'resumed from the last bookmark');
  assert.equal(lists.length, 1, 'no relist after a stall');
  ac.abort();
  await running;
});

test('cached objects lose managedFields and kubectl\'s last-applied annotation before the caller transform runs; keepManagedFields opts out', async () => {
  const { client, watches } = fakeClient([cm('a', '5', { big: 'x', keep: 'y' })]);
  const seenByTransform: unknown[] = [];
  const inf = new Informer<CM>(client, ConfigMaps, nullLogger(), undefined, {
    namespace: 'ns',
    transform: (o) => {
      seenByTransform.push(o.metadata.managedFields);
      return { ...o, data: { keep: o.data?.keep ?? '' } };
    },
  });
  const ac = new AbortController();
  const running = inf.run(ac.signal);
  await settle();
  const a = inf.store.get('ns/a');
  assert.ok(a);
  assert.equal(a.metadata.managedFields, undefined);
  assert.deepEqual(a.metadata.annotations, { team: 'shop' }, 'kubectl\'s last-applied copy dropped, other annotations kept');
  assert.deepEqual(a.data, { keep: 'y' }, 'the caller transform still applies');
  assert.equal(a.kind, 'ConfigMap');
  watches[0]?.push({ type: 'MODIFIED', object: cm('a', '12', { big: 'z', keep: 'w' }) });
  await settle();
  assert.equal(inf.store.get('ns/a')?.metadata.managedFields, undefined, 'watch events too');
  assert.deepEqual(inf.store.get('ns/a')?.data, { keep: 'w' });
  assert.deepEqual(seenByTransform, [undefined, undefined]);
  ac.abort();
  await running;

  const kept = fakeClient([cm('b', '5')]);
  const inf2 = new Informer<CM>(kept.client, ConfigMaps, nullLogger(), undefined, { keepManagedFields: true });
  const ac2 = new AbortController();
  const running2 = inf2.run(ac2.signal);
  await settle();
  assert.equal(inf2.store.get('ns/b')?.metadata.managedFields?.length, 1);
  ac2.abort();
  await running2;
});
