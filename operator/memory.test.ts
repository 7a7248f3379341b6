import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { MemorySettler, type MemorySettlerOptions, type SettleReport } from './memory.ts';

const MB = 1024 * 1024;

/** A settler over a fake heap, loop and clock; `gcs` records each collection's options. */
function rig(over: Partial<MemorySettlerOptions> = {}) {
  const state = { total: 0, used: 0, rss: 0, busy: 0, now: 0, afterGc: { total: 0, used: 0 }, rssAfterGc: 0 };
  const gcs: unknown[] = [];
  const settled: SettleReport[] = [];
  const s = new MemorySettler({
    gc: (o) => {
      gcs.push(o);
      state.total = state.afterGc.total;
      state.used = state.afterGc.used;
      state.rss = state.rssAfterGc;
      state.now += 200;
    },
    heap: () => ({ total: state.total, used: state.used }),
    rss: () => state.rss,
    utilization: (prev?: EventLoopUtilization) => ({ idle: 0, active: 0, utilization: prev ? state.busy : 0 }),
    now: () => state.now,
    onSettle: (x) => settled.push(x),
    ...over,
  });
  // The first look has no earlier utilization to compare with: it counts as busy.
  s.tick();
  return { s, state, gcs, settled };
}

test('a quiet loop after a burst: one full collection that returns free pages, timed and reported', () => {
  const { s, state, gcs, settled } = rig();
  state.total = 400 * MB;
  state.used = 390 * MB;
  state.afterGc = { total: 150 * MB, used: 140 * MB };
  state.now = 10_000;
  assert.equal(s.tick(), true);
  assert.deepEqual(gcs, [{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
  assert.deepEqual(settled, [{ durationMs: 200, beforeBytes: 400 * MB, afterBytes: 150 * MB }]);
  assert.equal(s.settles, 1);
});

test('no collection while the loop is busy, however much the heap grew', () => {
  const { s, state, gcs } = rig();
  state.total = 800 * MB;
  state.busy = 0.4;
  state.now = 10_000;
  assert.equal(s.tick(), false);
  state.busy = 0.06; // just above the 5% a quiet loop may spend
  assert.equal(s.tick(), false);
  assert.equal(gcs.length, 0);
  state.busy = 0.01;
  assert.equal(s.tick(), true);
});

test('growth since the last settle must pass both the absolute and the relative threshold', () => {
  const { s, state, gcs } = rig();
  state.total = 12 * MB; // under 16 MB: not worth a pause
  state.now = 10_000;
  assert.equal(s.tick(), false);
  state.total = 500 * MB;
  state.afterGc = { total: 400 * MB, used: 390 * MB };
  assert.equal(s.tick(), true);
  // 400 MB after the settle: +60 MB is over 16 MB but under 30% of 400 MB.
  state.now += 120_000;
  state.total = 460 * MB;
  assert.equal(s.tick(), false);
  state.total = 530 * MB;
  assert.equal(s.tick(), true);
  // A small heap: 30% of 20 MB is 6 MB, but the growth must also reach 16 MB.
  state.afterGc = { total: 20 * MB, used: 18 * MB };
  state.now += 120_000;
  state.total = 600 * MB;
  assert.equal(s.tick(), true);
  state.now += 120_000;
  state.total = 34 * MB;
  assert.equal(s.tick(), false);
  state.total = 37 * MB;
  assert.equal(s.tick(), true);
  assert.equal(gcs.length, 4);
});

test('at most one settle per minGapMs, and the heap left after a settle is not settled again', () => {
  const { s, state, gcs } = rig();
  state.total = 300 * MB;
  state.afterGc = { total: 120 * MB, used: 110 * MB };
  state.now = 10_000;
  assert.equal(s.tick(), true);
  // Nothing grew: never again, however long the controller idles.
  for (let i = 0; i < 5; i++) {
    state.now += 60_000;
    assert.equal(s.tick(), false);
  }
  // A new burst long after the last settle: at once.
  state.total = 400 * MB;
  assert.equal(s.tick(), true);
  state.total = 600 * MB;
  state.now += 20_000;
  assert.equal(s.tick(), false, 'within 30 s of the last settle');
  state.now += 11_000;
  assert.equal(s.tick(), true);
  assert.equal(gcs.length, 3);
});

test('without gc (node started without --expose-gc) nothing runs and no timer is left behind', () => {
  const debug: string[] = [];
  const s = new MemorySettler({ gc: undefined, log: { debug: (m: string) => debug.push(m) } as never });
  assert.equal(s.enabled, false);
  s.start();
  assert.equal(s.tick(), false);
  assert.match(debug.join('\n'), /--expose-gc/);
  s.stop();
});

test('the default collection is the process\'s own gc when node exposes it', () => {
  const g = (globalThis as { gc?: unknown }).gc;
  assert.equal(new MemorySettler().enabled, typeof g === 'function');
});

test('with the malloc addon: glibc\'s free pages are trimmed right after the collection, and reported', () => {
  const calls: string[] = [];
  const { s, state, settled } = rig({
    gc: () => {
      calls.push('gc');
      state.total = 150 * MB;
    },
    malloc: {
      stats: () => {
        calls.push('stats');
        return { heapBytes: 90 * MB, freeBytes: 60 * MB, mmapBytes: 0 };
      },
      trim: () => {
        calls.push('trim');
        return true;
      },
    },
  });
  state.total = 400 * MB;
  state.now = 10_000;
  assert.equal(s.tick(), true);
  assert.deepEqual(calls, ['gc', 'stats', 'trim']);
  assert.equal(settled[0]?.mallocFreeBytes, 60 * MB);
  // No settle, no trim.
  state.now += 1_000;
  assert.equal(s.tick(), false);
  assert.equal(calls.length, 3);
});

test('RSS that grew while V8\'s heap did not (free malloc chunks, buffers) settles too, past both of its thresholds', () => {
  const { s, state, gcs } = rig();
  state.total = 130 * MB;
  state.afterGc = { total: 130 * MB, used: 120 * MB };
  state.rss = 200 * MB;
  state.rssAfterGc = 200 * MB;
  state.now = 10_000;
  assert.equal(s.tick(), true, 'the start-up settle (nothing settled before)');
  // V8's heap unchanged, RSS +10 MB: under 12 MB.
  state.now += 60_000;
  state.rss = 210 * MB;
  assert.equal(s.tick(), false);
  // +30 MB (15 %): a settle, and the new baseline is what it left.
  state.rss = 230 * MB;
  state.rssAfterGc = 205 * MB;
  assert.equal(s.tick(), true);
  state.now += 60_000;
  state.rss = 223 * MB; // +18 MB over 205, but under 10 % of it
  assert.equal(s.tick(), false);
  state.rss = 230 * MB;
  assert.equal(s.tick(), true);
  assert.equal(gcs.length, 3);
});

test('work coming in (keys added to the queues) holds a settle back until a whole interval passed without any', () => {
  let adds = 0;
  const { s, state, gcs } = rig({ activity: () => adds });
  state.total = 200 * MB;
  state.afterGc = { total: 120 * MB, used: 100 * MB };
  state.now = 10_000;
  // A trickle of endpoint changes: the loop is quiet by its utilization, but a key was added in each interval.
  for (let i = 0; i < 3; i++) {
    adds += 2;
    state.now += 5_000;
    assert.equal(s.tick(), false, `interval ${i}: work came in`);
  }
  assert.equal(gcs.length, 0);
  // Nothing added for a whole interval: the settle runs.
  state.now += 5_000;
  assert.equal(s.tick(), true);
  assert.equal(gcs.length, 1);
});
