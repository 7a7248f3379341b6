// More ingress-nginx annotations end to end, each by its behaviour (issue 11: "e2e for every supported annotation"):
// the real apiserver (RBAC on), Portico as its ServiceAccount, real nginx, echo pods in network namespaces. The
// annotations here are otherwise covered by translation and real-nginx tests; this file shows them working through
// the API server and Portico's informers:
//   ssl-redirect "false", session-cookie-{max-age,path,domain,secure,expires,samesite,conditional-samesite-none},
//   affinity-mode, canary-by-header-value, canary-by-header-pattern, canary-weight-total, allowlist-source-range,
//   denylist-source-range, cors-allow-{methods,headers,credentials}, cors-expose-headers, cors-max-age, limit-rps,
//   limit-allowlist, auth-secret-type auth-map, permanent-redirect(-code), temporal-redirect(-code),
//   x-forwarded-prefix, upstream-vhost, proxy-next-upstream(-tries).
//
// Isolation: an IngressClass and hosts of this run, Portico on its own ports (53680-53683).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { createIngress, createService } from './harness/objects.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.inm${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const b64 = (s: string) => Buffer.from(s).toString('base64');

const service = (name: string, app: string) => createService(ns, name, app);
const ingress = (name: string, host: string, annotations: Record<string, string>, o: { svc?: string; tls?: string; path?: string } = {}) => createIngress(ns, CLASS, name, host, annotations, o);
const get = (host: string, path: string, headers?: Record<string, string>, method?: string): Promise<Reply> => request(p.httpPort, host, path, { headers, method });
const served = (host: string, path = '/') => until(`${host} served`, async () => (await get(host, path)).status === 200);

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('inm');
  const cls = await ownIngressClass('inm');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(53680, cls.flags);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await service('echo', 'echo');
  await service('canary', 'canary');
  await service('retry', 'retry');
  // Canary settings belong to the main Service port (one canary each): a Service per canary scenario.
  for (const s of ['main-a', 'main-b', 'main-c']) await service(s, 'echo');
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await addPod(ns, 'canary-1', { labels: { app: 'canary' } });
  await addPod(ns, 'retry-good', { labels: { app: 'retry' } });
  await addPod(ns, 'retry-bad', { labels: { app: 'retry' }, status: 502 });
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('ingress-nginx annotations, more (drop-in)', () => {
  test('ssl-redirect "false": plain HTTP to a TLS host is served, not redirected', async () => {
    await ingress('tls-noredirect', H('tls'), { [`${N}ssl-redirect`]: 'false' }, { tls: 'not-there' });
    await served(H('tls'));
  });

  test('session-cookie-*: the affinity cookie carries the attributes asked for; affinity-mode persistent', async () => {
    await ingress('sticky', H('sticky'), {
      [`${N}affinity`]: 'cookie',
      [`${N}affinity-mode`]: 'persistent',
      [`${N}session-cookie-name`]: 'route',
      [`${N}session-cookie-max-age`]: '600',
      [`${N}session-cookie-path`]: '/app',
      [`${N}session-cookie-domain`]: `.${H('sticky')}`,
      [`${N}session-cookie-secure`]: 'true',
      [`${N}session-cookie-expires`]: '600',
      [`${N}session-cookie-samesite`]: 'None',
      [`${N}session-cookie-conditional-samesite-none`]: 'true',
    }, { svc: 'retry' });
    const r = await until('cookie set', async () => {
      const x = await get(H('sticky'), '/', { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0.0.0 Safari/537.36' });
      return x.headers['set-cookie'] && x;
    });
    const c = String(r.headers['set-cookie']);
    assert.match(c, /^route=[0-9a-f]+; Path=\/app; HttpOnly; Max-Age=600; Domain=\.sticky\./);
    // nginx's cookie time (ngx.cookie_time): "Mon, 23-Nov-26 06:01:28 GMT", as ingress-nginx sends it.
    assert.match(c, /; Expires=[A-Z][a-z]{2}, \d\d-[A-Z][a-z]{2}-\d\d [\d:]{8} GMT; Secure; SameSite=None$/);
    const old = await get(H('sticky'), '/', { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/64.0.3282.140 Safari/537.36' });
    assert.doesNotMatch(String(old.headers['set-cookie']), /SameSite/, 'conditional SameSite=None: left out for a browser that rejects it');
  });

  test('canary-by-header-value, canary-by-header-pattern and canary-weight-total route to the canary exactly as asked', async () => {
    await ingress('main', H('canary'), {}, { svc: 'main-a' });
    await ingress('main-canary', H('canary'), { [`${N}canary`]: 'true', [`${N}canary-by-header`]: 'X-Env', [`${N}canary-by-header-value`]: 'staging' }, { svc: 'canary' });
    await until('header value routes to the canary', async () => (await get(H('canary'), '/', { 'x-env': 'staging' })).json().pod === 'canary-1');
    assert.equal((await get(H('canary'), '/', { 'x-env': 'prod' })).json().pod, 'echo-1');
    await ingress('pat', H('pattern'), {}, { svc: 'main-b' });
    await ingress('pat-canary', H('pattern'), { [`${N}canary`]: 'true', [`${N}canary-by-header`]: 'X-Env', [`${N}canary-by-header-pattern`]: '^stag(ing|e)$' }, { svc: 'canary' });
    await until('header pattern routes to the canary', async () => (await get(H('pattern'), '/', { 'x-env': 'stage' })).json().pod === 'canary-1');
    assert.equal((await get(H('pattern'), '/', { 'x-env': 'prod' })).json().pod, 'echo-1');
    await ingress('total', H('total'), {}, { svc: 'main-c' });
    await ingress('total-canary', H('total'), { [`${N}canary`]: 'true', [`${N}canary-weight`]: '5', [`${N}canary-weight-total`]: '5' }, { svc: 'canary' });
    await until('weight 5 of 5 sends everything to the canary', async () => (await get(H('total'), '/')).json().pod === 'canary-1');
    for (let i = 0; i < 20; i++) assert.equal((await get(H('total'), '/')).json().pod, 'canary-1');
  });

  test('allowlist-source-range and denylist-source-range: the test client (127.0.0.1) is refused with 403 where not allowed', async () => {
    await ingress('allow-other', H('allow-other'), { [`${N}allowlist-source-range`]: '198.51.100.0/24' });
    await ingress('allow-me', H('allow-me'), { [`${N}allowlist-source-range`]: '127.0.0.1/32' });
    await ingress('deny-me', H('deny-me'), { [`${N}denylist-source-range`]: '127.0.0.0/8' });
    await until('not on the allowlist → 403', async () => (await get(H('allow-other'), '/')).status === 403);
    await served(H('allow-me'));
    await until('on the denylist → 403', async () => (await get(H('deny-me'), '/')).status === 403);
  });

  test('cors-*: the preflight and the answer carry the methods, headers, credentials, exposed headers and max-age asked for', async () => {
    await ingress('cors', H('cors'), {
      [`${N}enable-cors`]: 'true',
      [`${N}cors-allow-origin`]: 'https://app.example.com',
      [`${N}cors-allow-methods`]: 'GET, PUT',
      [`${N}cors-allow-headers`]: 'X-Custom, Content-Type',
      [`${N}cors-expose-headers`]: 'X-Total',
      [`${N}cors-allow-credentials`]: 'true',
      [`${N}cors-max-age`]: '120',
    });
    const pre = await until('preflight answered', async () => {
      const x = await get(H('cors'), '/', { origin: 'https://app.example.com', 'access-control-request-method': 'PUT' }, 'OPTIONS');
      return x.status === 204 && x;
    });
    assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.match(String(pre.headers['access-control-allow-methods']), /GET, ?PUT/);
    assert.match(String(pre.headers['access-control-allow-headers']), /X-Custom, ?Content-Type/i);
    assert.equal(pre.headers['access-control-allow-credentials'], 'true');
    assert.equal(pre.headers['access-control-max-age'], '120');
    const r = await get(H('cors'), '/', { origin: 'https://app.example.com' });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['access-control-expose-headers']), /X-Total/i);
  });

  test('limit-rps: over the burst the client gets 503 (limit-req-status-code default); limit-allowlist exempts', async () => {
    await ingress('rps', H('rps'), { [`${N}limit-rps`]: '1', [`${N}limit-burst-multiplier`]: '1' });
    await ingress('rps-free', H('rps-free'), { [`${N}limit-rps`]: '1', [`${N}limit-burst-multiplier`]: '1', [`${N}limit-allowlist`]: '127.0.0.1/32' });
    await until('rps limited', async () => {
      const codes = [];
      for (let i = 0; i < 5; i++) codes.push((await get(H('rps'), '/')).status);
      return codes.includes(503) && codes.includes(200);
    });
    await served(H('rps-free'));
    const free = [];
    for (let i = 0; i < 10; i++) free.push((await get(H('rps-free'), '/')).status);
    assert.deepEqual([...new Set(free)], [200], 'the allowlisted client is never limited');
  });

  test('auth-secret-type auth-map: users as keys of the Secret', async () => {
    const sha = (await import('node:crypto')).createHash('sha1').update('wonderland').digest('base64');
    await admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'map' }, data: { alice: b64(`{SHA}${sha}`) } } });
    await ingress('authmap', H('authmap'), { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'map', [`${N}auth-secret-type`]: 'auth-map', [`${N}auth-realm`]: 'Map users' });
    await until('auth-map user passes', async () => (await get(H('authmap'), '/', { authorization: `Basic ${b64('alice:wonderland')}` })).status === 200);
    const no = await get(H('authmap'), '/', { authorization: `Basic ${b64('alice:nope')}` });
    assert.equal(no.status, 401);
    assert.match(String(no.headers['www-authenticate']), /Basic realm="Map users"/);
  });

  test('permanent-redirect(-code) and temporal-redirect(-code): every request answered with that URL and code', async () => {
    await ingress('perm', H('perm'), { [`${N}permanent-redirect`]: 'https://new.example.com/landing', [`${N}permanent-redirect-code`]: '308' });
    await ingress('temp', H('temp'), { [`${N}temporal-redirect`]: 'https://maint.example.com/' });
    await ingress('temp-code', H('temp-code'), { [`${N}temporal-redirect`]: 'https://maint.example.com/', [`${N}temporal-redirect-code`]: '307' });
    const perm = await until('permanent redirect', async () => { const x = await get(H('perm'), '/a?b=1'); return x.status === 308 && x; });
    assert.equal(perm.headers.location, 'https://new.example.com/landing');
    const temp = await until('temporal redirect', async () => { const x = await get(H('temp'), '/x'); return x.status === 302 && x; });
    assert.equal(temp.headers.location, 'https://maint.example.com/');
    await until('temporal redirect with its code', async () => (await get(H('temp-code'), '/x')).status === 307);
  });

  test('x-forwarded-prefix and upstream-vhost: what the backend receives', async () => {
    await ingress('prefix', H('prefix'), { [`${N}x-forwarded-prefix`]: '/shop', [`${N}upstream-vhost`]: 'internal.svc.local' });
    const r = await until('served', async () => { const x = await get(H('prefix'), '/'); return x.status === 200 && x; });
    const seen = r.json<{ host: string; headers: Record<string, string> }>();
    assert.equal(seen.headers['x-forwarded-prefix'], '/shop');
    assert.equal(seen.host, 'internal.svc.local');
  });

  test('proxy-next-upstream + proxy-next-upstream-tries: a 502 of one pod is retried on the other; without it the 502 reaches the client', async () => {
    await ingress('retry', H('retry'), { [`${N}proxy-next-upstream`]: 'error timeout http_502', [`${N}proxy-next-upstream-tries`]: '3' }, { svc: 'retry' });
    await until('retry served', async () => (await get(H('retry'), '/')).status === 200);
    for (let i = 0; i < 20; i++) assert.equal((await get(H('retry'), '/')).json().pod, 'retry-good', 'every request ends on the good pod');
    await ingress('noretry', H('noretry'), { [`${N}proxy-next-upstream`]: 'off' }, { svc: 'retry' });
    await until('without retries the failing pod is seen', async () => (await get(H('noretry'), '/')).status === 502);
  });
});
