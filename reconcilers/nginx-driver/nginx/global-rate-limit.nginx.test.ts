// Issue 21, limits across replicas, with the real parts: two nginx processes (Debian's, each rendered and programmed
// as Portico does — standing in for two Portico replicas) and one real redis-server (Debian's), started here on
// loopback with a temporary directory of its own and no persistence. A rate-limit with policy redis (what the
// global-rate-limit annotations become) admits exactly `limit` requests per window whichever replica they reach;
// two namespaces' limits never share a counter; Redis stopped → fail open (and fail closed where set), each failure
// counted in the controller's metric portico_global_rate_limit_store_failures.
// The backend runs in this file's network namespace (redis.test-helpers.ts, subnet 228); clients connect to nginx
// on 127.0.0.1. Ports 31900-31908 belong to this file: Redis 31900, nginx A 31901-31903, nginx B 31904-31906, the
// echo backend 31907 (in the namespace), and 31908 where a "Redis" accepts connections and never answers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Registry } from 'prom-client';
import { translate } from '../../translate/translate.ts';
import { OPTS, modelOf } from '../../translate/fixtures.test-helpers.ts';
import type { Backend, GatewayConfig, HostRoutes, PluginInstance } from '../../config/types.ts';
import { until } from '../../../e2e/harness/http.ts';
import { globalRateLimitNet, redisCommand as command, startRedis, type TestRedis } from './redis.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive } from './live.test-helpers.ts';
import { gatewayMetrics } from '../metrics.ts';
import { DEFAULT_CONST_LABELS } from '../compat-metrics.ts';
import { NginxStats } from '../stats.ts';
import type { Readiness } from '../readiness.ts';

const REDIS_PORT = 31900;
const A = { httpPort: 31901, httpsPort: 31902, statusPort: 31903, address: '127.0.0.1' };
const B = { httpPort: 31904, httpsPort: 31905, statusPort: 31906, address: '127.0.0.1' };
const ECHO_PORT = 31907;
const MUTE_PORT = 31908;
/** A week: every phase of a test runs inside one window (a phase that straddles a window boundary is run again). */
const WINDOW = 604_800;

const tnet = globalRateLimitNet();
const { logger: logA, lines: linesA } = capturingLogger();
const { logger: logB } = capturingLogger();
const a = liveNginx('portico-grl-a-', logA);
const b = liveNginx('portico-grl-b-', logB);
let redis: TestRedis | undefined;

const REDIS = { host: '127.0.0.1', port: REDIS_PORT, timeoutMs: 200, poolSize: 8, idleMs: 10_000 };
const limit = (key: string, o: Partial<PluginInstance> = {}): PluginInstance =>
  ({ name: `${key} (annotations)`, type: 'rate-limit', policy: 'redis', limit: 10, windowSeconds: WINDOW, by: 'header', header: 'x-client', status: 429, key, failOpen: true, redis: REDIS, ...o }) as PluginInstance;

// Two namespaces' Ingresses, the same limit: their own counters (ids and keys as the translation makes them).
const PLUGINS: Record<string, PluginInstance> = {
  'ing.team-a.web.grl': limit('ing.team-a.web.grl_0a0a0a0a'),
  'ing.team-b.web.grl': limit('ing.team-b.web.grl_0b0b0b0b'),
  'ing.team-a.closed.grl': limit('ing.team-a.closed.grl_0c0c0c0c', { failOpen: false }),
  'ing.team-a.mute.grl': limit('ing.team-a.mute.grl_0d0d0d0d', { redis: { ...REDIS, port: MUTE_PORT, timeoutMs: 100 } } as Partial<PluginInstance>),
};
const HOSTS: Record<string, string> = { 'a.example.com': 'ing.team-a.web.grl', 'b.example.com': 'ing.team-b.web.grl', 'closed.example.com': 'ing.team-a.closed.grl', 'mute.example.com': 'ing.team-a.mute.grl' };
// A server that takes connections and never answers: Redis too slow.
const held: net.Socket[] = [];
const mute = net.createServer((s) => void held.push(s));

function config(listen: typeof A): GatewayConfig {
  const base = translate(modelOf({}).snapshot(), { ...OPTS, listen }).config;
  const routes: Record<string, HostRoutes> = {};
  for (const [host, id] of Object.entries(HOSTS)) {
    routes[host] = { tls: false, rules: [{ path: '/', match: 'prefix', route: { source: `Ingress/${id.split('.')[1]}/web`, backendId: 't_echo_80', sslRedirect: false, plugins: [id] } }] };
  }
  const echo: Backend = { id: 't_echo_80', endpoints: [{ address: tnet.ip, port: ECHO_PORT, weight: 1 }], balance: 'round_robin' };
  return { structure: base.structure, data: { ...base.data, routes, backends: { t_echo_80: echo }, plugins: PLUGINS, consumers: {} } };
}

const redisCommand = (...args: string[]) => command(REDIS_PORT, ...args);

before(async () => {
  redis = await startRedis(REDIS_PORT);
  await new Promise<void>((resolve) => mute.listen(MUTE_PORT, '127.0.0.1', resolve));
  tnet.up();
  await tnet.start('echo', ECHO_PORT, 'echo');
  await startLive(a.nginx, a.dynamic, config(A));
  await startLive(b.nginx, b.dynamic, config(B));
});
after(async () => {
  for (const s of held) s.destroy();
  mute.close();
  try {
    await stopLive(a.nginx, a.dynamic);
  } finally {
    try {
      await stopLive(b.nginx, b.dynamic, tnet);
    } finally {
      await redis?.close();
    }
  }
});

