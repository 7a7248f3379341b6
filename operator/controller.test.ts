import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller, type Reconciler } from './controller.ts';
import { nullLogger } from './log.ts';
import { Metrics } from './metrics.ts';

test('a failing reconcile is retried with growing delays and forgotten on success', async () => {
  const calls: number[] = [];
  let fixed = false;
  const r: Reconciler = {
    async reconcile(_ctx, key) {
      assert.equal(key, 'ns/a');
      calls.push(performance.now());
      if (calls.length === 4) fixed = true;
      if (!fixed) throw new Error('dependency missing');
    },
  };
  const metrics = new Metrics();
  const c = new Controller(
    { name: 't', reconciler: r, rateLimit: { baseDelayMs: 20, maxDelayMs: 10_000, qps: 1000, burst: 1000 } },
    nullLogger(),
    metrics,
  );
  const ac = new AbortController();
  const run = c.run(ac.signal);
  c.enqueue('ns/a');
  while (calls.length < 4) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  ac.abort();
  await run;
  assert.equal(calls.length, 4, 'no more calls after success');
  const gaps = calls.slice(1).map((t, i) => t - (calls[i] as number));
  // 20, 40, 80 ms nominal backoff: timers never fire early, so these are lower bounds (load only adds delay).
  [20, 40, 80].forEach((nominal, i) => {
    assert.ok((gaps[i] as number) >= nominal - 2, `retry ${i + 1} waited ${gaps[i]}ms, expected >= ${nominal}ms`);
  });
  assert.equal(c.queue.numRequeues('ns/a'), 0, 'forgotten after success');
  const m = await metrics.registry.getSingleMetricAsString('portico_reconcile_total');
  assert.match(m, /result="error"} 3/);
  assert.match(m, /result="success"} 1/);
});

test('the same key never runs on two workers at once, distinct keys run in parallel', async () => {
  const active = new Map<string, number>();
  let maxSame = 0;
  let maxTotal = 0;
  let total = 0;
  let done = 0;
  const r: Reconciler = {
    async reconcile(_ctx, key) {
      active.set(key, (active.get(key) ?? 0) + 1);
      total++;
      maxSame = Math.max(maxSame, active.get(key) as number);
      maxTotal = Math.max(maxTotal, total);
      await new Promise((res) => setTimeout(res, 5));
      active.set(key, (active.get(key) as number) - 1);
      total--;
      done++;
    },
  };
  const c = new Controller({ name: 't', reconciler: r, workers: 4 }, nullLogger());
  const ac = new AbortController();
  const run = c.run(ac.signal);
  for (let i = 0; i < 50; i++) {
    c.enqueue('hot');
    c.enqueue(`k${i % 5}`);
    await new Promise((res) => setTimeout(res, 1));
  }
  while (c.queue.length() > 0 || total > 0) await new Promise((res) => setTimeout(res, 10));
  ac.abort();
  await run;
  assert.equal(maxSame, 1, 'a key ran concurrently with itself');
  assert.ok(maxTotal > 1, 'workers should run distinct keys in parallel');
  assert.ok(done < 100, `adds were de-duplicated (${done} reconciles for 100 adds)`);
});

test('requeueAfter schedules another reconcile without counting as a failure', async () => {
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
  await new Promise((r) => setTimeout(r, 100));
  ac.abort();
  await run;
  assert.equal(n, 2);
  assert.equal(c.queue.numRequeues('a'), 0);
});
