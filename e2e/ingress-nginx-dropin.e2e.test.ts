// Proof of unchanged (issue 21): a realistic ingress-nginx setup — the files under e2e/testdata/dropin/, written as
// a team running ingress-nginx v1.12+ with snippets would have them: the controller's ConfigMap with its common keys,
// the chart's TCP services ConfigMap, 26 Ingresses of class "nginx" with the most used annotations, their Services
// and Secrets — applied with `kubectl apply -f` as they are, no line edited. Portico runs with the arguments the
// ingress-nginx Helm chart passes (controller class, class, ConfigMap, TCP services, publish-service, election id,
// default backend) and every request is answered as ingress-nginx documents it: status, Location, headers, and which
// backend pod answered. `portico migrate` on the same files reports every Ingress ready to move as is (exit 0).
//
// The pods behind the Services are the harness's echo pods (labelled as the Services select), except oauth2-proxy:
// the real one (e2e/oauth2-proxy/build.sh, v7.15.6 from its Go module, nothing patched) listens on its pod's address
// in the harness's pod network namespace and signs users in from an htpasswd file (no identity provider is ever
// contacted; the Google provider it is configured with only names where /oauth2/start redirects).
//
// Where Portico answers differently from ingress-nginx, the test says so by name (DIFFERENCE below) and asserts what
// Portico does, so the difference stays visible.
//
// Namespace "dropin" and IngressClass "nginx" are the fixtures' own (no other suite uses either); a leftover of an
// interrupted run is removed first. Ports: Portico 54880-54883, the TCP service 54886.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { admin, ensureCluster, kubectl, ROOT } from './harness/cluster.ts';
import { addPod, deleteNamespace, stopListenerOnly } from './harness/pods.ts';
import { request, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { tcp } from '../reconcilers/nginx-driver/nginx/stream-client.test-helpers.ts';
import { isNotFound } from '../operator/kube/client.ts';

const BASE = 54880;
const TCP_PORT = 54886;
const NS = 'dropin';
const FIXTURES = path.join(ROOT, 'e2e/testdata/dropin');
const RUN = Date.now().toString(36);
let p: RunningPortico;
let oauth2: ChildProcess | undefined;
const oauth2Log: string[] = [];
const tmp = mkdtempSync(path.join(tmpdir(), 'portico-dropin-'));
const POD_NETNS = 'portico-pods'; // e2e/controlplane/env.sh NETNS
const HOST_VETH = '198.19.255.1'; // the root namespace's end of the pod network (env.sh HOST_ADDR): nginx's source address

type Seen = { pod: string; path: string; host: string; headers: Record<string, string>; tls?: { protocol: string } };
const get = (host: string, p0: string, headers: Record<string, string> = {}, o: { method?: string; body?: Buffer } = {}): Promise<Reply> =>
  request(p.httpPort, host, p0, { headers, method: o.method, body: o.body });
const pod = async (host: string, p0 = '/', headers: Record<string, string> = {}) => (await get(host, p0, headers)).json<Seen>().pod;

interface HttpsReply { status: number; headers: IncomingHttpHeaders; body: string; json(): Seen }
/** One HTTPS request to Portico with the TLS server name and Host `host` (the test's certificate is not checked). */
function secure(host: string, p0: string, headers: Record<string, string> = {}, o: { method?: string; body?: Buffer } = {}): Promise<HttpsReply> {
  return new Promise((resolve) => {
    const req = https.request({ host: '127.0.0.1', port: p.httpsPort, servername: host, path: p0, method: o.method ?? 'GET', headers: { host, ...headers }, rejectUnauthorized: false, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) as Seen });
      });
    });
    req.on('error', (e) => resolve({ status: 0, headers: {}, body: String(e), json: () => { throw e; } }));
    req.end(o.body);
  });
}

