// The ConfigMap's global access lists end to end (ingress-nginx's whitelist-source-range, denylist-source-range,
// block-cidrs, block-user-agents, block-referers): real apiserver, real nginx, an echo pod as the backend, requests
// from loopback (client 127.0.0.1). Each key through a real ConfigMap change: allowed vs 403, the Ingress's own
// annotation replacing the global list, and an invalid value failing closed (503) with a Warning on the ConfigMap.
//
// Isolation as in auth-url: an IngressClass, namespace and hosts of this run, Portico on its own ports (53980-53983).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { eventsAbout } from './harness/objects.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.gacc${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const KEYS = ['whitelist-source-range', 'denylist-source-range', 'block-cidrs', 'block-user-agents', 'block-referers'];
const ingress = (name: string, host: string, annotations: Record<string, string> = {}) =>
  admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, annotations }, spec: { ingressClassName: CLASS, rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }] } },
  });
/** Sets exactly these of the five keys (the others removed). */
const setKeys = (data: Record<string, string>) =>
  admin().request('PATCH', `/api/v1/namespaces/${ns}/configmaps/portico`, { contentType: 'application/merge-patch+json', body: { data: Object.fromEntries(KEYS.map((k) => [k, data[k] ?? null])) } });
const get = (host: string, headers?: Record<string, string>): Promise<Reply> => request(p.httpPort, host, '/', { headers });
const statusOf = async (host: string, headers?: Record<string, string>) => (await get(host, headers)).status;

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('gacc');
  const cls = await ownIngressClass('gacc');
  CLASS = cls.name;
  removeClass = cls.remove;
  await admin().request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: {} } });
  p = await startPortico(53980, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo' }, spec: { selector: { app: 'echo' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await ingress('plain', H('plain'));
  await ingress('own', H('own'), { [`${N}whitelist-source-range`]: '127.0.0.0/8', [`${N}denylist-source-range`]: '192.0.2.0/24' });
  await until('served', async () => (await statusOf(H('plain'))) === 200 && (await statusOf(H('own'))) === 200);
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('ConfigMap global access lists', () => {
  test('whitelist-source-range: a client outside it gets 403 on every path without its own allowlist; inside it, 200', async () => {
    await setKeys({ 'whitelist-source-range': '192.0.2.0/24, 2001:db8::/32' });
    await until('127.0.0.1 is not allowed', async () => (await statusOf(H('plain'))) === 403);
    assert.equal(await statusOf(H('own')), 200, 'the Ingress\'s own allowlist replaces the global one');
    await setKeys({ 'whitelist-source-range': '192.0.2.0/24,127.0.0.1' });
    await until('127.0.0.1 allowed', async () => (await statusOf(H('plain'))) === 200);
  });

  test('denylist-source-range: a client in it gets 403 unless the Ingress has its own denylist', async () => {
    await setKeys({ 'denylist-source-range': '127.0.0.0/8' });
    await until('127.0.0.1 denied', async () => (await statusOf(H('plain'))) === 403);
    assert.equal(await statusOf(H('own')), 200, 'the Ingress\'s own denylist replaces the global one');
  });

  test('block-cidrs, block-user-agents, block-referers: 403 on every request that matches, before routing; others served', async () => {
    await setKeys({ 'block-cidrs': '127.0.0.1/32' });
    // (The previous test's denylist also answers 403 on "plain": wait for "own", which it never covered.)
    await until('127.0.0.1 blocked, also where the Ingress has its own lists', async () => (await statusOf(H('own'))) === 403);
    assert.equal(await statusOf(H('plain')), 403);
    assert.equal(await statusOf(H('nosuchhost')), 403, 'before routing: even an unknown host');
    await setKeys({ 'block-cidrs': '192.0.2.0/24', 'block-user-agents': 'EvilBot/1.0,~*crawl(er|ing)', 'block-referers': '~*spam\\.example' });
    await until('127.0.0.1 no longer blocked', async () => (await statusOf(H('plain'))) === 200);
    assert.equal(await statusOf(H('plain'), { 'user-agent': 'EvilBot/1.0' }), 403, 'exact user agent');
    assert.equal(await statusOf(H('plain'), { 'user-agent': 'Mozilla/5.0 (compatible; SuperCRAWLER)' }), 403, '~* regex');
    assert.equal(await statusOf(H('plain'), { 'user-agent': 'EvilBot/1.01' }), 200, 'an exact string is not a prefix');
    assert.equal(await statusOf(H('plain'), { referer: 'https://www.SPAM.example/x' }), 403, 'referer regex');
    assert.equal(await statusOf(H('plain'), { referer: 'https://ok.example/', 'user-agent': 'curl/8' }), 200);
  });

  test('an invalid value fails closed (503) with an InvalidConfiguration Warning on the ConfigMap; fixing it restores service', async () => {
    await setKeys({ 'whitelist-source-range': '127.0.0.1,300.0.0.1' });
    await until('paths under the invalid allowlist answer 503', async () => (await statusOf(H('plain'))) === 503);
    assert.equal(await statusOf(H('own')), 200, 'an Ingress with its own allowlist is not governed by it');
    await until('Warning on the ConfigMap', async () => (await eventsAbout(ns, 'ConfigMap', 'portico')).some((e) => e.type === 'Warning' && /whitelist-source-range=.*300\.0\.0\.1.*failing closed/.test(e.note)));
    await setKeys({ 'block-user-agents': '~*(?<=x)bot' });
    await until('every request answers 503', async () => (await statusOf(H('plain'))) === 503 && (await statusOf(H('own'))) === 503);
    await setKeys({});
    await until('served again', async () => (await statusOf(H('plain'))) === 200 && (await statusOf(H('own'))) === 200);
  });
});
