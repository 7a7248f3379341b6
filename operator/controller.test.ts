import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, type Reconciler } from './controller.ts';
import { nullLogger } from './log.ts';
import { Metrics } from './metrics.ts';

/** Lets promise chains run to completion (mock timers only move when ticked). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

test('a failing reconcile is retried with doubling delays and forgotten on success', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  const calls: number[] = [];
  const r: Reconciler = {
    async reconcile(_ctx, key) {
      assert.equal(key, 'ns/a');
      calls.push(Date.now());
      if (calls.length < 4) throw new Error('dependency missing');
    },
  };
  const metrics = new Metrics({ prefix: 'portico' });
  const c = new Controller(
    { name: 't', reconciler: r, rateLimit: { baseDelayMs: 20, maxDelayMs: 10_000, qps: 1000, burst: 1000 } },
    nullLogger(),
    metrics,
  );
  const ac = new AbortController();
  const run = c.run(ac.signal);
  c.enqueue('ns/a');
  await settle();
  // Retries after 20, 40 and 80 ms: never earlier, and exactly then.
  for (const delay of [20, 40, 80]) {
    const n = calls.length;
    t.mock.timers.tick(delay - 1);
    await settle();
    assert.equal(calls.length, n, `no retry before ${delay} ms`);
    t.mock.timers.tick(1);
    await settle();
    assert.equal(calls.length, n + 1, `retried after ${delay} ms`);
  }
  assert.deepEqual(calls, [0, 20, 60, 140]);
  t.mock.timers.tick(10_000);
  await settle();
  assert.equal(calls.length, 4, 'no more calls after success');
  assert.equal(c.queue.numRequeues('ns/a'), 0, 'forgotten after success');
  ac.abort();
  await run;
  const m = await metrics.registry.getSingleMetricAsString('portico_reconcile_total');
  assert.match(m, /result="error"} 3/);
  assert.match(m, /result="success"} 1/);
});

test('the same key never runs on two workers at once, distinct keys run in parallel up to the worker count', async () => {
  const gates = new Map<string, () => void>();
  const running = new Map<string, number>();
  const order: string[] = [];
  let maxSame = 0;
  let maxTotal = 0;
  const r: Reconciler = {
    async reconcile(_ctx, key) {
      running.set(key, (running.get(key) ?? 0) + 1);
      order.push(key);
      maxSame = Math.max(maxSame, ...running.values());
      maxTotal = Math.max(maxTotal, [...running.values()].reduce((a, b) => a + b, 0));
      await new Promise<void>((res) => gates.set(key, res));
      running.set(key, (running.get(key) as number) - 1);
    },
  };
  const release = async (key: string) => {
    const g = gates.get(key);
    assert.ok(g, `${key} is running`);
    gates.delete(key);
    g();
    await settle();
  };
  const c = new Controller({ name: 't', reconciler: r, workers: 3 }, nullLogger());
  const ac = new AbortController();
  const run = c.run(ac.signal);
  for (const k of ['hot', 'a', 'b', 'c']) c.enqueue(k);
  await settle();
  assert.deepEqual([...gates.keys()].sort(), ['a', 'b', 'hot'], 'three workers, three keys at once');
  assert.equal(c.queue.length(), 1, 'the fourth key waits for a free worker');

  for (let i = 0; i < 5; i++) c.enqueue('hot'); // added while running: queued once, for later
  await settle();
  assert.equal(order.filter((k) => k === 'hot').length, 1, 'not started a second time while it runs');
  await release('a');
  assert.ok(gates.has('c'), 'the freed worker took the next key');
  assert.ok(!gates.has('a'));
  await release('hot');
  assert.ok(gates.has('hot'), 'hot runs again after it finished: the 5 adds collapsed into one reconcile');
  for (const k of ['b', 'c', 'hot']) await release(k);
  assert.equal(c.queue.length(), 0);
  ac.abort();
  await run;
  assert.equal(maxSame, 1, 'a key ran concurrently with itself');
  assert.equal(maxTotal, 3, 'distinct keys ran in parallel on every worker');
  assert.deepEqual(order, ['hot', 'a', 'b', 'c', 'hot']);
});

test('requeueAfter schedules another reconcile without counting as a failure', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let n = 0;
  const c = new Controller(
    {
      name: 't',
      reconciler: {
        async reconcile() {
          n++;
          return n === 1 ? { requeueAfterMs: 20 } : undefined;
        },
      },
    },
    nullLogger(),
  );
  const ac = new AbortController();
  const run = c.run(ac.signal);
  c.enqueue('a');
  await settle();
  assert.equal(n, 1);
  t.mock.timers.tick(19);
  await settle();
  assert.equal(n, 1, 'not before requeueAfter');
  t.mock.timers.tick(1);
  await settle();
  assert.equal(n, 2);
  t.mock.timers.tick(10_000);
  await settle();
  assert.equal(n, 2, 'a successful reconcile without requeueAfter is not repeated');
  ac.abort();
  await run;
  assert.equal(c.queue.numRequeues('a'), 0);
});
