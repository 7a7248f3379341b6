// The gateway's sync lanes as a state machine, driven by node:test's mock timers (no real waiting).
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { Lane, type LaneOptions } from './lane.ts';

const OPTS: LaneOptions = { quietMs: 50, maxWaitMs: 250, retryInitialMs: 500, retryMaxMs: 4_000 };

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
afterEach(() => mock.timers.reset());

/** Lets resolved promises run (the mocked clock does not advance). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
async function advance(ms: number): Promise<void> {
  mock.timers.tick(ms);
  await settle();
}

/** A run whose outcome the test decides, one call at a time. */
function controlledRun() {
  const calls: { at: number; finish: (ok: boolean) => void; fail: (e: Error) => void }[] = [];
  const run = () =>
    new Promise<boolean>((resolve, reject) => {
      calls.push({ at: Date.now(), finish: resolve, fail: reject });
    });
  return { calls, run };
}

test('a burst of triggers runs once, after the quiet window', async () => {
  const r = controlledRun();
  const lane = new Lane(OPTS, { run: r.run, onError: () => {}, now: Date.now });
  for (let i = 0; i < 20; i++) lane.trigger();
  assert.equal(lane.state, 'waiting');
  await advance(49);
  assert.equal(r.calls.length, 0, 'not before the quiet window');
  await advance(1);
  assert.equal(r.calls.length, 1);
  r.calls[0]?.finish(true);
  await settle();
  assert.equal(lane.state, 'idle');
  assert.equal(lane.dirty, false);
});

test('a continuous stream of triggers still runs by the max wait', async () => {
  const r = controlledRun();
  const lane = new Lane(OPTS, { run: r.run, onError: () => {}, now: Date.now });
  for (let t = 0; t < 260; t += 10) {
    lane.trigger();
    await advance(10);
  }
  assert.equal(r.calls.length, 1, 'one run forced by max wait');
  assert.equal(r.calls[0]?.at, 250);
});

test('triggers during a run give exactly one more run after it, and dirty stays set until then', async () => {
  const r = controlledRun();
  const lane = new Lane(OPTS, { run: r.run, onError: () => {}, now: Date.now });
  lane.trigger();
  await advance(50);
  assert.equal(lane.state, 'running');
  lane.trigger();
  lane.trigger();
  r.calls[0]?.finish(true);
  await settle();
  assert.equal(lane.dirty, true, 'the change that arrived mid-run is not applied yet');
  assert.equal(lane.state, 'waiting');
  await advance(50);
  assert.equal(r.calls.length, 2);
  r.calls[1]?.finish(true);
  await settle();
  assert.equal(lane.dirty, false);
});

test('a failed run is retried with growing backoff until it succeeds; dirty is never cleared by a failure', async () => {
  const r = controlledRun();
  const retries: number[] = [];
  const lane = new Lane(OPTS, { run: r.run, onError: () => {}, onRetry: (d) => retries.push(d), now: Date.now });
  lane.trigger();
  await advance(50);
  r.calls[0]?.finish(false);
  await settle();
  assert.equal(lane.state, 'backoff');
  assert.equal(lane.dirty, true);
  await advance(499);
  assert.equal(r.calls.length, 1);
  await advance(1);
  assert.equal(r.calls.length, 2, 'retried after 500 ms');
  r.calls[1]?.finish(false);
  await settle();
  await advance(1000);
  assert.equal(r.calls.length, 3, 'then after 1000 ms');
  r.calls[2]?.finish(true);
  await settle();
  assert.deepEqual(retries, [500, 1000]);
  assert.equal(lane.dirty, false);
  assert.equal(lane.failures, 2);
  // backoff resets after a success
  lane.trigger();
  await advance(50);
  r.calls[3]?.finish(false);
  await settle();
  assert.equal(retries.at(-1), 500);
});

test('a run that throws is a failed run (reported, retried), never an unhandled rejection', async () => {
  const r = controlledRun();
  const errors: unknown[] = [];
  const lane = new Lane(OPTS, { run: r.run, onError: (e) => errors.push(e), now: Date.now });
  lane.trigger();
  await advance(50);
  r.calls[0]?.fail(new Error('bug in translation'));
  await settle();
  assert.equal((errors[0] as Error).message, 'bug in translation');
  assert.equal(lane.state, 'backoff');
  await advance(500);
  assert.equal(r.calls.length, 2);
});

test('a new change during backoff is tried after the debounce, not after the full backoff', async () => {
  const r = controlledRun();
  const lane = new Lane({ ...OPTS, retryInitialMs: 10_000 }, { run: r.run, onError: () => {}, now: Date.now });
  lane.trigger();
  await advance(50);
  r.calls[0]?.finish(false);
  await settle();
  await advance(1000);
  lane.trigger();
  await advance(50);
  assert.equal(r.calls.length, 2);
});

test('flush runs pending work at once and waits for it; stop cancels timers', async () => {
  const r = controlledRun();
  const lane = new Lane(OPTS, { run: r.run, onError: () => {}, now: Date.now });
  lane.trigger();
  const flushed = lane.flush();
  await settle();
  assert.equal(r.calls.length, 1, 'flush skipped the quiet window');
  r.calls[0]?.finish(true);
  await flushed;
  lane.trigger();
  lane.stop();
  await advance(1000);
  assert.equal(r.calls.length, 1);
  assert.equal(lane.state, 'stopped');
});

test('two lanes are independent: a failing structural lane does not hold back data, and data runs do not clear it', async () => {
  const s = controlledRun();
  const d = controlledRun();
  const structural = new Lane(OPTS, { run: s.run, onError: () => {}, now: Date.now });
  const data = new Lane({ ...OPTS, quietMs: 0, maxWaitMs: 0 }, { run: d.run, onError: () => {}, now: Date.now });
  structural.trigger();
  await advance(50);
  assert.equal(structural.state, 'running');
  data.trigger();
  await advance(0);
  assert.equal(d.calls.length, 1, 'data pushed while the structural run is in flight');
  d.calls[0]?.finish(true);
  s.calls[0]?.finish(false);
  await settle();
  data.trigger();
  await advance(0);
  d.calls[1]?.finish(true);
  await settle();
  assert.equal(structural.dirty, true, 'the failed structural change is still pending');
  await advance(500);
  assert.equal(s.calls.length, 2, 'and is retried');
});
