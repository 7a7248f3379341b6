// A third batch of ingress-nginx annotations end to end, each by its behaviour, with Portico's ConfigMap allowing
// snippets (allow-snippet-annotations "true", annotations-risk-level Critical) — real apiserver (RBAC on), Portico as
// its ServiceAccount, real nginx, echo pods in network namespaces:
//   configuration-snippet, server-snippet, connection-proxy-header, enable-access-log, use-port-in-redirects,
//   disable-proxy-intercept-errors, enable-modsecurity + enable-owasp-core-rules + modsecurity-snippet +
//   modsecurity-transaction-id (Debian's ModSecurity and CRS, installed by the project's setup), limit-whitelist,
//   upstream-hash-by-subset(-size), limit-rate(-after), session-cookie-partitioned.
//
// Isolation: an IngressClass and hosts of this run, Portico on its own ports (53880-53883).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { createIngress, createService } from './harness/objects.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.in3${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;

const service = (name: string, app: string) => createService(ns, name, app);
const ingress = (name: string, host: string, annotations: Record<string, string>, o: Parameters<typeof createIngress>[5] = {}) => createIngress(ns, CLASS, name, host, annotations, o);
const get = (host: string, p0: string, headers?: Record<string, string>): Promise<Reply> => request(p.httpPort, host, p0, { headers });
// A new combination of nginx-only settings (a directive profile) is applied with a reload: wait until none is pending.
const settled = () => until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('in3');
  const cls = await ownIngressClass('in3');
  CLASS = cls.name;
  removeClass = cls.remove;
  await admin().request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } } });
  p = await startPortico(53880, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await service('echo', 'echo');
  await service('flaky', 'flaky');
  await service('errors', 'errors');
  await service('pool', 'pool');
  await service('sticky', 'pool'); // balancing is per Service port: the affinity Ingress has a Service of its own
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await addPod(ns, 'flaky-1', { labels: { app: 'flaky' }, status: 503 });
  await addPod(ns, 'errors-1', { labels: { app: 'errors' } });
  for (let i = 1; i <= 4; i++) await addPod(ns, `pool-${i}`, { labels: { app: 'pool' } });
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('ingress-nginx annotations, third batch (drop-in)', () => {
  test('configuration-snippet and server-snippet (allowed by the ConfigMap): their headers are on the answer and the proxied request', async () => {
    await ingress('snip', H('snip'), {
      [`${N}configuration-snippet`]: 'more_set_headers "X-Snippet: location";\nproxy_set_header X-From-Snippet yes;',
      [`${N}server-snippet`]: 'add_header X-Server-Snippet on always;',
    });
    const r = await until('snippets applied', async () => {
      const x = await get(H('snip'), '/');
      return x.status === 200 && x.headers['x-snippet'] === 'location' && x;
    });
    assert.equal(r.headers['x-server-snippet'], 'on');
    assert.equal(r.json().headers['x-from-snippet'], 'yes');
  });

  test('connection-proxy-header: the backend receives that Connection header', async () => {
    await ingress('conn-hdr', H('conn-hdr'), { [`${N}connection-proxy-header`]: 'keep-alive' });
    const r = await until('served', async () => { const x = await get(H('conn-hdr'), '/'); return x.status === 200 && x; });
    assert.equal(r.json().headers.connection, 'keep-alive');
  });

  test('enable-access-log "false": that Ingress\'s requests are not in the access log, the others are', async () => {
    await ingress('quiet', H('quiet'), { [`${N}enable-access-log`]: 'false' });
    await ingress('loud', H('loud'), {});
    await until('quiet served', async () => (await get(H('quiet'), '/')).status === 200);
    await until('loud served', async () => (await get(H('loud'), '/')).status === 200);
    await settled();
    assert.equal((await get(H('quiet'), `/quiet-${RUN}`)).status, 200);
    assert.equal((await get(H('loud'), `/loud-${RUN}`)).status, 200);
    const log = () => { try { return readFileSync(path.join(p.config['runtime-dir'], 'access.log'), 'utf8'); } catch { return ''; } };
    await until('the other Ingress is logged (the log is flushed every second)', () => log().includes(`/loud-${RUN}`), 10_000, 200);
    assert.ok(!log().includes(`/quiet-${RUN}`));
  });

  test('use-port-in-redirects: the trailing-slash 301 is absolute (no port: the published port is the default 80)', async () => {
    // The 301 of ingress-nginx's `location /docs/` for "/docs": an ImplementationSpecific path (a Prefix "/docs/"
    // matches "/docs" itself, as the Ingress spec says).
    await ingress('portredir', H('portredir'), { [`${N}use-port-in-redirects`]: 'true' }, { path: '/docs/', pathType: 'ImplementationSpecific' });
    await ingress('relredir', H('relredir'), {}, { path: '/docs/', pathType: 'ImplementationSpecific' });
    const abs = await until('redirect', async () => { const x = await get(H('portredir'), '/docs'); return x.status === 301 && x; });
    assert.equal(abs.headers.location, `http://${H('portredir')}/docs/`);
    const rel = await until('redirect', async () => { const x = await get(H('relredir'), '/docs'); return x.status === 301 && x; });
    assert.equal(rel.headers.location, '/docs/', 'by default relative, as the client resolves it');
  });

  test('disable-proxy-intercept-errors: with custom-http-errors the backend\'s own 503 reaches the client unchanged', async () => {
    await ingress('intercept', H('intercept'), { [`${N}custom-http-errors`]: '503', [`${N}default-backend`]: 'errors' }, { svc: 'flaky' });
    await ingress('nointercept', H('nointercept'), { [`${N}custom-http-errors`]: '503', [`${N}default-backend`]: 'errors', [`${N}disable-proxy-intercept-errors`]: 'true' }, { svc: 'flaky' });
    await until('intercepted by the default backend', async () => { const x = await get(H('intercept'), '/'); return x.status !== 404 && x.body.includes('errors-1'); });
    const r = await until('not intercepted', async () => { const x = await get(H('nointercept'), '/'); return x.status === 503 && x; });
    assert.equal(r.json().pod, 'flaky-1', 'the flaky pod\'s own answer');
  });

  test('ModSecurity with the OWASP CRS and SecRuleEngine On (modsecurity-snippet): an SQL injection gets 403, a plain request 200', async () => {
    await ingress('waf', H('waf'), {
      [`${N}enable-modsecurity`]: 'true',
      [`${N}enable-owasp-core-rules`]: 'true',
      [`${N}modsecurity-transaction-id`]: '$request_id',
      [`${N}modsecurity-snippet`]: 'SecRuleEngine On',
    });
    await until('waf host served', async () => (await get(H('waf'), '/hello')).status === 200, 60_000, 200);
    assert.equal((await get(H('waf'), "/?id=1'%20OR%20'1'='1")).status, 403);
    assert.equal((await get(H('waf'), '/?q=%3Cscript%3Ealert(1)%3C/script%3E')).status, 403);
    assert.equal((await get(H('waf'), '/hello?x=1')).status, 200);
  });

  test('limit-whitelist (the older name of limit-allowlist) exempts the client from limit-rps', async () => {
    await ingress('wl', H('wl'), { [`${N}limit-rps`]: '1', [`${N}limit-burst-multiplier`]: '1', [`${N}limit-whitelist`]: '127.0.0.1/32' });
    await until('wl served', async () => (await get(H('wl'), '/')).status === 200);
    const codes = new Set<number>();
    for (let i = 0; i < 10; i++) codes.add((await get(H('wl'), '/')).status);
    assert.deepEqual([...codes], [200]);
  });

  test('upstream-hash-by-subset: one key is served by the pods of one subset of 2, spread over both', async () => {
    await ingress('subset', H('subset'), { [`${N}upstream-hash-by`]: '$request_uri', [`${N}upstream-hash-by-subset`]: 'true', [`${N}upstream-hash-by-subset-size`]: '2' }, { svc: 'pool' });
    await until('all four pods in the backend', async () => {
      const seen = new Set<string>();
      for (let k = 0; k < 40; k++) seen.add((await get(H('subset'), `/k${k}`)).json().pod);
      return seen.size === 4;
    }, 30_000);
    for (const key of ['/a', '/b', '/c']) {
      const pods = new Set<string>();
      for (let i = 0; i < 30; i++) pods.add((await get(H('subset'), key)).json().pod);
      assert.equal(pods.size, 2, `${key}: ${[...pods]}`);
    }
  });

  test('limit-rate + limit-rate-after: the answer after the first KB trickles at 1 KB/s (buffering turned on for it)', async () => {
    await ingress('slow', H('slow'), { [`${N}limit-rate`]: '1', [`${N}limit-rate-after`]: '1' });
    await ingress('fast', H('fast'), {});
    const big = { 'x-pad': 'p'.repeat(5000) }; // the echo pod puts the request headers into its answer
    await until('slow served', async () => (await get(H('slow'), '/')).status === 200);
    await until('fast served', async () => (await get(H('fast'), '/')).status === 200);
    await settled();
    let t = Date.now();
    assert.equal((await get(H('fast'), '/', big)).status, 200);
    const fast = Date.now() - t;
    t = Date.now();
    const r = await get(H('slow'), '/', big);
    const slow = Date.now() - t;
    assert.equal(r.status, 200);
    assert.ok(r.body.length > 5000);
    assert.ok(slow >= 2_500 && fast < 1_000, `limited ${slow} ms, unlimited ${fast} ms`);
  });

  test('session-cookie-partitioned: the affinity cookie is Partitioned (and so Secure)', async () => {
    await ingress('part', H('part'), { [`${N}affinity`]: 'cookie', [`${N}session-cookie-partitioned`]: 'true' }, { svc: 'sticky' });
    const r = await until('cookie', async () => { const x = await get(H('part'), '/'); return x.headers['set-cookie'] && x; });
    assert.match(String(r.headers['set-cookie']), /; Secure; Partitioned$/);
  });
});
