// Portico's own CRDs end to end: Routes, Upstreams, Plugins and Consumers through the real apiserver (RBAC on,
// Portico as its ServiceAccount), real nginx and echo pods in network namespaces. Every plugin type with real
// requests, a weighted split within a binomial bound, passive health ejecting a failing pod, status conditions
// with observedGeneration after edits, a missing Plugin failing closed — and not one nginx reload for any of it.
//
// Isolation as in routes-no-reload: an IngressClass and hosts of this run, Portico on its own ports.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until, type Reply } from './harness/http.ts';
import { REPO_ROOT, startPortico, type RunningPortico } from './harness/portico.ts';
import { mkdtempSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import tls from 'node:tls';
import path from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.crd${RUN}.test`;
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const PLURAL = { Route: 'routes', Upstream: 'upstreams', Plugin: 'plugins', Consumer: 'consumers' } as const;
type Kind = keyof typeof PLURAL;
const crdPath = (kind: Kind, name = '') => `/apis/portico.dev/v1alpha1/namespaces/${ns}/${PLURAL[kind]}${name ? `/${name}` : ''}`;
const create = (kind: Kind, name: string, spec: unknown) => admin().request('POST', crdPath(kind), { body: { apiVersion: 'portico.dev/v1alpha1', kind, metadata: { name }, spec } });
const patch = (kind: Kind, name: string, spec: unknown) => admin().request('PATCH', crdPath(kind, name), { contentType: 'application/merge-patch+json', body: { spec } });
const getCr = (kind: Kind, name: string) => admin().request<{ metadata: { generation: number }; status?: { conditions?: { type: string; status: string; reason: string; message: string; observedGeneration: number }[] } }>('GET', crdPath(kind, name));
const secret = (name: string, data: Record<string, string>) =>
  admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', stringData: data } });
const service = (name: string, app: string) =>
  admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
const get = (host: string, path: string, headers?: Record<string, string>, method?: string): Promise<Reply> => request(p.httpPort, host, path, { headers, method });
const reloads = () => p.metric('portico_nginx_reloads_total', { result: 'success' });
const backend = (name: string, weight?: number) => ({ service: { name, port: 80 }, ...(weight !== undefined ? { weight } : {}) });
const condition = async (kind: Kind, name: string, type: string) => (await getCr(kind, name)).status?.conditions?.find((c) => c.type === type);

let reloads0 = 0;

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('crdp');
  const cls = await ownIngressClass('crd');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(53080, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await service('echo', 'echo');
  await service('echo-b', 'echo-b');
  await service('auth', 'auth');
  await service('flaky', 'flaky');
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await addPod(ns, 'echo-b-1', { labels: { app: 'echo-b' } });
  await addPod(ns, 'auth-1', { labels: { app: 'auth' } });
  await addPod(ns, 'flaky-good', { labels: { app: 'flaky' } });
  await addPod(ns, 'flaky-bad', { labels: { app: 'flaky' }, status: 503 });
  // A first Route, so everything after this point is measured from a running configuration.
  await create('Route', 'warmup', { ingressClassName: CLASS, hosts: [H('warmup')], rules: [{ backends: [backend('echo')] }] });
  await until('warmup served', async () => (await get(H('warmup'), '/')).status === 200);
  await until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
  reloads0 = await reloads();
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('Portico CRDs and plugins', () => {
  test('key-auth with a Consumer: 401 without a key, 200 with it; the key is hidden from the backend, the consumer named', async () => {
    await secret('alice-key', { key: 'alice-secret-key-1' });
    await create('Consumer', 'alice', { username: 'alice', credentials: [{ type: 'key-auth', secretRef: { name: 'alice-key' } }] });
    await create('Plugin', 'keys', { type: 'key-auth' });
    await create('Route', 'keyed', { ingressClassName: CLASS, hosts: [H('keyed')], rules: [{ backends: [backend('echo')], plugins: ['keys'] }] });
    await until('key-auth enforced', async () => (await get(H('keyed'), '/')).status === 401);
    assert.equal((await get(H('keyed'), '/', { apikey: 'wrong-key-value' })).status, 401);
    const ok = await until('the key opens it', async () => {
      const r = await get(H('keyed'), '/', { apikey: 'alice-secret-key-1' });
      return r.status === 200 ? r : undefined;
    });
    const seen = ok.json().headers;
    assert.equal(seen['x-consumer-username'], 'alice');
    assert.equal(seen.apikey, undefined, 'the key is not sent upstream');
  });

  test('basic-auth: 401 with WWW-Authenticate, 200 for the Consumer\'s user and password', async () => {
    await secret('bob-basic', { username: 'bob', password: 'b0b-password' });
    await create('Consumer', 'bob', { username: 'bob', credentials: [{ type: 'basic-auth', secretRef: { name: 'bob-basic' } }] });
    await create('Plugin', 'basic', { type: 'basic-auth', config: { realm: 'shop' } });
    await create('Route', 'basic', { ingressClassName: CLASS, hosts: [H('basic')], rules: [{ backends: [backend('echo')], plugins: ['basic'] }] });
    const denied = await until('basic-auth enforced', async () => {
      const r = await get(H('basic'), '/');
      return r.status === 401 ? r : undefined;
    });
    assert.match(String(denied.headers['www-authenticate']), /Basic realm="shop"/);
    const auth = (u: string, pw: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${pw}`).toString('base64')}` });
    assert.equal((await get(H('basic'), '/', auth('bob', 'nope'))).status, 401);
    await until('bob gets in', async () => (await get(H('basic'), '/', auth('bob', 'b0b-password'))).status === 200);
  });

  test('rate-limit: 429 with Retry-After once the burst is spent; config change enforced without reload', async () => {
    await create('Plugin', 'limit', { type: 'rate-limit', config: { requestsPerMinute: 2, burst: 3 } });
    await create('Route', 'limited', { ingressClassName: CLASS, hosts: [H('limited')], rules: [{ backends: [backend('echo')], plugins: ['limit'] }] });
    const limited = await until('limited after the burst', async () => {
      for (let i = 0; i < 10; i++) {
        const r = await get(H('limited'), '/');
        if (r.status === 429) return r;
      }
      return undefined;
    });
    assert.ok(Number(limited.headers['retry-after']) >= 1, `Retry-After: ${limited.headers['retry-after']}`);
    // Raise the limit: enforced from the next requests on.
    await patch('Plugin', 'limit', { config: { requestsPerMinute: null, requestsPerSecond: 1000, burst: 1000 } });
    await until('new limit live', async () => (await get(H('limited'), '/')).status === 200);
    for (let i = 0; i < 20; i++) assert.equal((await get(H('limited'), '/')).status, 200);
  });

  test('ip-restriction: a denied CIDR gets 403, an allowed one passes', async () => {
    await create('Plugin', 'deny-local', { type: 'ip-restriction', config: { deny: ['127.0.0.0/8'] } });
    await create('Plugin', 'allow-local', { type: 'ip-restriction', config: { allow: ['127.0.0.1/32', '2001:db8::/32'] } });
    await create('Route', 'ips', {
      ingressClassName: CLASS,
      hosts: [H('ips')],
      rules: [
        { name: 'denied', matches: [{ path: { value: '/denied' } }], backends: [backend('echo')], plugins: ['deny-local'] },
        { name: 'allowed', matches: [{ path: { value: '/allowed' } }], backends: [backend('echo')], plugins: ['allow-local'] },
      ],
    });
    await until('deny enforced', async () => (await get(H('ips'), '/denied')).status === 403);
    await until('allow passes', async () => (await get(H('ips'), '/allowed')).status === 200);
  });

  test('cors: the preflight is answered by Portico; simple requests get the origin back', async () => {
    await create('Plugin', 'cors', { type: 'cors', config: { allowOrigins: ['https://app.example.com', 'https://*.apps.example.com'], allowHeaders: ['X-Token'], maxAge: 600 } });
    await create('Route', 'cors', { ingressClassName: CLASS, hosts: [H('cors')], rules: [{ backends: [backend('echo')], plugins: ['cors'] }] });
    const pre = await until('preflight answered', async () => {
      const r = await get(H('cors'), '/api', { origin: 'https://app.example.com', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-token' }, 'OPTIONS');
      return r.status === 204 || r.status === 200 ? (r.headers['access-control-allow-origin'] ? r : undefined) : undefined;
    });
    assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.match(String(pre.headers['access-control-allow-methods']), /PUT/);
    assert.match(String(pre.headers['access-control-allow-headers']).toLowerCase(), /x-token/);
    assert.equal(pre.headers['access-control-max-age'], '600');
    assert.equal(pre.headers['x-pod'], undefined, 'the preflight never reached the backend');
    const simple = await get(H('cors'), '/api', { origin: 'https://shop.apps.example.com' });
    assert.equal(simple.status, 200);
    assert.equal(simple.headers['access-control-allow-origin'], 'https://shop.apps.example.com');
    const other = await get(H('cors'), '/api', { origin: 'https://evil.example.net' });
    assert.equal(other.headers['access-control-allow-origin'], undefined, 'an origin not listed gets no CORS headers');
  });

  test('request-headers / response-headers: set and remove seen by the backend and the client', async () => {
    await create('Plugin', 'req-h', { type: 'request-headers', config: { set: [{ name: 'X-Added', value: 'literal $host' }], remove: ['X-Remove-Me'] } });
    await create('Plugin', 'resp-h', { type: 'response-headers', config: { set: [{ name: 'X-Served-By', value: 'portico' }], remove: ['X-Pod'] } });
    await create('Route', 'headers', { ingressClassName: CLASS, hosts: [H('headers')], rules: [{ backends: [backend('echo')], plugins: ['req-h', 'resp-h'] }] });
    const r = await until('headers plugins live', async () => {
      const x = await get(H('headers'), '/', { 'x-remove-me': 'please' });
      return x.status === 200 && x.headers['x-served-by'] ? x : undefined;
    });
    const seen = r.json().headers;
    assert.equal(seen['x-added'], 'literal $host', 'values are literal, never nginx variables');
    assert.equal(seen['x-remove-me'], undefined);
    assert.equal(r.headers['x-pod'], undefined, 'response header removed');
  });

  test('external-auth: the auth service decides (deny → its status, allow → proxied with its headers copied)', async () => {
    await create('Plugin', 'ext', { type: 'external-auth', config: { service: { name: 'auth', port: 80 }, path: '/verify', upstreamHeaders: ['X-Pod'], timeout: '2s' } });
    await create('Route', 'ext', { ingressClassName: CLASS, hosts: [H('ext')], rules: [{ backends: [backend('echo')], plugins: ['ext'] }] });
    const ok = await until('allowed through the auth service', async () => {
      const r = await get(H('ext'), '/x');
      return r.status === 200 && r.json().pod === 'echo-1' ? r : undefined;
    });
    assert.equal(ok.json().headers['x-pod'], 'auth-1', 'a header of the auth answer is copied onto the proxied request');
    assert.equal((await get(H('ext'), '/x', { 'x-echo-status': '403' })).status, 403, 'the auth service said no');
  });

  test('redirect and rewrite: a backend-less rule redirects; a prefix rewrite reaches the backend', async () => {
    await create('Plugin', 'to-https', { type: 'redirect', config: { scheme: 'https', statusCode: 301 } });
    await create('Plugin', 'old-new', { type: 'rewrite', config: { prefix: { from: '/old', to: '/new' } } });
    await create('Route', 'moves', {
      ingressClassName: CLASS,
      hosts: [H('moves')],
      rules: [
        { name: 'redirect', matches: [{ path: { value: '/r' } }], plugins: ['to-https'] },
        { name: 'rewrite', matches: [{ path: { value: '/old' } }], backends: [backend('echo')], plugins: ['old-new'] },
      ],
    });
    const r = await until('redirect live', async () => {
      const x = await get(H('moves'), '/r/page?q=1');
      return x.status === 301 ? x : undefined;
    });
    assert.equal(r.headers.location, `https://${H('moves')}/r/page?q=1`);
    const w = await until('rewrite live', async () => {
      const x = await get(H('moves'), '/old/thing');
      return x.status === 200 ? x : undefined;
    });
    assert.equal(w.json().path, '/new/thing');
  });

  test('weighted split 3:1 within a binomial bound; changing the weight is dynamic', async () => {
    await create('Route', 'split', { ingressClassName: CLASS, hosts: [H('split')], rules: [{ backends: [backend('echo', 3), backend('echo-b', 1)] }] });
    await until('both backends answer', async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 40; i++) seen.add((await get(H('split'), '/')).json().pod);
      return seen.has('echo-1') && seen.has('echo-b-1');
    });
    const N = 400;
    let a = 0;
    for (let i = 0; i < N; i++) if ((await get(H('split'), '/')).json().pod === 'echo-1') a++;
    // Binomial(400, 0.75): mean 300, sd 8.7; 5 sd.
    assert.ok(Math.abs(a - 300) <= 44, `echo got ${a} of ${N}`);
    await patch('Route', 'split', { rules: [{ backends: [backend('echo', 0), backend('echo-b', 1)] }] });
    await until('weight 0 gets nothing', async () => {
      for (let i = 0; i < 30; i++) if ((await get(H('split'), '/')).json().pod !== 'echo-b-1') return false;
      return true;
    });
  });

  test('Upstream passive health: the failing pod is ejected and then no client sees an error', async () => {
    await create('Upstream', 'flaky', { service: { name: 'flaky' }, healthCheck: { passive: { failures: 2, httpStatuses: [503], ejectDuration: '2m' } } });
    await create('Route', 'flaky', { ingressClassName: CLASS, hosts: [H('flaky')], rules: [{ backends: [backend('flaky')] }] });
    await until('both flaky pods reached', async () => {
      const seen = new Set<number>();
      for (let i = 0; i < 20; i++) seen.add((await get(H('flaky'), '/')).status);
      return seen.has(200) && seen.has(503);
    });
    await until('the failing pod is ejected: 30 successes in a row', async () => {
      for (let i = 0; i < 30; i++) if ((await get(H('flaky'), '/')).status !== 200) return false;
      return true;
    });
    let errors = 0;
    for (let i = 0; i < 100; i++) if ((await get(H('flaky'), '/')).status !== 200) errors++;
    assert.equal(errors, 0, 'no client error after ejection');
    // Balancing changed on the Upstream (round robin → EWMA, then consistent hash): data, like the rest.
    await patch('Upstream', 'flaky', { loadBalancer: { algorithm: 'EWMA' } });
    await until('ewma backend live', async () => ((await p.gateway.dynamic.getBackends())[`${ns}_flaky_80`] as { balance?: string } | undefined)?.balance === 'ewma');
    for (let i = 0; i < 20; i++) assert.equal((await get(H('flaky'), '/')).status, 200);
    await patch('Upstream', 'flaky', { loadBalancer: { algorithm: 'ConsistentHash', hashOn: { header: 'X-User' } } });
    await until('chash backend live', async () => ((await p.gateway.dynamic.getBackends())[`${ns}_flaky_80`] as { balance?: string } | undefined)?.balance === 'chash');
  });

  test('status: Accepted/ResolvedRefs/Programmed with observedGeneration; a missing Plugin fails closed (503); invalid Plugin config is reported', async () => {
    await until('Route status written', async () => (await condition('Route', 'keyed', 'Programmed'))?.status === 'True');
    const acc = await condition('Route', 'keyed', 'Accepted');
    assert.equal(acc?.status, 'True');
    assert.equal(acc?.observedGeneration, 1);
    // Edit: a rule naming a Plugin that does not exist.
    await patch('Route', 'keyed', { rules: [{ backends: [backend('echo')], plugins: ['keys', 'no-such-plugin'] }] });
    await until('fails closed', async () => (await get(H('keyed'), '/', { apikey: 'alice-secret-key-1' })).status === 503);
    const rr = await until('ResolvedRefs=False at generation 2', async () => {
      const c = await condition('Route', 'keyed', 'ResolvedRefs');
      return c?.status === 'False' && c.observedGeneration === 2 ? c : undefined;
    });
    assert.match(rr.message, /no-such-plugin/);
    // Invalid config: refused by Portico's schema with the field named.
    await create('Plugin', 'bad-limit', { type: 'rate-limit', config: { requestsPerSecond: 5, requestsPerMinute: 5 } });
    const bad = await until('Plugin Accepted=False', async () => {
      const c = await condition('Plugin', 'bad-limit', 'Accepted');
      return c?.status === 'False' ? c : undefined;
    });
    assert.equal(bad.reason, 'InvalidConfig');
    assert.match(bad.message, /requestsPer/);
    const ev = await until('InvalidConfig event on the Plugin', async () => {
      const l = await admin().request<{ items: { type: string; reason: string; note: string; regarding: { kind: string; name: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return l.items.find((e) => e.regarding.kind === 'Plugin' && e.regarding.name === 'bad-limit' && e.reason === 'InvalidConfig');
    });
    assert.match(ev.note, /spec\.config\.requestsPer/);
    const ok = await condition('Plugin', 'keys', 'Accepted');
    assert.equal(ok?.status, 'True');
  });

  test('a Consumer\'s own plugin replaces the route\'s of the same type (a higher rate limit for one consumer)', async () => {
    await secret('carol-key', { key: 'carol-secret-key-9' });
    await secret('dave-key', { key: 'dave-secret-key-77' });
    await create('Plugin', 'strict', { type: 'rate-limit', config: { requestsPerMinute: 1, burst: 1, by: 'consumer' } });
    await create('Plugin', 'generous', { type: 'rate-limit', config: { requestsPerSecond: 1000, burst: 1000, by: 'consumer' } });
    await create('Consumer', 'carol', { username: 'carol', credentials: [{ type: 'key-auth', secretRef: { name: 'carol-key' } }], plugins: ['generous'] });
    await create('Consumer', 'dave', { username: 'dave', credentials: [{ type: 'key-auth', secretRef: { name: 'dave-key' } }] });
    await create('Route', 'tiered', { ingressClassName: CLASS, hosts: [H('tiered')], rules: [{ backends: [backend('echo')], plugins: ['keys', 'strict'] }] });
    await until('dave is limited by the route\'s plugin', async () => {
      for (let i = 0; i < 4; i++) if ((await get(H('tiered'), '/', { apikey: 'dave-secret-key-77' })).status === 429) return true;
      return false;
    });
    for (let i = 0; i < 10; i++) assert.equal((await get(H('tiered'), '/', { apikey: 'carol-secret-key-9' })).status, 200, 'carol has her own, higher limit');
  });

  test('Route TLS: its Secret\'s certificate is served by SNI', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'portico-crd-tls-'));
    const host = H('secure');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${host}`, '-addext', `subjectAltName=DNS:${host}`,
      '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem')], { stdio: 'ignore' });
    await admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'route-tls' }, type: 'kubernetes.io/tls', data: { 'tls.crt': readFileSync(path.join(dir, 'c.pem')).toString('base64'), 'tls.key': readFileSync(path.join(dir, 'k.pem')).toString('base64') } },
    });
    await create('Route', 'secure', { ingressClassName: CLASS, hosts: [host], tls: [{ hosts: [host], secretName: 'route-tls' }], rules: [{ backends: [backend('echo')] }] });
    const cn = await until('certificate served by SNI', async () => {
      const got = await new Promise<string>((resolve) => {
        const s = tls.connect({ host: '127.0.0.1', port: p.httpsPort, servername: host, rejectUnauthorized: false }, () => {
          const c = String(s.getPeerCertificate().subject?.CN ?? '');
          s.end();
          resolve(c);
        });
        s.on('error', () => resolve(''));
      });
      return got === host ? got : undefined;
    });
    assert.equal(cn, host);
  });

  test('ingress-nginx annotations that are plugins run on the same engine: IP lists (403), CORS preflight, limit-rps (503)', async () => {
    const ingress = (name: string, host: string, annotations: Record<string, string>) =>
      admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
        body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, annotations }, spec: { ingressClassName: CLASS, rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }] } },
      });
    const N = 'nginx.ingress.kubernetes.io/';
    await ingress('ann-deny', H('ann-deny'), { [`${N}whitelist-source-range`]: '198.51.100.0/24' });
    await ingress('ann-allow', H('ann-allow'), { [`${N}whitelist-source-range`]: '127.0.0.1/32, 198.51.100.0/24' });
    await ingress('ann-cors', H('ann-cors'), { [`${N}enable-cors`]: 'true', [`${N}cors-allow-origin`]: 'https://app.example.com' });
    await ingress('ann-limit', H('ann-limit'), { [`${N}limit-rpm`]: '1', [`${N}limit-burst-multiplier`]: '2' });
    await until('allowlist without the client: 403', async () => (await get(H('ann-deny'), '/')).status === 403);
    await until('allowlist with the client: 200', async () => (await get(H('ann-allow'), '/')).status === 200);
    const pre = await until('CORS preflight answered', async () => {
      const r = await get(H('ann-cors'), '/', { origin: 'https://app.example.com', 'access-control-request-method': 'POST' }, 'OPTIONS');
      return r.status === 204 ? r : undefined;
    });
    assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.equal(pre.headers['access-control-allow-credentials'], 'true', "ingress-nginx's default");
    const codes: number[] = [];
    await until('limit-rpm enforced with 503 after the burst', async () => {
      const r = await get(H('ann-limit'), '/');
      codes.push(r.status);
      return r.status === 503;
    });
    assert.ok(codes.filter((c) => c === 200).length >= 1, `some requests passed first: ${codes.join(',')}`);

    // auth-type basic with an htpasswd auth-secret (apr1, htpasswd's default), created after the Ingress: the
    // Ingress fails closed until the Secret is there, then its users get in.
    const apr1 = execFileSync('openssl', ['passwd', '-apr1', 'staff-pass'], { encoding: 'utf8' }).trim();
    await ingress('ann-basic', H('ann-basic'), { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'htpasswd', [`${N}auth-realm`]: 'Staff' });
    await until('fails closed without its Secret', async () => (await get(H('ann-basic'), '/')).status === 503);
    await secret('htpasswd', { auth: `staff:${apr1}\n` });
    const challenge = await until('basic auth enforced once the Secret exists', async () => {
      const r = await get(H('ann-basic'), '/');
      return r.status === 401 ? r : undefined;
    });
    assert.match(String(challenge.headers['www-authenticate']), /Basic realm="Staff"/);
    const basic = (u: string, pw: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${pw}`).toString('base64')}` });
    assert.equal((await get(H('ann-basic'), '/', basic('staff', 'wrong'))).status, 401);
    const ok = await get(H('ann-basic'), '/', basic('staff', 'staff-pass'));
    assert.equal(ok.status, 200);
    assert.ok(ok.json().headers.authorization, 'Authorization goes upstream, as with nginx auth_basic');

    await ingress('ann-moved', H('ann-moved'), { [`${N}permanent-redirect`]: 'https://www.example.com/new-home' });
    const moved = await until('permanent-redirect answers', async () => {
      const r = await get(H('ann-moved'), '/old/page?x=1');
      return r.status === 301 ? r : undefined;
    });
    assert.equal(moved.headers.location, 'https://www.example.com/new-home', 'the URL as given (ingress-nginx: return 301 <url>)');
  });

  test('kubectl get events explains decisions on the CRs: a Route losing a path to an older Ingress is told who won', async () => {
    await admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
      body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'first' }, spec: { ingressClassName: CLASS, rules: [{ host: H('contested'), http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }] } },
    });
    await until('Ingress served', async () => (await get(H('contested'), '/')).status === 200);
    await create('Route', 'second', { ingressClassName: CLASS, hosts: [H('contested')], rules: [{ backends: [backend('echo-b')] }] });
    const ev = await until('Conflict event on the Route', async () => {
      const l = await admin().request<{ items: { type: string; reason: string; note: string; regarding: { kind: string; name: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return l.items.find((e) => e.regarding.kind === 'Route' && e.regarding.name === 'second' && e.reason === 'Conflict');
    });
    assert.equal(ev.type, 'Warning');
    assert.match(ev.note, new RegExp(`already served by Ingress ${ns}/first, which is older`));
    assert.equal((await get(H('contested'), '/')).json().pod, 'echo-1', 'the older Ingress keeps the path');
  });

  test('the ClusterRole\'s portico.dev rules are exactly what Portico used here (least privilege, nothing missing)', async () => {
    const used = new Set(p.client.calls);
    const granted = new Set<string>();
    for (const doc of loadAllYaml(readFileSync(path.join(REPO_ROOT, 'kustomize/rbac.yaml'), 'utf8'))) {
      const o = doc as { kind: string; rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
      for (const r of o.rules ?? []) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) granted.add(`${v} ${g}/${res}`);
    }
    const mine = (x: string) => x.includes(' portico.dev/');
    assert.deepEqual([...used].filter((u) => !granted.has(u)).sort(), [], 'calls the role does not grant');
    assert.deepEqual([...granted].filter((g) => mine(g) && !used.has(g)).sort(), [], 'portico.dev rules the code never used');
  });

  test('zero reloads across every dynamic edit above', async () => {
    await until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
    assert.equal((await reloads()) - reloads0, 0, `reasons: ${JSON.stringify(p.gateway.history.filter((r) => r.reload).map((r) => r.reasons))}`);
  });
});
