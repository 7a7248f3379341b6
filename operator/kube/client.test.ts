import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { leanKubeconfig } from './credentials.ts';
import { ApiError, KubeClient, retryAfterMs } from './client.ts';
import { Metrics } from '../metrics.ts';

/** A stand-in API server on loopback: answers lists at once and keeps watches open until the test ends. */
async function fakeApiServer() {
  const seen: string[] = [];
  let connections = 0;
  const watches: http.ServerResponse[] = [];
  const shed = { count: 0, retryAfter: '0' };
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (shed.count > 0) {
      shed.count--;
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': shed.retryAfter });
      res.end('{"kind":"Status","code":429,"reason":"TooManyRequests","message":"too many requests"}');
      return;
    }
    if (req.url?.includes('watch=true')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"BOOKMARK","object":{"metadata":{"name":"","resourceVersion":"7"}}}\n');
      watches.push(res);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"items":[]}');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = leanKubeconfig(`
apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "http://127.0.0.1:${(server.address() as AddressInfo).port}", insecure-skip-tls-verify: true } }]
users: [{ name: u, user: { token: t0k3n } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`, 'fake-apiserver');
  assert.ok(kc, 'a token kubeconfig is read without client-node');
  return {
    kc,
    seen,
    /** The next n requests are refused with 429 and this Retry-After. */
    shed(n: number, retryAfter = '0') {
      shed.count = n;
      shed.retryAfter = retryAfter;
    },
    connections: () => connections,
    /** What an API server restart does to idle keep-alive connections. */
    dropConnections: () => server.closeAllConnections(),
    async close() {
      for (const w of watches) w.end();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

let api: Awaited<ReturnType<typeof fakeApiServer>>;
beforeEach(async () => {
  api = await fakeApiServer();
});
afterEach(async () => {
  await api.close();
});

// The bucket's timeline (burst, spacing, order) is tested with mock timers in ratelimit.test.ts; undici keeps its
// own timers, so these tests use real sockets and a bucket that refills too slowly to matter (no waiting on time).
const SLOW = { qps: 0.001, burst: 2 };

test('requests wait for the token bucket; watches do not; the wait is exported as a metric', async () => {
  const metrics = new Metrics({ prefix: 'portico' });
  const client = new KubeClient(api.kc, { rateLimit: SLOW, metrics });
  await Promise.all(['a', 'b'].map((ns) => client.request('GET', `/api/v1/namespaces/${ns}/configmaps`)));
  const ac = new AbortController();
  const third = client.request('GET', '/api/v1/namespaces/c/configmaps', { signal: ac.signal });

  // The bucket is empty, yet a watch goes straight through: it is one long-running request.
  const stop = new AbortController();
  const watch = client.watch('/api/v1/configmaps', { resourceVersion: '5' }, stop.signal);
  const first = await watch.next();
  assert.equal(first.done, false);
  assert.deepEqual(api.seen, [
    'GET /api/v1/namespaces/a/configmaps',
    'GET /api/v1/namespaces/b/configmaps',
    'GET /api/v1/configmaps?resourceVersion=5&watch=true',
  ]);

  // The third request is still waiting for its token; its caller can give up.
  ac.abort(new Error('gave up'));
  await assert.rejects(third, /gave up/);
  assert.equal(api.seen.length, 3, 'the abandoned request never reached the server');
  stop.abort();
  await watch.return(undefined);

  const reqs = await metrics.registry.getSingleMetricAsString('portico_kube_requests_total');
  assert.match(reqs, /method="GET",code="200"} 2/);
  assert.match(reqs, /method="WATCH",code="200"} 1/);
  const wait = await metrics.registry.getSingleMetricAsString('portico_kube_rate_limiter_wait_seconds');
  assert.match(wait, /portico_kube_rate_limiter_wait_seconds_count\{method="GET"\} 2/, 'every request that went out observed its wait; the watch did not');
});

test('a derived client has its own bucket and shares the call record', async () => {
  const client = new KubeClient(api.kc, { rateLimit: SLOW });
  await client.request('GET', '/api/v1/namespaces/a/configmaps');
  await client.request('GET', '/api/v1/namespaces/b/configmaps');
  const ac = new AbortController();
  const pending = client.request('GET', '/api/v1/namespaces/c/configmaps', { signal: ac.signal });
  // Leader election style: its renewals must not queue behind the main client's backlog.
  const lease = client.withRateLimit(false);
  await lease.request('GET', '/apis/coordination.k8s.io/v1/namespaces/p/leases/l');
  assert.equal(api.seen.at(-1), 'GET /apis/coordination.k8s.io/v1/namespaces/p/leases/l');
  assert.equal(lease.limiter, undefined);
  assert.ok(client.calls.has('get coordination.k8s.io/leases'), 'calls are recorded in one place for the RBAC comparison');
  ac.abort();
  await assert.rejects(pending);
});

test('requests reuse one connection instead of opening one each (client-node builds an Agent per request)', async () => {
  const client = new KubeClient(api.kc, { rateLimit: false });
  for (let i = 0; i < 10; i++) await client.request('GET', '/api/v1/namespaces/a/configmaps');
  assert.equal(api.seen.length, 10);
  // One pool: undici may open a second socket while the first is being returned, never one per request (10).
  assert.ok(api.connections() <= 2, `${api.connections()} connections for 10 sequential requests`);
});

test('a pooled connection closed by the server (API server restart) is replaced, not reported as a failure', async () => {
  const client = new KubeClient(api.kc, { rateLimit: false });
  await client.request('GET', '/api/v1/namespaces/a/configmaps');
  api.dropConnections();
  await new Promise((r) => setImmediate(r));
  await client.request('GET', '/api/v1/namespaces/a/configmaps');
  assert.equal(api.seen.length, 2);
  assert.equal(api.connections(), 2);
});

test('a 429 is retried after Retry-After (the API server shed it unprocessed); the retries are bounded', async () => {
  const metrics = new Metrics({ prefix: 'portico' });
  const client = new KubeClient(api.kc, { rateLimit: false, metrics });
  api.shed(2);
  await client.request('POST', '/apis/events.k8s.io/v1/namespaces/a/events', { body: { note: 'x' } });
  assert.equal(api.seen.length, 3, 'two refusals, then accepted');
  api.shed(10);
  await assert.rejects(
    client.request('POST', '/apis/events.k8s.io/v1/namespaces/a/events', { body: { note: 'x' }, maxRetries: 3 }),
    (e: unknown) => e instanceof ApiError && e.status === 429 && e.reason === 'TooManyRequests',
  );
  assert.equal(api.seen.length, 3 + 4, 'one try and three retries');
  assert.match(await metrics.registry.getSingleMetricAsString('portico_kube_requests_total'), /method="POST",code="429"} 6/);
});

test('Retry-After is honoured within bounds', () => {
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs('0'), 1);
  assert.equal(retryAfterMs('3600'), 10_000);
  assert.equal(retryAfterMs(null), 1000);
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT'), 1000);
});

test('the default limit is 20 QPS with a burst of 30 (controller-runtime defaults)', () => {
  const client = new KubeClient(api.kc);
  assert.equal(client.limiter?.qps, 20);
  assert.equal(client.limiter?.burst, 30);
});

test('a request on a connection the server closed is retried only when that is safe', async () => {
  const { isStaleConnection } = await import('./client.ts');
  const goaway = Object.assign(new TypeError('fetch failed'), { cause: { code: 'UND_ERR_INFO', message: 'HTTP/2: "GOAWAY" frame received with code 0' } });
  const reset = Object.assign(new TypeError('fetch failed'), { cause: { code: 'UND_ERR_SOCKET', message: 'other side closed' } });
  const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
  assert.equal(isStaleConnection(goaway, 'POST'), true, 'GOAWAY: the stream was never taken');
  assert.equal(isStaleConnection(reset, 'GET'), true);
  assert.equal(isStaleConnection(reset, 'POST'), false, 'a POST on a reset socket may have been processed');
  assert.equal(isStaleConnection(abort, 'GET'), false);
});
