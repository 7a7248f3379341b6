import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter, WorkQueue } from './workqueue.ts';

test('a key added many times while waiting is handed out once', async () => {
  const q = new WorkQueue('t');
  q.add('a');
  q.add('b');
  q.add('a');
  q.add('a');
  assert.equal(q.length(), 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.length(), 0);
});

test('a key added while it is processed is re-queued only after done()', async () => {
  const q = new WorkQueue('t');
  q.add('a');
  const k = await q.get();
  assert.equal(k, 'a');
  q.add('a');
  assert.equal(q.length(), 0, 'must not be handed to a second worker while processing');
  assert.ok(q.isProcessing('a'));
  q.done('a');
  assert.equal(q.length(), 1);
  assert.equal(await q.get(), 'a');
});

test('get() waits for an add and shutDown() releases waiters', async () => {
  const q = new WorkQueue('t');
  let got: string | undefined = 'nothing yet';
  const p = q.get().then((k) => (got = k));
  await new Promise((r) => setImmediate(r));
  assert.equal(got, 'nothing yet', 'get() on an empty queue waits');
  q.add('x');
  await p;
  assert.equal(got, 'x');
  const p2 = q.get();
  q.shutDown();
  assert.equal(await p2, undefined);
});

test('addAfter keeps the earliest pending delay', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const q = new WorkQueue('t');
  q.addAfter('a', 1000);
  q.addAfter('a', 10);
  q.addAfter('a', 500);
  t.mock.timers.tick(9);
  assert.equal(q.length(), 0, 'not before the earliest delay');
  t.mock.timers.tick(1);
  assert.equal(q.length(), 1);
  assert.equal(await q.get(), 'a');
  q.done('a');
  t.mock.timers.tick(1000);
  assert.equal(q.length(), 0, 'the later delays were replaced, not added on top');
  q.shutDown();
});

test('rate limiter: per-key exponential backoff, reset by forget', () => {
  let now = 0;
  const rl = new RateLimiter({ baseDelayMs: 5, maxDelayMs: 1000, qps: 1e9, burst: 1e9 }, () => now);
  assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a'), rl.when('a')], [5, 10, 20, 40]);
  assert.equal(rl.when('b'), 5, 'keys back off independently');
  for (let i = 0; i < 20; i++) rl.when('a');
  assert.equal(rl.when('a'), 1000, 'capped at max');
  rl.forget('a');
  assert.equal(rl.when('a'), 5);
  assert.equal(rl.numRequeues('a'), 1);
});

test('rate limiter: overall token bucket delays a burst of distinct keys', () => {
  let now = 0;
  const rl = new RateLimiter({ baseDelayMs: 1, maxDelayMs: 1000, qps: 10, burst: 2 }, () => now);
  assert.equal(rl.when('a'), 1);
  assert.equal(rl.when('b'), 1);
  assert.equal(rl.when('c'), 100, 'third key in the same instant waits for a token');
  now = 1000;
  assert.equal(rl.when('d'), 1, 'tokens refill over time');
});
