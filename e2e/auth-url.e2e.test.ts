// ingress-nginx's external authentication end to end: Ingresses with auth-url and its companions, and the
// ConfigMap's global-auth-url, through the real apiserver (RBAC on, Portico as its ServiceAccount), real nginx and
// echo pods in network namespaces as the auth services: an echo pod answers 200 (or the status a request's
// X-Echo-Status asks for, which the auth subrequest carries along), a denying pod answers 401 to everything.
// auth_request's semantics (2xx passes, 401/403 answered, anything else 500), the sign-in redirect with rd, auth
// response headers copied onto the proxied request, the answer cache, failing closed (503) when the auth service
// does not exist, enable-global-auth — and no nginx reload for any of it.
//
// Isolation as in crd-plugins: an IngressClass and hosts of this run, Portico on its own ports (53380-53383).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace, removePod } from './harness/pods.ts';
import { request, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.authurl${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const service = (name: string, app: string) =>
  admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
const ingress = (name: string, host: string, annotations: Record<string, string>, path = '/') =>
  admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, annotations }, spec: { ingressClassName: CLASS, rules: [{ host, http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }] } },
  });
const configMap = (data: Record<string, string>) => admin().request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data } });
const deleteConfigMap = () => admin().request('DELETE', `/api/v1/namespaces/${ns}/configmaps/portico`);
const get = (host: string, path: string, headers?: Record<string, string>): Promise<Reply> => request(p.httpPort, host, path, { headers });
const reloads = () => p.metric('portico_nginx_reloads_total', { result: 'success' });
const authUrl = (svc: string, path = '/verify') => `http://${svc}.${ns}.svc.cluster.local${path}`;
let reloads0 = 0;

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('authurl');
  const cls = await ownIngressClass('authurl');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(53380, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await service('echo', 'echo');
  await service('auth', 'auth');
  await service('deny', 'deny');
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await addPod(ns, 'auth-1', { labels: { app: 'auth' } });
  await addPod(ns, 'deny-1', { labels: { app: 'deny' }, status: 401 });
  await ingress('warmup', H('warmup'), {});
  await until('warmup served', async () => (await get(H('warmup'), '/')).status === 200);
  await until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
  reloads0 = await reloads();
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('auth-url (ingress-nginx external authentication)', () => {
  test('allowed: the request reaches the backend with auth-response-headers copied from the auth answer (a forged one replaced)', async () => {
    await ingress('allow', H('allow'), { [`${N}auth-url`]: authUrl('auth'), [`${N}auth-response-headers`]: 'X-Pod' });
    const ok = await until('allowed through the auth service', async () => {
      const r = await get(H('allow'), '/doc?x=1', { 'x-pod': 'forged' });
      return r.status === 200 ? r : undefined;
    });
    const seen = ok.json();
    assert.equal(seen.pod, 'echo-1', 'the backend answered');
    assert.equal(seen.headers['x-pod'], 'auth-1', "the auth pod's X-Pod replaces the client's");
    assert.equal(seen.path, '/doc?x=1');
  });

  test('auth_request semantics: 401 and 403 are answered, any other status is 500; the backend is not reached', async () => {
    await ingress('codes', H('codes'), { [`${N}auth-url`]: authUrl('auth') });
    await until('codes served', async () => (await get(H('codes'), '/')).status === 200);
    assert.equal((await get(H('codes'), '/', { 'x-echo-status': '401' })).status, 401);
    assert.equal((await get(H('codes'), '/', { 'x-echo-status': '403' })).status, 403);
    assert.equal((await get(H('codes'), '/', { 'x-echo-status': '500' })).status, 500);
    assert.equal((await get(H('codes'), '/', { 'x-echo-status': '404' })).status, 500);
    // X-Echo-Status reaches the backend too (it answers with that status): a 2xx from the auth service lets the
    // request through, so the backend's own 202 (with its body) comes back.
    const passed = await get(H('codes'), '/', { 'x-echo-status': '202' });
    assert.equal(passed.status, 202, '2xx passes');
    assert.equal(passed.json().pod, 'echo-1', 'the backend answered');
  });

  test('a denying auth service: 401; with auth-signin a 302 to the sign-in URL with rd = the request\'s own URL', async () => {
    await ingress('denied', H('denied'), { [`${N}auth-url`]: authUrl('deny') });
    await until('denied', async () => (await get(H('denied'), '/')).status === 401);
    await ingress('signin', H('signin'), { [`${N}auth-url`]: authUrl('deny'), [`${N}auth-signin`]: 'https://login.example.com/start', [`${N}auth-signin-redirect-param`]: 'next' });
    const r = await until('sign-in redirect', async () => {
      const x = await get(H('signin'), '/private?a=1');
      return x.status === 302 ? x : undefined;
    });
    assert.equal(r.headers.location, `https://login.example.com/start?next=http://${H('signin')}%2Fprivate%3Fa%3D1`);
  });

  test('auth-cache-key: a cached allow is reused (the auth service is not asked again for the same credentials)', async () => {
    // A dedicated auth service, taken away after the first answer: only the cache can then allow.
    await service('auth-cache', 'auth-cache');
    await addPod(ns, 'auth-cache-1', { labels: { app: 'auth-cache' } });
    await ingress('cached', H('cached'), { [`${N}auth-url`]: authUrl('auth-cache'), [`${N}auth-cache-key`]: '$http_authorization', [`${N}auth-cache-duration`]: '200 5m' });
    await until('cached served', async () => (await get(H('cached'), '/', { authorization: 'Bearer alice' })).status === 200);
    await removePod(ns, 'auth-cache-1');
    await until('the auth service is gone (uncached credentials get 500)', async () => (await get(H('cached'), '/', { authorization: `Bearer other-${Date.now()}` })).status >= 500);
    assert.equal((await get(H('cached'), '/', { authorization: 'Bearer alice' })).status, 200, 'answered from the cache');
    assert.ok((await get(H('cached'), '/', { authorization: 'Bearer bob' })).status >= 500, 'other credentials still ask the (gone) auth service');
  });

  test('fails closed: an auth-url naming a Service that does not exist answers 503 with a Warning, never the backend', async () => {
    await ingress('missing', H('missing'), { [`${N}auth-url`]: authUrl('nothere') });
    await until('503', async () => (await get(H('missing'), '/')).status === 503);
    await until('a Warning event names the missing Service', async () => {
      const ev = await admin().request<{ items: { reason: string; note?: string; message?: string; regarding?: { name?: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return ev.items.some((e) => e.regarding?.name === 'missing' && /nothere/.test(e.note ?? e.message ?? ''));
    });
  });

  test('auth-proxy-set-headers: the ConfigMap\'s headers reach the auth service; a change applies at once', async () => {
    // The echo auth pod answers with the status its request's X-Echo-Status asks for: set it through the ConfigMap.
    const cm = (status: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'auth-headers' }, data: { 'X-Echo-Status': status } });
    await admin().request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm('403') });
    await ingress('proxyhdr', H('proxyhdr'), { [`${N}auth-url`]: authUrl('auth'), [`${N}auth-proxy-set-headers`]: 'auth-headers' });
    await until('the auth service saw X-Echo-Status: 403', async () => (await get(H('proxyhdr'), '/')).status === 403);
    await admin().request('PUT', `/api/v1/namespaces/${ns}/configmaps/auth-headers`, { body: cm('200') });
    await until('the changed header applies', async () => (await get(H('proxyhdr'), '/')).status === 200);
    assert.equal((await get(H('proxyhdr'), '/')).json().pod, 'echo-1');
  });

  test('auth annotations are data: none of the above reloaded nginx', async () => {
    assert.equal(await reloads(), reloads0);
  });

  test('global-auth-url: every Ingress without its own auth-url is authenticated, unless enable-global-auth: "false"', async () => {
    await ingress('plain', H('plain'), {});
    await ingress('optout', H('optout'), { [`${N}enable-global-auth`]: 'false' });
    await until('plain served before global auth', async () => (await get(H('plain'), '/')).status === 200);
    await configMap({ 'global-auth-url': authUrl('deny'), 'no-auth-locations': '/.well-known/acme-challenge' });
    await until('global auth enforced', async () => (await get(H('plain'), '/')).status === 401);
    assert.equal((await get(H('optout'), '/')).status, 200, 'opted out');
    assert.equal((await get(H('allow'), '/')).status, 200, 'its own auth-url wins over the global one');
    await deleteConfigMap();
    await until('global auth gone with the ConfigMap', async () => (await get(H('plain'), '/')).status === 200);
  });
});
