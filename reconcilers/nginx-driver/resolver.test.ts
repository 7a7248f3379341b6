// ExternalName resolution: names in use stay resolved across quiet periods, failures keep the last good answer,
// and addresses no tenant may reach are refused. Fake DNS and mock timers; nothing is looked up for real.
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../operator/log.ts';
import { ExternalNameResolver } from './resolver.ts';

const log = createLogger('error');
const refuseLoopback = (a: string) => (a.startsWith('127.') ? 'loopback' : null);

beforeEach(() => mock.timers.enable({ apis: ['setInterval', 'Date'], now: 0 }));
afterEach(() => mock.timers.reset());

function fakeDns(answers: Record<string, string[] | Error>) {
  const calls: string[] = [];
  return {
    calls,
    answers,
    lookup: async (name: string) => {
      calls.push(name);
      const a = answers[name];
      if (a instanceof Error) throw a;
      if (!a) throw new Error(`ENOTFOUND ${name}`);
      return a;
    },
  };
}

test('a name in use stays resolved through quiet minutes (no flap to "unknown"), and is refreshed', async () => {
  const dns = fakeDns({ 'db.example.net': ['198.51.100.7'] });
  let changes = 0;
  const r = new ExternalNameResolver(() => changes++, log, { refuse: refuseLoopback, lookup: dns.lookup, refreshMs: 30_000 });
  r.use(['db.example.net']);
  await r.settle();
  assert.deepEqual(r.get('db.example.net')?.addresses, ['198.51.100.7']);
  assert.equal(changes, 1);
  for (let i = 0; i < 5; i++) {
    mock.timers.tick(30_000);
    await r.settle();
    assert.deepEqual(r.get('db.example.net')?.addresses, ['198.51.100.7'], `still resolved after ${(i + 1) * 30} s without a sync`);
  }
  assert.equal(dns.calls.length, 6, 'looked up once, then refreshed every 30 s');
  assert.equal(changes, 1, 'an unchanged answer triggers no sync');
  dns.answers['db.example.net'] = ['198.51.100.8'];
  mock.timers.tick(30_000);
  await r.settle();
  assert.deepEqual(r.get('db.example.net')?.addresses, ['198.51.100.8']);
  assert.equal(changes, 2, 'a changed answer triggers one sync');
  r.stop();
});

test('a failed refresh keeps the last good addresses; a name that never resolved reports the error', async () => {
  const dns = fakeDns({ 'db.example.net': ['198.51.100.7'] });
  const r = new ExternalNameResolver(() => {}, log, { refuse: refuseLoopback, lookup: dns.lookup, refreshMs: 1000 });
  r.use(['db.example.net', 'nope.example.net']);
  await r.settle();
  dns.answers['db.example.net'] = new Error('EAI_AGAIN');
  mock.timers.tick(1000);
  await r.settle();
  assert.deepEqual(r.get('db.example.net')?.addresses, ['198.51.100.7']);
  assert.equal(r.get('db.example.net')?.error, undefined);
  assert.match(r.get('nope.example.net')?.error ?? '', /ENOTFOUND/);
  r.stop();
});

test('refused addresses never reach the answer; names no longer used are forgotten', async () => {
  const dns = fakeDns({ evil: ['127.0.0.1', '198.51.100.3'], worse: ['127.0.0.53'] });
  const r = new ExternalNameResolver(() => {}, log, { refuse: refuseLoopback, lookup: dns.lookup });
  r.use(['evil', 'worse']);
  await r.settle();
  assert.deepEqual(r.get('evil')?.addresses, ['198.51.100.3']);
  assert.deepEqual(r.get('evil')?.refused, [{ address: '127.0.0.1', reason: 'loopback' }]);
  assert.deepEqual(r.get('worse')?.addresses, []);
  r.use(['evil']);
  assert.equal(r.get('worse'), undefined);
  r.stop();
});
