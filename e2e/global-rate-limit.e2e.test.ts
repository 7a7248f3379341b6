// ingress-nginx's global rate limit end to end (global-rate-limit, -window, -key, -ignored-cidrs), counted in a real
// Redis (Debian's redis-server, started here on loopback with a temporary directory of its own and no persistence)
// named by the controller ConfigMap's global-rate-limit-redis-* keys: real apiserver, real nginx, an echo pod as the
// backend, requests from loopback (client 127.0.0.1). Also: no Redis in the ConfigMap → a Warning on the Ingress and
// the limit fails open; ingress-nginx's memcached keys → an UnsupportedKey Warning naming the Redis keys.
// (Two nginx sharing one Redis, concurrency and Redis going down: reconcilers/nginx-driver/nginx/
// global-rate-limit.nginx.test.ts.)
//
// Two Portico replicas (two in-process controllers, each with its own nginx) serve the same Ingresses and count into
// the one Redis: a limit holds across them, as the annotation promises (with ingress-nginx's memcached, and here).
//
// Isolation: an IngressClass, namespace, ConfigMap and hosts of this run; Portico on ports 31915-31918 and (the second
// replica) 31910-31913, Redis on 31919.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { eventsAbout } from './harness/objects.ts';
import { redisCommand as command, startRedis, type TestRedis } from '../reconcilers/nginx-driver/nginx/redis.test-helpers.ts';

let p: RunningPortico;
let p2: RunningPortico;
let ns: string;
let redis: TestRedis | undefined;
const REDIS_PORT = 31919;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.grl${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const REDIS_KEYS = { 'global-rate-limit-redis-host': '127.0.0.1', 'global-rate-limit-redis-port': String(REDIS_PORT) };

const ingress = (name: string, host: string, annotations: Record<string, string> = {}) =>
  admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, annotations }, spec: { ingressClassName: CLASS, rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }] } },
  });
const setConfig = (data: Record<string, string | null>) =>
  admin().request('PATCH', `/api/v1/namespaces/${ns}/configmaps/portico`, { contentType: 'application/merge-patch+json', body: { data } });
const get = (host: string, headers?: Record<string, string>): Promise<Reply> => request(p.httpPort, host, '/', { headers });

const redisCommand = (...args: string[]) => command(REDIS_PORT, ...args);

before(async () => {
  redis = await startRedis(REDIS_PORT);
  await ensureCluster();
  ns = await uniqueNamespace('grl');
  const cls = await ownIngressClass('grl');
  CLASS = cls.name;
  removeClass = cls.remove;
  await admin().request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: REDIS_KEYS } });
  p = await startPortico(31915, [...cls.flags, '--configmap', `${ns}/portico`]);
  p2 = await startPortico(31910, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await until('the second replica ready', async () => (await request(p2.healthPort, 'x', '/readyz')).status === 200);
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo' }, spec: { selector: { app: 'echo' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
});

after(async () => {
  try {
    await p?.stop();
    await p2?.stop();
    if (ns) await deleteNamespace(ns);
    await removeClass?.();
  } finally {
    await redis?.close();
  }
});

