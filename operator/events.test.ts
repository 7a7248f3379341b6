import { afterEach, beforeEach, test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import winston from 'winston';
import { EventRecorder, type EventRecorderOptions, type EventSink } from './events.ts';
import type { KubeObject } from './kube/object.ts';
import { Metrics } from './metrics.ts';

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 0 }));
afterEach(() => mock.timers.reset());

/** Lets promise chains run to completion (mock timers only move when ticked). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

interface Call {
  method: string;
  path: string;
  body: Record<string, unknown>;
  at: number;
}

/** An API server stand-in: records calls; `hold` keeps answers back until release(). */
function fakeApi() {
  const calls: Call[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let held: (() => void)[] | undefined;
  let failNext = 0;
  const sink: EventSink = {
    async request<T>(method: string, path: string, opts: { body?: unknown } = {}): Promise<T> {
      calls.push({ method, path, body: opts.body as Record<string, unknown>, at: Date.now() });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (held) await new Promise<void>((r) => held?.push(r));
        if (failNext > 0) {
          failNext--;
          throw new Error('500 InternalError');
        }
        return undefined as T;
      } finally {
        inFlight--;
      }
    },
  };
  return {
    sink,
    calls,
    posts: () => calls.filter((c) => c.method === 'POST'),
    patches: () => calls.filter((c) => c.method === 'PATCH'),
    maxInFlight: () => maxInFlight,
    hold: () => (held = []),
    release: () => {
      const h = held ?? [];
      held = undefined;
      for (const r of h) r();
    },
    failNext: (n: number) => (failNext = n),
  };
}

function capturingLogger() {
  const lines: { level: string; message: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as { level: string; message: string });
      cb();
    },
  });
  return { log: winston.createLogger({ level: 'debug', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] }), lines };
}

const ingress = (name: string, generation = 1): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { namespace: 'ns', name, uid: `uid-${name}`, generation },
});

function recorder(api: ReturnType<typeof fakeApi>, o: Partial<EventRecorderOptions> = {}) {
  const metrics = new Metrics({ prefix: 'portico' });
  const { log, lines } = capturingLogger();
  const rec = new EventRecorder(api.sink, { reportingController: 'portico.dev/ingress-controller', reportingInstance: 't', now: Date.now, ...o }, log, metrics);
  const outcome = async (o: string) => {
    const m = (await metrics.registry.getMetricsAsJSON()).find((x) => x.name === 'portico_events_total');
    return (m?.values ?? []).filter((v) => v.labels.outcome === o).reduce((s, v) => s + Number(v.value), 0);
  };
  return { rec, lines, outcome, metrics };
}

test('a 2,000-object start-up: every event reaches the API, spread at the write rate, a few at a time', async () => {
  const api = fakeApi();
  const { rec, outcome } = recorder(api); // defaults: 10 writes/s, burst 100, 4 concurrent
  for (let i = 0; i < 2000; i++) rec.event(ingress(`i${i}`), 'Normal', 'Programmed', 'Programming', `Ingress generation 1 is served`);
  await settle();
  assert.equal(api.posts().length, 100, 'the burst goes out at once');
  for (let t = 0; t < 200_000 && api.posts().length < 2000; t += 100) {
    mock.timers.tick(100);
    await settle();
  }
  assert.equal(api.posts().length, 2000, 'nothing dropped');
  assert.equal(await outcome('created'), 2000);
  assert.equal(await outcome('queue_full'), 0);
  const last = api.posts().at(-1)?.at ?? 0;
  assert.ok(last >= 189_000 && last <= 191_000, `1,900 writes after the burst at 10/s take 190 s (took ${last} ms)`);
  assert.ok(api.maxInFlight() <= 4, `at most 4 writes in flight (saw ${api.maxInFlight()})`);
  assert.equal(rec.queued(), 0);
});

test('the queue is bounded: the oldest Normal writes are dropped first, counted, logged once; Warnings go first', async () => {
  const api = fakeApi();
  const { rec, lines, outcome } = recorder(api, { maxQueued: 10, concurrency: 1 });
  api.hold();
  rec.event(ingress('first'), 'Normal', 'Programmed', 'Programming', 'served');
  await settle();
  assert.equal(api.calls.length, 1, 'one write in flight, held by the API');
  for (let i = 0; i < 30; i++) rec.event(ingress(`n${i}`), 'Normal', 'Programmed', 'Programming', 'served');
  assert.equal(rec.queued(), 10, 'never more than maxQueued');
  assert.equal(await outcome('queue_full'), 20);
  for (let i = 0; i < 3; i++) rec.event(ingress(`w${i}`), 'Warning', 'Rejected', 'Validating', 'bad path');
  assert.equal(rec.queued(), 10);
  assert.equal(await outcome('queue_full'), 23, 'each Warning pushed out one Normal');
  assert.equal(lines.filter((l) => /event queue full/.test(l.message)).length, 1, 'one log line for the episode, not one per drop');

  api.release();
  for (let i = 0; i < 20 && rec.queued() > 0; i++) {
    mock.timers.tick(1000);
    await settle();
    api.release();
  }
  await settle();
  const names = api.posts().map((c) => (c.body.regarding as { name: string }).name);
  assert.deepEqual(names.slice(0, 4), ['first', 'w0', 'w1', 'w2'], 'Warnings jump the queue');
  assert.deepEqual(names.slice(4), ['n23', 'n24', 'n25', 'n26', 'n27', 'n28', 'n29'], 'the newest Normals survived');
  assert.equal(lines.filter((l) => /event queue drained/.test(l.message)).length, 1);
});