const windowNow = () => Math.floor(Date.now() / 1000 / WINDOW);
/** Runs a phase (with a fresh client name each time) until it ran inside one window — the first time, all but surely. */
async function inOneWindow<T>(phase: (client: string) => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    const w = windowNow();
    const out = await phase(`client-${process.pid}-${Date.now()}-${i}`);
    if (windowNow() === w) return out;
  }
}
const statusOf = async (port: number, host: string, client: string) => (await sendTo(port, host, '/', { headers: { 'x-client': client } })).status;

test('two replicas, one Redis: limit 10 per window — 20 requests split across both (in turn) admit exactly 10, then 429 with Retry-After on both', async () => {
  const { statuses, retry, client } = await inOneWindow(async (client) => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push(await statusOf(i % 2 ? B.httpPort : A.httpPort, 'a.example.com', client));
    const last = await sendTo(B.httpPort, 'a.example.com', '/', { headers: { 'x-client': client } });
    return { statuses, retry: last.headers['retry-after'], client };
  });
  assert.deepEqual(statuses, [...Array(10).fill(200), ...Array(10).fill(429)]);
  assert.ok(Number(retry) >= 1 && Number(retry) <= WINDOW, `Retry-After ${retry}`);
  // The refused ones were not counted: the counter in Redis holds the 10 admitted.
  const n = Math.floor(Date.now() / 1000 / WINDOW);
  assert.equal(await redisCommand('GET', `portico:rl:ing.team-a.web.grl_0a0a0a0a:h:${client}:${n}`), '$2\r\n10\r\n');
});

test('two replicas at once: 20 concurrent requests, 10 to each nginx, admit exactly 10 (INCR is atomic in Redis)', async () => {
  const statuses = await inOneWindow((client) => Promise.all(Array.from({ length: 20 }, (_, i) => statusOf(i % 2 ? B.httpPort : A.httpPort, 'a.example.com', client))));
  assert.equal(statuses.filter((s) => s === 200).length, 10, statuses.join(','));
  assert.equal(statuses.filter((s) => s === 429).length, 10, statuses.join(','));
});

test('one namespace never changes how another\'s traffic is limited: the same client over its limit on team-a still has all of team-b\'s', async () => {
  const { onA, onB } = await inOneWindow(async (client) => {
    const onA: number[] = [];
    for (let i = 0; i < 12; i++) onA.push(await statusOf(i % 2 ? B.httpPort : A.httpPort, 'a.example.com', client));
    const onB: number[] = [];
    for (let i = 0; i < 10; i++) onB.push(await statusOf(i % 2 ? B.httpPort : A.httpPort, 'b.example.com', client));
    return { onA, onB };
  });
  assert.deepEqual(onA, [...Array(10).fill(200), 429, 429]);
  assert.deepEqual(onB, Array(10).fill(200));
});

test('Redis too slow (a server that never answers, timeout 100 ms): the request is let through after the timeout, and counted', async () => {
  const before = (await a.dynamic.getConfig()).rateLimitStoreFailures.open;
  const t0 = Date.now();
  const r = await sendTo(A.httpPort, 'mute.example.com', '/', { headers: { 'x-client': `mute-${Date.now()}` } });
  const ms = Date.now() - t0;
  assert.equal(r.status, 200);
  assert.ok(ms >= 90 && ms < 2_000, `answered after ${ms} ms: the Redis timeout, not more`);
  assert.equal((await a.dynamic.getConfig()).rateLimitStoreFailures.open - before, 1);
});

test('Redis down: fail open (the default) lets requests through, fail closed answers 503; each counted in portico_global_rate_limit_store_failures and logged', async () => {
  const before = await a.dynamic.getConfig();
  await redis?.kill();
  const client = `down-${Date.now()}`;
  const open: number[] = [];
  for (let i = 0; i < 12; i++) open.push(await statusOf(A.httpPort, 'a.example.com', client));
  assert.deepEqual(open, Array(12).fill(200), 'fail open: no limit while Redis cannot count');
  const closed: number[] = [];
  for (let i = 0; i < 3; i++) closed.push(await statusOf(A.httpPort, 'closed.example.com', client));
  assert.deepEqual(closed, [503, 503, 503]);
  const after = await a.dynamic.getConfig();
  assert.equal(after.rateLimitStoreFailures.open - before.rateLimitStoreFailures.open, 12);
  assert.equal(after.rateLimitStoreFailures.closed - before.rateLimitStoreFailures.closed, 3);
  await until('the failure in nginx\'s error log', () => linesA.some((l) => /Redis unavailable .*fail open/.test(l)), 10_000, 25);
  // As the controller exposes it (NginxStats polls the same API).
  const registry = new Registry();
  const m = gatewayMetrics(registry, DEFAULT_CONST_LABELS);
  const stats = new NginxStats(a.dynamic, { isReady: () => true } as unknown as Readiness, m, logA);
  await stats['poll']();
  const text = await registry.getSingleMetricAsString('portico_global_rate_limit_store_failures');
  assert.match(text, new RegExp(`portico_global_rate_limit_store_failures\\{outcome="open"\\} ${after.rateLimitStoreFailures.open}\\b`));
  assert.match(text, new RegExp(`portico_global_rate_limit_store_failures\\{outcome="closed"\\} ${after.rateLimitStoreFailures.closed}\\b`));
});
