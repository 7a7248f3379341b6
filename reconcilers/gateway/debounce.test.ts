import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Debouncer } from './debounce.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a burst of triggers gives one sync after the quiet window', async () => {
  let n = 0;
  const d = new Debouncer({ quietMs: 30, maxWaitMs: 1000 }, async () => {
    n++;
  });
  for (let i = 0; i < 20; i++) d.trigger();
  await tick(80);
  assert.equal(n, 1);
  d.stop();
});

test('continuous triggers still sync by the max wait', async () => {
  const at: number[] = [];
  const t0 = performance.now();
  const d = new Debouncer({ quietMs: 40, maxWaitMs: 100 }, async () => {
    at.push(performance.now() - t0);
  });
  const end = performance.now() + 260;
  while (performance.now() < end) {
    d.trigger();
    await tick(10);
  }
  d.stop();
  assert.ok(at.length >= 2, `max wait forces syncs during a continuous stream (got ${at.length})`);
  assert.ok((at[0] as number) >= 95, 'first sync not before the max wait');
});

test('a trigger during a running sync causes exactly one more sync, never overlapping', async () => {
  let running = 0;
  let overlap = false;
  let n = 0;
  const d = new Debouncer({ quietMs: 5, maxWaitMs: 50 }, async () => {
    running++;
    if (running > 1) overlap = true;
    n++;
    await tick(40);
    running--;
  });
  d.trigger();
  await tick(15); // sync 1 is running
  d.trigger();
  d.trigger();
  d.trigger();
  await tick(150);
  assert.equal(overlap, false);
  assert.equal(n, 2);
  d.stop();
});

test('flush runs a pending sync immediately', async () => {
  let n = 0;
  const d = new Debouncer({ quietMs: 10_000, maxWaitMs: 10_000 }, async () => {
    n++;
  });
  d.trigger();
  await d.flush();
  assert.equal(n, 1);
  d.stop();
});
