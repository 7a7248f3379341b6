// A fourth batch of ingress-nginx annotations end to end, each by its behaviour — real apiserver (RBAC on), Portico as
// its ServiceAccount, real nginx, echo pods in network namespaces (what each pod received is read back from the pod
// host):
//   proxy-http-version, proxy-cookie-domain + proxy-cookie-path, proxy-redirect-from + proxy-redirect-to,
//   mirror-target + mirror-host + mirror-request-body, auth-method + auth-request-redirect, auth-always-set-cookie,
//   auth-keepalive(-requests, -timeout, -share-vars), session-cookie-change-on-failure, auth-tls-verify-depth.
// (Each also has a real-nginx test without an API server under reconcilers/nginx-driver/nginx/.)
//
// Isolation: an IngressClass and hosts of this run, Portico on its own ports (54080-54083).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace, podRequests, stopListenerOnly } from './harness/pods.ts';
import { request, tlsRequest, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { createIngress, createService, eventsAbout } from './harness/objects.ts';
import { Pki } from './harness/pki.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.in4${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
// A root CA (the Secret's ca.crt), two intermediate CAs below it, client certificates at each level, a server
// certificate for the two mTLS hosts.
const pki = new Pki();
const read = (n: string) => pki.read(n);
const b64 = (s: string) => Buffer.from(s).toString('base64');

const service = (name: string, app: string) => createService(ns, name, app);
const ingress = (name: string, host: string, annotations: Record<string, string>, o: { svc?: string; tls?: string; path?: string } = {}) => createIngress(ns, CLASS, name, host, annotations, o);
const get = (host: string, p0: string, headers?: Record<string, string>): Promise<Reply> => request(p.httpPort, host, p0, { headers });
const post = (host: string, p0: string, body: string): Promise<Reply> => request(p.httpPort, host, p0, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
const authUrl = (svc: string, p0 = '/verify') => `http://${svc}.${ns}.svc.cluster.local${p0}`;
// A new combination of nginx-only settings (a directive profile) is applied with a reload: wait until none is pending.
const settled = () => until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
const cookies = (r: Reply): string[] => r.headers['set-cookie'] ?? [];
type Echo = { pod: string; path: string; httpVersion: string; bodyBytes: number; headers: Record<string, string> };
const eventsFor = (name: string) => eventsAbout(ns, 'Ingress', name);

/** HTTPS to Portico with the client certificate `client` and the intermediate CA certificates it sends along. */
const tlsGet = (host: string, client: string, chain: string[]) =>
  tlsRequest(p.httpsPort, host, { cert: [client, ...chain].map((c) => read(`${c}.crt`)).join(''), key: read(`${client}.key`) });

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('in4');
  const cls = await ownIngressClass('in4');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(54080, cls.flags);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await service('echo', 'echo');
  await service('shadow', 'shadow');
  await service('auth', 'auth');
  await service('auth-ka', 'auth-ka');
  // Balancing settings are per Service port: each affinity scenario has its own Service and its own two pods.
  await service('cof-on', 'cof-on');
  await service('cof-off', 'cof-off');
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await addPod(ns, 'shadow-1', { labels: { app: 'shadow' } });
  await addPod(ns, 'auth-1', { labels: { app: 'auth' } });
  await addPod(ns, 'auth-ka-1', { labels: { app: 'auth-ka' } });
  for (const s of ['cof-on', 'cof-off']) for (const x of ['a', 'b']) await addPod(ns, `${s}-${x}`, { labels: { app: s } });
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('ingress-nginx annotations, fourth batch (drop-in)', () => {
  test('proxy-http-version "1.0": the backend is spoken to in HTTP/1.0; by default in HTTP/1.1', async () => {
    await ingress('v10', H('v10'), { [`${N}proxy-http-version`]: '1.0' });
    await ingress('v11', H('v11'), {});
    const v10 = await until('HTTP/1.0 to the backend', async () => { const x = await get(H('v10'), '/'); return x.status === 200 && x.json<Echo>().httpVersion === '1.0' && x; });
    assert.equal(v10.json<Echo>().pod, 'echo-1');
    const v11 = await until('v11 served', async () => { const x = await get(H('v11'), '/'); return x.status === 200 && x; });
    assert.equal(v11.json<Echo>().httpVersion, '1.1');
  });

  test('proxy-cookie-domain, proxy-cookie-path and proxy-redirect-from/-to rewrite the backend\'s Set-Cookie and Location; another Ingress\'s are untouched', async () => {
    await ingress('rw', H('rw'), {
      [`${N}proxy-redirect-from`]: 'http://internal.local/',
      [`${N}proxy-redirect-to`]: `https://${H('rw')}/app/`,
      [`${N}proxy-cookie-domain`]: `internal.local ${H('rw')}`,
      [`${N}proxy-cookie-path`]: '/ /app',
    });
    await ingress('rw-plain', H('rw-plain'), {});
    const q = `/r?status=302&location=${encodeURIComponent('http://internal.local/next')}&set-cookie=${encodeURIComponent('sid=1; Domain=internal.local; Path=/')}`;
    const rw = await until('rewritten', async () => { const x = await get(H('rw'), q); return x.status === 302 && x.headers.location !== 'http://internal.local/next' && x; });
    assert.equal(rw.headers.location, `https://${H('rw')}/app/next`);
    assert.deepEqual(cookies(rw), [`sid=1; Domain=${H('rw')}; Path=/app`]);
    const plain = await until('plain served', async () => { const x = await get(H('rw-plain'), q); return x.status === 302 && x; });
    assert.equal(plain.headers.location, 'http://internal.local/next');
    assert.deepEqual(cookies(plain), ['sid=1; Domain=internal.local; Path=/']);
  });

  test('mirror-target + mirror-host: the Service behind mirror-target gets a copy (method, URI, that Host, the body); the client gets the main backend\'s answer', async () => {
    await ingress('mirror', H('mirror'), { [`${N}mirror-target`]: `http://shadow.${ns}.svc.cluster.local$request_uri`, [`${N}mirror-host`]: H('copy') });
    const copies = async (marker: string) => (await podRequests(ns, 'shadow-1')).filter((r) => r.path.includes(marker));
    await until('the mirror applied (a copy arrives)', async () => {
      await post(H('mirror'), `/probe?m=probe-${Date.now()}`, 'x');
      return (await podRequests(ns, 'shadow-1')).some((r) => r.path.includes('m=probe-'));
    }, 30_000, 200);
    await settled();
    const body = 'b'.repeat(5000);
    const marker = `on-${RUN}`;
    const r = await post(H('mirror'), `/orders?m=${marker}`, body);
    assert.equal(r.status, 200);
    const seen = r.json<Echo>();
    assert.equal(seen.pod, 'echo-1', 'the main backend answers the client');
    assert.equal(seen.bodyBytes, 5000);
    const [copy] = await until('the copy with its body', async () => { const c = await copies(marker); return c.length === 1 && c[0]!.complete && c; });
    assert.equal(copy!.method, 'POST');
    assert.equal(copy!.path, `/orders?m=${marker}`);
    assert.equal(copy!.headers.host, H('copy'), 'mirror-host');
    assert.equal(copy!.bodyBytes, 5000, 'mirror-request-body defaults to on');
  });

  test('mirror-request-body "off": the copy carries no body (nor its Content-Length) and, without mirror-host, the target\'s Host; the main backend gets the body', async () => {
    await ingress('mirror-nobody', H('mirror-nobody'), { [`${N}mirror-target`]: `http://shadow.${ns}.svc.cluster.local/copied`, [`${N}mirror-request-body`]: 'off' });
    await until('the mirror applied (a copy arrives)', async () => {
      await post(H('mirror-nobody'), `/probe?m=nbprobe-${Date.now()}`, 'x');
      return (await podRequests(ns, 'shadow-1')).some((r) => r.path.includes('m=nbprobe-'));
    }, 30_000, 200);
    await settled();
    const marker = `off-${RUN}`;
    const r = await post(H('mirror-nobody'), `/form?m=${marker}`, 'b'.repeat(5000));
    assert.equal(r.status, 200);
    assert.equal(r.json<Echo>().pod, 'echo-1');
    assert.equal(r.json<Echo>().bodyBytes, 5000, 'the main backend gets the body');
    const copy = await until('the copy', async () => (await podRequests(ns, 'shadow-1')).find((x) => x.path.includes(marker) && x.complete));
    assert.equal(copy.method, 'POST');
    assert.equal(copy.path, `/copied?m=${marker}`, 'a literal path keeps the client\'s query');
    assert.equal(copy.headers.host, `shadow.${ns}.svc.cluster.local`);
    assert.equal(copy.bodyBytes, 0);
    assert.equal(copy.headers['content-length'], undefined);
  });

  test('auth-method and auth-request-redirect: the auth subrequest uses that method, with X-Original-URI, X-Scheme and the templated X-Auth-Request-Redirect; by default GET with the request URI', async () => {
    await ingress('authm', H('authm'), { [`${N}auth-url`]: authUrl('auth'), [`${N}auth-method`]: 'POST', [`${N}auth-request-redirect`]: 'https://$host/after' });
    await ingress('authd', H('authd'), { [`${N}auth-url`]: authUrl('auth') });
    const asked = async (marker: string) => (await podRequests(ns, 'auth-1')).filter((r) => String(r.headers['x-original-url'] ?? '').includes(marker));
    const m = `m-${RUN}`;
    await until('authm served', async () => (await get(H('authm'), `/page?k=${m}`)).status === 200);
    const [s] = (await asked(m)).slice(-1);
    assert.equal(s!.method, 'POST');
    assert.equal(s!.path, '/verify');
    assert.equal(s!.headers['x-original-uri'], `/page?k=${m}`);
    assert.equal(s!.headers['x-scheme'], 'http');
    assert.equal(s!.headers['x-auth-request-redirect'], `https://${H('authm')}/after`);
    assert.equal(s!.headers['x-original-method'], 'GET', 'the client\'s own method');
    const d = `d-${RUN}`;
    await until('authd served', async () => (await get(H('authd'), `/page?k=${d}`)).status === 200);
    const [sd] = (await asked(d)).slice(-1);
    assert.equal(sd!.method, 'GET');
    assert.equal(sd!.headers['x-auth-request-redirect'], `/page?k=${d}`);
    assert.equal(sd!.headers['x-original-uri'], undefined, 'only with auth-method');
  });

  test('auth-always-set-cookie: the auth service\'s Set-Cookie goes with every answer (backend 500/404, auth 401); without it only with 200, 201, 204, 206, 301-304, 307, 308', async () => {
    const url = authUrl('auth', '/verify?set-cookie=authc=1');
    await ingress('always', H('always'), { [`${N}auth-url`]: url, [`${N}auth-always-set-cookie`]: 'true' });
    await ingress('sometimes', H('sometimes'), { [`${N}auth-url`]: url });
    await until('always served', async () => (await get(H('always'), '/')).status === 200);
    await until('sometimes served', async () => (await get(H('sometimes'), '/')).status === 200);
    for (const status of [200, 201, 302]) {
      for (const host of ['always', 'sometimes']) {
        const r = await get(H(host), `/?status=${status}`);
        assert.equal(r.status, status);
        assert.deepEqual(cookies(r), ['authc=1'], `${host}, backend ${status}`);
      }
    }
    for (const status of [404, 500]) {
      const a = await get(H('always'), `/?status=${status}`);
      assert.equal(a.status, status);
      assert.equal(a.json<Echo>().pod, 'echo-1', 'the backend\'s own answer');
      assert.deepEqual(cookies(a), ['authc=1'], `always, backend ${status}`);
      const s = await get(H('sometimes'), `/?status=${status}`);
      assert.equal(s.status, status);
      assert.deepEqual(cookies(s), [], `sometimes, backend ${status}`);
    }
    // The auth service itself refusing (X-Echo-Status goes along on the subrequest): 401 with its cookie only with the annotation.
    const a401 = await get(H('always'), '/', { 'x-echo-status': '401' });
    assert.equal(a401.status, 401);
    assert.deepEqual(cookies(a401), ['authc=1']);
    const s401 = await get(H('sometimes'), '/', { 'x-echo-status': '401' });
    assert.equal(s401.status, 401);
    assert.deepEqual(cookies(s401), []);
  });

  test('auth-keepalive, -requests, -timeout, -share-vars: accepted without a Warning (an invalid value gets one and fails closed); auth subrequests reuse kept-alive connections; no variable is shared (the request still goes to its backend)', async () => {
    await ingress('ka', H('ka'), {
      [`${N}auth-url`]: authUrl('auth-ka'),
      [`${N}auth-keepalive`]: '10',
      [`${N}auth-keepalive-requests`]: '100',
      [`${N}auth-keepalive-timeout`]: '30',
      [`${N}auth-keepalive-share-vars`]: 'true',
    });
    await ingress('ka-bad', H('ka-bad'), { [`${N}auth-url`]: authUrl('auth-ka'), [`${N}auth-keepalive`]: 'lots' });
    const ok = await until('ka served', async () => { const x = await get(H('ka'), '/'); return x.status === 200 && x; });
    // The auth location sets $portico_backend to the auth service: had the subrequest shared the request's variables
    // (ingress-nginx's share-vars "true"), the request itself would have gone there.
    assert.equal(ok.json<Echo>().pod, 'echo-1', 'the backend answered, not the auth service');
    assert.equal((await get(H('ka'), '/', { 'x-echo-status': '401' })).status, 401, 'the auth service still decides');
    const before = (await podRequests(ns, 'auth-ka-1')).length;
    const n = 8;
    for (let i = 0; i < n; i++) assert.equal((await get(H('ka'), `/seq/${i}`)).status, 200);
    const asked = (await podRequests(ns, 'auth-ka-1')).slice(before);
    assert.equal(asked.length, n, 'one auth subrequest per request');
    const ports = new Set(asked.map((r) => r.remotePort));
    assert.ok(ports.size < n, `auth subrequests came from ${ports.size} connections for ${n} requests: ${[...ports].join(', ')}`);
    const bad = await until('a Warning for the invalid auth-keepalive', async () => (await eventsFor('ka-bad')).find((e) => e.type === 'Warning' && e.note.includes('auth-keepalive')));
    assert.match(bad.note, /auth-keepalive/);
    await until('ka-bad fails closed', async () => (await get(H('ka-bad'), '/')).status === 503);
    assert.deepEqual((await eventsFor('ka')).filter((e) => e.type === 'Warning').map((e) => `${e.reason}: ${e.note}`), []);
  });

  for (const change of [true, false]) {
    const svc = change ? 'cof-on' : 'cof-off';
    test(`session-cookie-change-on-failure ${change ? '"true": a request retried on another endpoint gets a new affinity cookie, which then leads straight to that endpoint' : 'default (false): a request retried on another endpoint keeps its affinity cookie (no new one)'}`, async () => {
      await ingress(svc, H(svc), { [`${N}affinity`]: 'cookie', ...(change ? { [`${N}session-cookie-change-on-failure`]: 'true' } : {}) }, { svc });
      // A cookie pinning this client to pod a (new clients are spread over both pods).
      const cookie = await until('a cookie for pod a', async () => {
        const x = await get(H(svc), '/');
        const c = cookies(x)[0];
        return x.status === 200 && x.json<Echo>().pod === `${svc}-a` && c?.startsWith('INGRESSCOOKIE=') && c.split(';')[0];
      });
      for (let i = 0; i < 3; i++) {
        const r = await get(H(svc), '/', { cookie });
        assert.equal(r.json<Echo>().pod, `${svc}-a`, 'pinned to pod a');
        assert.deepEqual(cookies(r), [], 'a returning client gets no new cookie');
      }
      await stopListenerOnly(ns, `${svc}-a`); // refused connections, the endpoint still Ready: nginx retries on pod b
      // The new key is random: several failovers, each must give a cookie of pod b.
      for (let i = 0; i < 6; i++) {
        const r = await get(H(svc), '/', { cookie });
        assert.equal(r.status, 200);
        assert.equal(r.json<Echo>().pod, `${svc}-b`, 'retried on pod b');
        if (!change) {
          assert.deepEqual(cookies(r), [], 'the cookie is kept');
          continue;
        }
        const [c] = cookies(r);
        assert.match(c ?? '', /^INGRESSCOOKIE=[0-9a-f]+; Path=\/; HttpOnly/);
        const renewed = c!.split(';')[0]!;
        assert.notEqual(renewed, cookie);
        const next = await get(H(svc), '/', { cookie: renewed });
        assert.equal(next.json<Echo>().pod, `${svc}-b`);
        assert.deepEqual(cookies(next), [], `the new cookie (${renewed}) names pod b: no retry, no other cookie`);
      }
    });
  }

  test('auth-tls-verify-depth: a client chain deeper below the Secret\'s CA than the depth is refused (400), within it accepted', async () => {
    pki.ca('root').ca('int1', 'root').ca('int2', 'int1');
    pki.client('leaf-root', 'root', 'leaf-root').client('leaf-int1', 'int1', 'leaf-int1').client('leaf-int2', 'int2', 'leaf-int2');
    pki.ca('server-ca').server('server', 'server-ca', [H('depth1'), H('depth2')]);
    await admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'server-tls' }, data: { 'tls.crt': b64(read('server.crt')), 'tls.key': b64(read('server.key')) } } });
    await admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'root-ca' }, data: { 'ca.crt': b64(read('root.crt')) } } });
    await ingress('depth1', H('depth1'), { [`${N}auth-tls-secret`]: 'root-ca', [`${N}auth-tls-verify-depth`]: '1' }, { tls: 'server-tls' });
    await ingress('depth2', H('depth2'), { [`${N}auth-tls-secret`]: 'root-ca', [`${N}auth-tls-verify-depth`]: '2' }, { tls: 'server-tls' });
    await until('depth1 accepts a certificate of the CA itself', async () => (await tlsGet(H('depth1'), 'leaf-root', [])).status === 200);
    await until('depth2 accepts a certificate of the CA itself', async () => (await tlsGet(H('depth2'), 'leaf-root', [])).status === 200);
    const at = async (host: string, leaf: string, chain: string[]) => {
      const r = await tlsGet(H(host), leaf, chain);
      return r.status === 200 ? (JSON.parse(r.body) as Echo).headers['ssl-client-verify'] ?? 'no header' : r.status;
    };
    // ssl_verify_depth as OpenSSL counts it: the number of intermediate CAs between the certificate and a CA of ca.crt.
    assert.equal(await at('depth1', 'leaf-int1', ['int1']), 'SUCCESS', 'depth 1: one intermediate CA');
    assert.equal(await at('depth1', 'leaf-int2', ['int2', 'int1']), 400, 'depth 1: two intermediate CAs are too deep');
    assert.equal(await at('depth2', 'leaf-int2', ['int2', 'int1']), 'SUCCESS', 'depth 2: two intermediate CAs');
  });
});