test('once per generation: a repeated Warning is folded into one Event whose series counts it; a new generation is a new Event', async () => {
  const api = fakeApi();
  const { rec } = recorder(api, { seriesFlushMs: 1000 });
  const warn = (gen: number) =>
    rec.event(ingress('a', gen), 'Warning', 'UnsupportedAnnotation', 'Validating', `generation ${gen}: nginx.ingress.kubernetes.io/auth-url is not supported`);
  warn(1);
  warn(1); // while the create still waits in the queue: carried by the create itself
  await settle();
  assert.equal(api.posts().length, 1);
  assert.deepEqual((api.posts()[0]?.body.series as { count: number }).count, 2);
  for (let i = 0; i < 5; i++) warn(1);
  await settle();
  assert.equal(api.posts().length, 1, 'no new Event object within the series window');
  assert.equal(api.patches().length, 0, 'series updates are batched');
  mock.timers.tick(1000);
  await settle();
  assert.equal(api.patches().length, 1);
  assert.deepEqual(api.patches()[0]?.body, { series: { count: 7, lastObservedTime: (api.patches()[0]?.body.series as { lastObservedTime: string }).lastObservedTime } });
  assert.match(api.patches()[0]?.path ?? '', /^\/apis\/events\.k8s\.io\/v1\/namespaces\/ns\/events\/a\.[0-9a-f]{16}$/);

  warn(2);
  await settle();
  assert.equal(api.posts().length, 2, 'the new generation gets its own Event');
  assert.equal(api.posts()[1]?.body.series, undefined);
  assert.match(String(api.posts()[1]?.body.note), /^generation 2:/);
});

test('the same event after the series window is a new Event; a failed create is retried by the next occurrence', async () => {
  const api = fakeApi();
  const { rec, outcome } = recorder(api, { seriesWindowMs: 60_000 });
  const fire = () => rec.event(ingress('b'), 'Warning', 'ServiceNotFound', 'Programming', 'service ns/x not found');
  fire();
  await settle();
  mock.timers.tick(61_000);
  fire();
  await settle();
  assert.equal(api.posts().length, 2);

  api.failNext(1);
  rec.event(ingress('c'), 'Warning', 'ServiceNotFound', 'Programming', 'service ns/y not found');
  await settle();
  assert.equal(await outcome('failed'), 1);
  rec.event(ingress('c'), 'Warning', 'ServiceNotFound', 'Programming', 'service ns/y not found');
  await settle();
  assert.equal(api.posts().length, 4, 'not folded into a series whose Event was never created');
});

test('the per-object spam filter caps distinct events on one object', async () => {
  const api = fakeApi();
  const { rec, outcome } = recorder(api, { burst: 5, refillPerSecond: 0.1 });
  for (let i = 0; i < 8; i++) rec.event(ingress('noisy'), 'Warning', 'Bad', 'Validating', `problem ${i}`);
  rec.event(ingress('quiet'), 'Warning', 'Bad', 'Validating', 'problem');
  await settle();
  assert.equal(api.posts().length, 6);
  assert.equal(await outcome('spam_filtered'), 3);
  mock.timers.tick(10_000);
  rec.event(ingress('noisy'), 'Warning', 'Bad', 'Validating', 'problem 9');
  await settle();
  assert.equal(api.posts().length, 7, 'one token back after 10 s at 0.1/s');
});

test('flushAll sends pending series updates, waits for the queue up to a deadline, then drops and counts the rest', async () => {
  const api = fakeApi();
  const { rec, outcome } = recorder(api, { qps: 1, writeBurst: 1, concurrency: 1 });
  rec.event(ingress('a'), 'Warning', 'Bad', 'Validating', 'x');
  await settle();
  rec.event(ingress('a'), 'Warning', 'Bad', 'Validating', 'x'); // series count 2, flush timer armed
  for (let i = 0; i < 20; i++) rec.event(ingress(`n${i}`), 'Normal', 'Programmed', 'Programming', 'served');
  const flushing = rec.flushAll(3_000);
  for (let i = 0; i < 40; i++) {
    mock.timers.tick(100);
    await settle();
  }
  await flushing;
  assert.equal(api.patches().length, 1, 'the pending series update went out first (a Warning)');
  assert.equal(api.posts().length, 1 + 2, 'one create before, two more in 3 s at 1/s');
  assert.equal(await outcome('shutdown'), 18);
  rec.event(ingress('late'), 'Warning', 'Bad', 'Validating', 'after stop');
  await settle();
  assert.equal(api.posts().length, 3, 'nothing is recorded after shutdown');
});