/** The Ingresses of the fixtures (every document of kind Ingress). */
const fixtureIngresses = (): string[] =>
  [...execFileSync('grep', ['-h', '-A3', '^kind: Ingress$', '-r', FIXTURES], { encoding: 'utf8' }).matchAll(/^ {2}name: (\S+)$/gm)].map((m) => m[1] as string).sort();

before(async () => {
  await ensureCluster();
  await deleteNamespace(NS, { forget: true }); // a leftover of an interrupted (or the previous) run
  kubectl(['apply', '-f', FIXTURES]);
  // The pods behind the fixtures' Services.
  const plain = ['web', 'api', 'api-v2', 'checkout', 'checkout-v2', 'search', 'search-v2', 'legacy', 'docs', 'reports', 'uploads', 'cors-api', 'staff', 'dashboard', 'snippets', 'ratelimited', 'error-pages', 'admin', 'status'];
  for (const app of plain) await addPod(NS, `${app}-1`, { labels: { app } });
  for (const app of ['sticky', 'hashed']) for (const i of [1, 2]) await addPod(NS, `${app}-${i}`, { labels: { app } });
  // oauth2-proxy-1: the pod's address, with the real oauth2-proxy listening on it instead of the echo backend.
  const oauth2Ip = await addPod(NS, 'oauth2-proxy-1', { labels: { app: 'oauth2-proxy' } });
  await stopListenerOnly(NS, 'oauth2-proxy-1');
  execFileSync('bash', [path.join(ROOT, 'e2e/oauth2-proxy/build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bin = execFileSync('bash', [path.join(ROOT, 'e2e/oauth2-proxy/build.sh'), 'path'], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(tmp, 'htpasswd'), `alice:{SHA}${createHash('sha1').update('wonderland').digest('base64')}\n`);
  oauth2 = spawn('ip', ['netns', 'exec', POD_NETNS, bin,
    `--http-address=${oauth2Ip}:8080`, '--provider=google', '--client-id=portico-dropin', '--client-secret=never-used',
    '--cookie-secret=0123456789abcdef0123456789abcdef', '--cookie-secure=false', '--email-domain=*', `--htpasswd-file=${path.join(tmp, 'htpasswd')}`,
    '--upstream=static://202', '--set-xauthrequest', '--reverse-proxy', `--trusted-proxy-ip=${HOST_VETH}/32`], { stdio: ['ignore', 'pipe', 'pipe'] });
  for (const out of [oauth2.stdout, oauth2.stderr]) out?.on('data', (c: Buffer) => oauth2Log.push(...c.toString().split('\n').filter(Boolean)));
  await addPod(NS, 'flaky-1', { labels: { app: 'flaky' }, status: 503 });
  await addPod(NS, 'default-backend-1', { labels: { 'app.kubernetes.io/component': 'default-backend' }, status: 404 });
  await addPod(NS, 'postgres-1', { labels: { app: 'postgres' }, tcpPort: 5432 });
  const secret = JSON.parse(kubectl(['get', 'secret', '-n', NS, 'shop-tls', '-o', 'json'])) as { data: Record<string, string> };
  const pem = (k: string) => Buffer.from(secret.data[k] as string, 'base64').toString('utf8');
  await addPod(NS, 'secure-1', { labels: { app: 'secure' }, port: 8443, tls: { cert: pem('tls.crt'), key: pem('tls.key') } });
  // The ingress-nginx chart's arguments (controller.ingressClassResource defaults, tcp: values, defaultBackend.enabled).
  p = await startPortico(BASE, [
    '--controller-class', 'k8s.io/ingress-nginx',
    '--ingress-class', 'nginx',
    '--configmap', `${NS}/ingress-nginx-controller`,
    '--tcp-services-configmap', `${NS}/ingress-nginx-tcp`,
    '--publish-service', `${NS}/ingress-nginx-controller`,
    '--election-id', 'ingress-nginx-leader',
    '--default-backend-service', `${NS}/ingress-nginx-defaultbackend`,
  ]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200, 60_000);
  // Every backend has its endpoint before the assertions start.
  const hosts: [string, string][] = [['checkout.example.com', 'checkout-v2-1'], ['search.example.com', 'search-1'], ['corp.example.com', 'web-1'], ['reports.example.com', 'reports-1'],
    ['uploads.example.com', 'uploads-1'], ['api.example.com', 'cors-api-1'], ['www.example.com', 'snippets-1'], ['rates.example.com', 'ratelimited-1'], ['legacy.example.com', 'legacy-1']];
  for (const [host, want] of hosts) await until(`${host} served by ${want}`, async () => (await get(host, host === 'legacy.example.com' ? '/app1' : '/')).json<Seen>().pod === want, 60_000);
  await until('shop served over HTTPS', async () => (await secure('shop.example.com', '/')).status === 200, 30_000);
  await until('oauth2-proxy answers through Portico', async () => (await get('dashboard.example.com', '/oauth2/auth')).status === 401, 30_000)
    .catch((e: unknown) => { throw new Error(`${String(e)}\noauth2-proxy:\n${oauth2Log.slice(-20).join('\n')}`); });
});

after(async () => {
  oauth2?.kill();
  rmSync(tmp, { recursive: true, force: true });
  await p?.stop();
  await deleteNamespace(NS, { forget: true });
  try {
    await admin().request('DELETE', '/apis/networking.k8s.io/v1/ingressclasses/nginx');
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
});

describe('an ingress-nginx setup applied as is', () => {
  test('portico migrate on the same files: every Ingress and the ConfigMap move as is (exit 0)', () => {
    // execFileSync throws on a non-zero exit: 0 is "everything can move as-is".
    const out = execFileSync(process.execPath, [path.join(ROOT, 'app/main.ts'), 'migrate', '-f', FIXTURES, '-o', 'json'], { encoding: 'utf8' });
    const r = JSON.parse(out) as { ingresses: { name: string; verdict: string; issues: unknown[]; annotations: { status: string }[] }[]; configMap: { keys: { status: string }[] } | null };
    assert.deepEqual(r.ingresses.map((i) => i.name).sort(), fixtureIngresses());
    assert.ok(r.ingresses.length >= 20, `${r.ingresses.length} Ingresses`);
    assert.deepEqual(r.ingresses.filter((i) => i.verdict !== 'ready').map((i) => `${i.name}: ${JSON.stringify(i.issues)}`), []);
    assert.deepEqual(r.ingresses.flatMap((i) => i.annotations.filter((a) => a.status === 'refused' || a.status === 'unknown')), []);
  });

  test('status: every Ingress publishes the --publish-service Service\'s address (its cluster IP)', async () => {
    const svc = await admin().request<{ spec: { clusterIP: string } }>('GET', `/api/v1/namespaces/${NS}/services/ingress-nginx-controller`);
    for (const name of fixtureIngresses()) {
      await until(`${name} status`, async () => {
        const ing = await admin().request<{ status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }>('GET', `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses/${name}`);
        return JSON.stringify(ing.status?.loadBalancer?.ingress ?? []) === JSON.stringify([{ ip: svc.spec.clusterIP }]);
      }, 60_000, 200); // the first status write waits for the leader Lease
    }
  });

  test('ssl-redirect (ConfigMap) and HSTS: HTTP gets 308 to HTTPS; HTTPS is served with Strict-Transport-Security', async () => {
    const r = await get('shop.example.com', '/cart?item=7');
    assert.equal(r.status, 308);
    assert.equal(r.headers.location, 'https://shop.example.com/cart?item=7');
    const s = await secure('shop.example.com', '/cart?item=7');
    assert.equal(s.status, 200);
    assert.equal(s.json().pod, 'web-1');
    assert.equal(s.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
    assert.equal(r.headers['strict-transport-security'], undefined, 'not on plain HTTP');
    // DIFFERENCE: server-tokens "false" makes ingress-nginx remove the Server header (more_clear_headers Server);
    // Portico's nginx has no headers-more module and only drops the version.
    assert.equal(s.headers.server, 'nginx');
  });

  test('use-forwarded-headers: X-Forwarded-Proto https from the trusted load balancer is not redirected', async () => {
    const r = await get('shop.example.com', '/cart', { 'x-forwarded-proto': 'https' });
    assert.equal(r.status, 200);
    assert.equal(r.json<Seen>().pod, 'web-1');
    assert.equal(r.json<Seen>().headers['x-forwarded-proto'], 'https');
  });

  test('ssl-redirect "false" on one path: /healthz answers over plain HTTP', async () => {
    const r = await get('shop.example.com', '/healthz');
    assert.equal(r.status, 200);
    assert.equal(r.json<Seen>().pod, 'web-1');
  });

  test('force-ssl-redirect on a host without a tls section: 308 to HTTPS', async () => {
    const r = await until('status.example.com redirected', async () => { const x = await get('status.example.com', '/incidents?open=1'); return x.status === 308 && x; });
    assert.equal(r.headers.location, 'https://status.example.com/incidents?open=1');
  });

  test('rewrite-target with use-regex: /api(/|$)(.*) reaches the API as /$2; a canary chosen by header gets the same rewrite', async () => {
    const main = await secure('shop.example.com', '/api/v1/items?page=2');
    assert.equal(main.status, 200);
    assert.deepEqual([main.json().pod, main.json().path], ['api-1', '/v1/items?page=2']);
    const bare = await secure('shop.example.com', '/api');
    assert.deepEqual([bare.json().pod, bare.json().path], ['api-1', '/']);
    const canary = await secure('shop.example.com', '/api/v1/items?page=2', { 'x-canary': 'always' });
    assert.deepEqual([canary.json().pod, canary.json().path], ['api-v2-1', '/v1/items?page=2']);
    assert.equal((await secure('shop.example.com', '/api/v1/items', { 'x-canary': 'never' })).json().pod, 'api-1');
    assert.equal((await secure('shop.example.com', '/apiary')).json().pod, 'web-1', '/apiary is not /api(/|$)');
  });

  test('canary by weight (100 and 0) with canary-by-cookie overriding it, every request', async () => {
    for (let i = 0; i < 20; i++) {
      assert.equal(await pod('checkout.example.com'), 'checkout-v2-1', 'weight 100: always the canary');
      assert.equal(await pod('checkout.example.com', '/', { cookie: 'checkout_canary=never' }), 'checkout-1', 'cookie "never": the main Service');
      assert.equal(await pod('search.example.com'), 'search-1', 'weight 0: never the canary');
      assert.equal(await pod('search.example.com', '/', { cookie: 'search_canary=always' }), 'search-v2-1', 'cookie "always": the canary');
    }
  });

  test('backend-protocol HTTPS: the request reaches the pod over TLS; HTTP to the TLS host is redirected', async () => {
    const r = await until('secure backend', async () => { const x = await secure('secure.example.com', '/orders'); return x.status === 200 && x; });
    assert.equal(r.json().pod, 'secure-1');
    assert.match(r.json().tls?.protocol ?? '', /^TLSv1\.[23]$/);
    assert.equal((await get('secure.example.com', '/orders')).status, 308);
  });

  test('proxy-body-size: the annotation (1m) and the ConfigMap (8m) limit request bodies with 413', async () => {
    const mb = (n: number) => Buffer.alloc(Math.round(n * 1024 * 1024), 'x');
    const small = await get('uploads.example.com', '/files', {}, { method: 'POST', body: mb(0.5) });
    assert.deepEqual([small.status, small.json<Seen>().pod], [200, 'uploads-1']);
    assert.equal((await get('uploads.example.com', '/files', {}, { method: 'POST', body: mb(2) })).status, 413);
    const two = await secure('shop.example.com', '/cart', {}, { method: 'POST', body: mb(2) });
    assert.deepEqual([two.status, two.json().pod], [200, 'web-1'], '2 MiB is under the ConfigMap\'s 8m');
    assert.equal((await secure('shop.example.com', '/cart', {}, { method: 'POST', body: mb(9) })).status, 413);
  });

  test('proxy-read-timeout "2": a backend answering after 3 s gets 504, one answering at once 200', async () => {
    assert.equal((await get('reports.example.com', '/monthly?delay=50')).status, 200);
    const t0 = Date.now();
    const slow = await get('reports.example.com', '/monthly?delay=3000', {}, {});
    assert.equal(slow.status, 504);
    assert.ok(Date.now() - t0 >= 1900, `answered after ${Date.now() - t0} ms`);
  });

  test('enable-cors with cors-allow-origin: the preflight is answered 204, the allowed origin gets the CORS headers, another origin none', async () => {
    const pre = await get('api.example.com', '/cart', { origin: 'https://shop.example.com', 'access-control-request-method': 'POST' }, { method: 'OPTIONS' });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'https://shop.example.com');
    assert.equal(pre.headers['access-control-allow-methods'], 'GET, PUT, POST, DELETE, PATCH, OPTIONS');
    assert.equal(pre.headers['access-control-allow-credentials'], 'true');
    assert.equal(pre.headers['access-control-max-age'], '1728000');
    const r = await get('api.example.com', '/cart', { origin: 'https://shop.example.com' });
    assert.deepEqual([r.status, r.json<Seen>().pod, r.headers['access-control-allow-origin']], [200, 'cors-api-1', 'https://shop.example.com']);
    const other = await get('api.example.com', '/cart', { origin: 'https://evil.example.net' });
    assert.deepEqual([other.status, other.headers['access-control-allow-origin']], [200, undefined]);
  });

  test('auth-type basic with auth-secret: 401 with the realm, then the staff user gets in', async () => {
    const basic = (u: string, pw: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${pw}`).toString('base64')}` });
    const none = await until('basic auth in force', async () => { const x = await get('staff.example.com', '/'); return x.status === 401 && x; });
    assert.equal(none.headers['www-authenticate'], 'Basic realm="Staff only"');
    assert.equal((await get('staff.example.com', '/', basic('staff', 'wrong'))).status, 401);
    const ok = await get('staff.example.com', '/rota', basic('staff', 's3cret-staff'));
    assert.deepEqual([ok.status, ok.json<Seen>().pod], [200, 'staff-1']);
  });

  test('auth-url / auth-signin on $host with the real oauth2-proxy: signed out → 302 to /oauth2/start with rd; signed in → the dashboard with oauth2-proxy\'s user', async () => {
    const out = await get('dashboard.example.com', '/reports?q=1');
    assert.equal(out.status, 302);
    assert.equal(out.headers.location, 'https://dashboard.example.com/oauth2/start?rd=%2Freports%3Fq%3D1');
    // /oauth2 is oauth2-proxy's own Ingress, not authenticated: /oauth2/start sends the browser to the provider.
    const start = await get('dashboard.example.com', '/oauth2/start?rd=%2Freports');
    assert.equal(start.status, 302);
    assert.match(String(start.headers.location), /^https:\/\/accounts\.google\.com\/o\/oauth2\/auth\?.*redirect_uri=http%3A%2F%2Fdashboard\.example\.com%2Foauth2%2Fcallback/);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const signIn = await get('dashboard.example.com', '/oauth2/sign_in', form, { method: 'POST', body: Buffer.from('username=alice&password=wonderland&rd=%2Freports') });
    assert.equal(signIn.status, 302, signIn.body);
    assert.equal(signIn.headers.location, '/reports');
    const cookie = (signIn.headers['set-cookie'] ?? []).find((c) => c.startsWith('_oauth2_proxy='))?.split(';')[0];
    assert.ok(cookie, 'oauth2-proxy set its session cookie');
    const inside = await get('dashboard.example.com', '/reports?q=1', { cookie, 'x-auth-request-user': 'mallory' });
    assert.equal(inside.status, 200);
    const seen = inside.json<Seen>();
    assert.deepEqual([seen.pod, seen.path, seen.headers['x-auth-request-user']], ['dashboard-1', '/reports?q=1', 'alice'], 'auth-response-headers: oauth2-proxy\'s user replaces a forged one');
    assert.equal((await get('dashboard.example.com', '/reports', { cookie: '_oauth2_proxy=forged' })).status, 302, 'a forged session is signed out');
  });

  test('whitelist-source-range with use-forwarded-headers / proxy-real-ip-cidr: the client address is the trusted X-Forwarded-For', async () => {
    const office = await get('admin.example.com', '/', { 'x-forwarded-for': '10.1.2.3' });
    assert.deepEqual([office.status, office.json<Seen>().pod], [200, 'admin-1']);
    assert.equal(office.json<Seen>().headers['x-real-ip'], '10.1.2.3');
    assert.equal((await get('admin.example.com', '/', { 'x-forwarded-for': '203.0.113.9' })).status, 403);
    assert.equal((await get('admin.example.com', '/')).status, 403, 'the load balancer itself (127.0.0.1) is not in 10.0.0.0/8');
  });

  test('limit-rps "2": burst 10 (limit-burst-multiplier 5), then the ConfigMap\'s limit-req-status-code 429', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 25; i++) codes.push((await get('rates.example.com', '/', { 'x-forwarded-for': '10.7.0.1' })).status);
    assert.deepEqual(codes.slice(0, 11), Array(11).fill(200), `the first request and a burst of 10 pass: ${codes.join(',')}`);
    assert.deepEqual([...new Set(codes)].sort(), [200, 429], codes.join(','));
    assert.ok(codes.filter((c) => c === 200).length <= 14, `about 2/s after the burst: ${codes.join(',')}`);
    assert.equal((await get('rates.example.com', '/', { 'x-forwarded-for': '10.7.1.1' })).status, 200, 'per client address');
  });

  test('app-root: / answers 302 to /app1 on the same host', async () => {
    const r = await get('legacy.example.com', '/');
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, 'http://legacy.example.com/app1');
    assert.equal(await pod('legacy.example.com', '/app1/login'), 'legacy-1');
  });

  test('permanent-redirect: every request answered 301 to the URL as written', async () => {
    const r = await get('blog-old.example.com', '/2019/05/hello?ref=x');
    assert.equal(r.status, 301);
    assert.equal(r.headers.location, 'https://blog.example.com/');
  });

  test('from-to-www-redirect: www.corp.example.com answers 308 to corp.example.com with the request URI', async () => {
    const r = await until('www redirect', async () => { const x = await get('www.corp.example.com', '/about?lang=en'); return x.status === 308 && x; });
    // DIFFERENCE: ingress-nginx writes the port the request came in on into the Location (ngx_srv_redirect.lua:
    // "http://corp.example.com:<port>/about?lang=en", ":80" on a standard install); Portico writes no port.
    assert.equal(r.headers.location, 'http://corp.example.com/about?lang=en');
    assert.equal(await pod('corp.example.com', '/about'), 'web-1');
  });

  test('x-forwarded-prefix with a rewrite: the docs application sees /guide/intro and X-Forwarded-Prefix /docs', async () => {
    const r = await get('docs.example.com', '/docs/guide/intro');
    assert.equal(r.status, 200);
    const seen = r.json<Seen>();
    assert.deepEqual([seen.pod, seen.path, seen.headers['x-forwarded-prefix']], ['docs-1', '/guide/intro', '/docs']);
  });

  test('configuration-snippet (more_set_headers, add_header, proxy_set_header) and server-snippet (if … return 403)', async () => {
    const r = await get('www.example.com', '/products');
    assert.equal(r.status, 200);
    assert.equal(r.json<Seen>().pod, 'snippets-1');
    assert.equal(r.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.json<Seen>().headers['x-tenant'], 'shop');
    assert.equal((await get('www.example.com', '/internal/metrics')).status, 403);
    assert.equal((await get('www.example.com', '/INTERNAL')).status, 403, '~* is case-insensitive');
  });

  test('affinity cookie: the first answer sets "route" (Max-Age 172800); with it every request reaches the same pod', async () => {
    const first = await get('sticky.example.com', '/');
    const cookie = String(first.headers['set-cookie']?.[0] ?? '');
    assert.match(cookie, /^route=[^;]+/);
    assert.match(cookie, /Max-Age=172800/i);
    assert.match(cookie, /Path=\//i);
    assert.match(cookie, /HttpOnly/i);
    const value = cookie.split(';')[0] as string;
    const pods = new Set<string>();
    for (let i = 0; i < 20; i++) pods.add(await pod('sticky.example.com', `/page/${i}`, { cookie: value }));
    assert.deepEqual([...pods], [first.json<Seen>().pod]);
  });

  test('upstream-hash-by $request_uri: one URI always reaches one pod; URIs spread over both', async () => {
    const all = new Set<string>();
    for (let u = 0; u < 16; u++) {
      const seen = new Set<string>();
      for (let i = 0; i < 4; i++) seen.add(await pod('cache.example.com', `/item/${u}`));
      assert.equal(seen.size, 1, `/item/${u}: ${[...seen].join(',')}`);
      all.add([...seen][0] as string);
    }
    assert.deepEqual([...all].sort(), ['hashed-1', 'hashed-2']);
  });

  test('custom-http-errors with default-backend: the backend\'s 503 is answered by the error pages Service, with X-Code and the original URI', async () => {
    const r = await get('flaky.example.com', '/checkout?step=2');
    const seen = r.json<Seen>();
    assert.equal(seen.pod, 'error-pages-1');
    assert.equal(r.status, 200, 'the error backend\'s answer is the client\'s');
    assert.equal(seen.headers['x-code'], '503');
    assert.equal(seen.headers['x-original-uri'], '/checkout?step=2');
    assert.deepEqual([seen.headers['x-namespace'], seen.headers['x-ingress-name'], seen.headers['x-service-name']], [NS, 'flaky', 'flaky']);
  });

  test('--default-backend-service: a host no Ingress serves is answered by the chart\'s default backend (404)', async () => {
    const r = await until('default backend', async () => { const x = await get('unknown.example.org', '/'); return x.status === 404 && x.body.startsWith('{') && x; });
    assert.equal(r.json<Seen>().pod, 'default-backend-1');
  });

  test('--tcp-services-configmap: bytes to port 54886 round-trip through the postgres Service', async () => {
    const r = await until('TCP served', async () => (await tcp(TCP_PORT, 'ping', (s) => s.includes('ping'), 1_000).catch(() => undefined)), 30_000, 200);
    assert.equal(r.data, 'postgres-1\nping');
  });

  test('log-format-upstream (JSON, log-format-escape-json): the line of a request, with the client address from X-Forwarded-For', async () => {
    const probe = `/log-probe-${RUN}`;
    assert.equal((await get('corp.example.com', probe, { 'x-forwarded-for': '10.9.8.7' })).status, 200);
    const line = await until('access log line', () => readFileSync(path.join(p.config['runtime-dir'], 'access.log'), 'utf8').split('\n').find((l) => l.includes(probe)));
    const rec = JSON.parse(line) as Record<string, unknown>;
    assert.deepEqual(
      { remote_addr: rec.remote_addr, host: rec.host, method: rec.method, path: rec.path, status: rec.status, upstream: rec.upstream, namespace: rec.namespace, ingress: rec.ingress, service: rec.service },
      { remote_addr: '10.9.8.7', host: 'corp.example.com', method: 'GET', path: probe, status: 200, upstream: `${NS}-web-80`, namespace: NS, ingress: 'corp', service: 'web' },
    );
    assert.equal(typeof rec.request_time, 'number');
    assert.match(String(rec.request_id), /^[0-9a-f]{32}$/);
  });
});
