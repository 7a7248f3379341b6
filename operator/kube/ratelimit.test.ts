import { afterEach, beforeEach, test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from './ratelimit.ts';

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
afterEach(() => mock.timers.reset());

/** Lets promise callbacks run (mock timers only move when ticked). */
const settle = () => new Promise<void>((r) => setImmediate(r));

test('a burst is served at once, then requests are spaced 1/qps apart in arrival order', async () => {
  const b = new TokenBucket({ qps: 10, burst: 3 }, Date.now);
  const done: number[] = [];
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    void b.wait().then((ms) => {
      done.push(i);
      waits.push(ms);
    });
  }
  await settle();
  assert.deepEqual(done, [0, 1, 2], 'the burst goes through without waiting');
  mock.timers.tick(99);
  await settle();
  assert.deepEqual(done, [0, 1, 2], 'no token before 100 ms');
  mock.timers.tick(1);
  await settle();
  assert.deepEqual(done, [0, 1, 2, 3]);
  mock.timers.tick(200);
  await settle();
  assert.deepEqual(done, [0, 1, 2, 3, 4, 5], 'in arrival order');
  assert.deepEqual(waits, [0, 0, 0, 100, 200, 300]);
});

test('tokens refill at qps up to burst, never beyond', async () => {
  const b = new TokenBucket({ qps: 2, burst: 2 }, Date.now);
  assert.ok(b.tryTake());
  assert.ok(b.tryTake());
  assert.equal(b.tryTake(), false);
  mock.timers.tick(10_000);
  assert.ok(b.full());
  assert.ok(b.tryTake());
  assert.ok(b.tryTake());
  assert.equal(b.tryTake(), false, 'a long idle period does not bank more than burst');
});

test('an aborted wait gives its reservation back and rejects with the reason', async () => {
  const b = new TokenBucket({ qps: 1, burst: 1 }, Date.now);
  assert.equal(await b.wait(), 0);
  const ac = new AbortController();
  const waiting = b.wait(ac.signal);
  ac.abort(new Error('caller gave up'));
  await assert.rejects(waiting, /caller gave up/);
  // The abandoned reservation is returned: the next caller waits one interval, not two.
  let waited = -1;
  void b.wait().then((ms) => (waited = ms));
  mock.timers.tick(1000);
  await settle();
  assert.equal(waited, 1000);
});

test('invalid settings are refused', () => {
  assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }), /qps/);
  assert.throws(() => new TokenBucket({ qps: 1, burst: 0 }), /burst/);
  assert.throws(() => new TokenBucket({ qps: 1, burst: 1.5 }), /burst/);
});