describe('global-rate-limit (counted in Redis)', () => {
  test('limit 5 per 1h per key ${http_x_client}: 5 answered, then 429 with Retry-After; another key has its own count; ignored CIDRs are never limited', async () => {
    await ingress('limited', H('limited'), {
      [`${N}global-rate-limit`]: '5',
      [`${N}global-rate-limit-window`]: '1h',
      [`${N}global-rate-limit-key`]: '${http_x_client}',
    });
    await ingress('ignored', H('ignored'), {
      [`${N}global-rate-limit`]: '1',
      [`${N}global-rate-limit-window`]: '1h',
      [`${N}global-rate-limit-ignored-cidrs`]: '127.0.0.0/8',
    });
    // Served once a request with a throwaway key gets through (the limit then counts it, under that key only).
    await until('served', async () => (await get(H('limited'), { 'x-client': `warmup-${Date.now()}` })).status === 200);
    await until('served', async () => (await get(H('ignored'))).status === 200);
    const window = () => Math.floor(Date.now() / 3_600_000);
    let statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; ; i++) {
      // A run that straddles the top of the hour is run again under a fresh key (a new window starts from the old).
      const w = window();
      const client = `c-${RUN}-${i}`;
      statuses = [];
      for (let j = 0; j < 7; j++) {
        last = await get(H('limited'), { 'x-client': client });
        statuses.push(last.status);
      }
      if (window() === w) break;
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    assert.ok(Number(last?.headers['retry-after']) >= 1 && Number(last?.headers['retry-after']) <= 3600, `Retry-After ${last?.headers['retry-after']}`);
    assert.equal((await get(H('limited'), { 'x-client': `other-${RUN}` })).status, 200, 'another key is counted apart');
    // The counters are the namespace's and this Ingress's.
    const keys = await redisCommand('KEYS', `portico:rl:ing.${ns}.limited.grl_*`);
    assert.match(keys, /^\*[1-9]/, keys);
    for (let j = 0; j < 4; j++) assert.equal((await get(H('ignored'))).status, 200, 'the client is in global-rate-limit-ignored-cidrs');
    assert.equal(await redisCommand('KEYS', `portico:rl:ing.${ns}.ignored.grl_*`), '*0\r\n', 'ignored clients are not even counted');
  });

  test('two replicas share one limit: 10 per hour for a client, requests alternating between them → exactly 10 answered', async () => {
    await ingress('shared', H('shared'), { [`${N}global-rate-limit`]: '10', [`${N}global-rate-limit-window`]: '1h', [`${N}global-rate-limit-key`]: '${http_x_client}' });
    for (const r of [p, p2]) await until('served by each replica', async () => (await request(r.httpPort, H('shared'), '/', { headers: { 'x-client': `warmup-${RUN}-${r.httpPort}` } })).status === 200);
    const window = () => Math.floor(Date.now() / 3_600_000);
    let byReplica: number[][] = [];
    for (let i = 0; ; i++) {
      const w = window();
      const client = `pair-${RUN}-${i}`;
      byReplica = [[], []];
      for (let j = 0; j < 20; j++) byReplica[j % 2]!.push((await request((j % 2 ? p2 : p).httpPort, H('shared'), '/', { headers: { 'x-client': client } })).status);
      if (window() === w) break;
    }
    const answered = byReplica.flat().filter((x) => x === 200).length;
    assert.equal(answered, 10, `statuses by replica: ${JSON.stringify(byReplica)}`);
    assert.ok(byReplica.every((list) => list.includes(200) && list.includes(429)), `each replica answered and refused: ${JSON.stringify(byReplica)}`);
    assert.deepEqual(byReplica.flat().filter((x) => x !== 200 && x !== 429), [], 'nothing but 200 and 429');
  });

  test('no Redis in the ConfigMap: a GlobalRateLimitWithoutRedis Warning on the Ingress, and the limit fails open', async () => {
    await setConfig({ 'global-rate-limit-redis-host': null });
    await ingress('noredis', H('noredis'), { [`${N}global-rate-limit`]: '1', [`${N}global-rate-limit-window`]: '1h' });
    const ev = await until('the Warning', async () => (await eventsAbout(ns, 'Ingress', 'noredis')).find((e) => e.reason === 'GlobalRateLimitWithoutRedis'));
    assert.equal(ev.type, 'Warning');
    assert.match(ev.note, /sets no global-rate-limit-redis-host: every request is let through unlimited/);
    await until('served', async () => (await get(H('noredis'))).status === 200);
    for (let j = 0; j < 3; j++) assert.equal((await get(H('noredis'))).status, 200, 'fail open (global-rate-limit-redis-fail-open defaults to "true")');
    await setConfig(REDIS_KEYS);
  });

  test('ingress-nginx\'s memcached keys get an UnsupportedKey Warning naming the Redis keys', async () => {
    await setConfig({ 'global-rate-limit-memcached-host': 'memcached.cache.svc', 'global-rate-limit-memcached-port': '11211' });
    const ev = await until('the Warning', async () => (await eventsAbout(ns, 'ConfigMap', 'portico')).find((e) => e.reason === 'UnsupportedKey' && e.note.includes('global-rate-limit-memcached-host')));
    assert.match(ev.note, /Redis, not memcached: set global-rate-limit-redis-host/);
  });
});
