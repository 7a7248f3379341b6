// ingress-nginx's path and rewrite semantics end to end: real apiserver (RBAC on), Portico in-process as its
// ServiceAccount, real nginx, echo pods behind two Services ("web" and "api": the pod's name in the echo's JSON says
// which one answered, its `path` what the backend received). Each test's name states the ingress-nginx behaviour
// it pins (docs/user-guide/ingress-path-matching.md, annotations.md "Rewrite", "Redirect from/to www",
// "Server-side HTTPS enforcement through redirect", docs/examples/rewrite). None of it may reload nginx.
//
// Isolation as in routes-no-reload.e2e.test.ts: an IngressClass of this run, a ConfigMap of this test's namespace
// (absent: defaults), hosts unique per run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const SUF = `inp${RUN}.test`;
const host = (name: string) => `${name}.${SUF}`;
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const A = 'nginx.ingress.kubernetes.io/';
const ingPath = () => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`;
const get = (h: string, path: string) => request(p.httpPort, h, path);
const reloads = () => p.metric('portico_nginx_reloads_total', { result: 'success' });

type PathType = 'Prefix' | 'Exact' | 'ImplementationSpecific';
type P = { path: string; pathType: PathType; service?: 'web' | 'api' };
function rule(h: string, paths: P[]) {
  return { host: h, http: { paths: paths.map((x) => ({ path: x.path, pathType: x.pathType, backend: { service: { name: x.service ?? 'web', port: { number: 80 } } } })) } };
}
function ingress(name: string, rules: ReturnType<typeof rule>[], annotations: Record<string, string> = {}) {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, annotations }, spec: { ingressClassName: CLASS, rules } };
}
const create = (body: ReturnType<typeof ingress>) => admin().request('POST', ingPath(), { body });

/** Which Service answered ("web"/"api", from the pod name) and the path the backend received. */
async function reached(h: string, path: string): Promise<{ service: string; path: string }> {
  const r = await get(h, path);
  assert.equal(r.status, 200, `${h}${path}: ${r.status} ${r.error ?? r.body.slice(0, 200)}`);
  const j = r.json();
  return { service: j.pod.startsWith('api-') ? 'api' : 'web', path: j.path };
}

let reloads0 = 0;
before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('inp');
  const cls = await ownIngressClass('inp');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(53280, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  for (const svc of ['web', 'api']) {
    await admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: svc }, spec: { selector: { app: svc }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    });
    await addPod(ns, `${svc}-1`, { labels: { app: svc } });
  }
  // A first Ingress, so the structure (the one reload that may ever happen) is settled before counting.
  await create(ingress('warmup', [rule(host('warmup'), [{ path: '/', pathType: 'Prefix' }])]));
  await until('warmup served', async () => (await get(host('warmup'), '/')).status === 200, 60_000);
  await until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
  reloads0 = await reloads();
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('ingress-nginx path and rewrite semantics', () => {
  test('rewrite-target "/$2" with path "/something(/|$)(.*)" (ingress-nginx examples/rewrite): /something → /, /something/new → /new; the regex is case-insensitive and anchored at the start only', async () => {
    const h = host('rewrite');
    await create(ingress('rewrite', [rule(h, [{ path: '/something(/|$)(.*)', pathType: 'ImplementationSpecific' }])], { [`${A}rewrite-target`]: '/$2' }));
    await until('rewrite served', async () => (await get(h, '/something/new')).status === 200);
    assert.equal((await reached(h, '/something')).path, '/');
    assert.equal((await reached(h, '/something/')).path, '/');
    assert.equal((await reached(h, '/something/new')).path, '/new');
    assert.equal((await reached(h, '/SOMETHING/new/deeper?x=1')).path, '/new/deeper?x=1');
    assert.equal((await get(h, '/x/something/new')).status, 404, '`~* "^<path>"`: anchored at the start');
    assert.equal((await get(h, '/somethingelse')).status, 404, '"(/|$)" needs a "/" or the end');
  });

  test('use-regex on ONE Ingress turns every path of the host, of every Ingress (Exact and Prefix too), into a case-insensitive start-anchored regex, longest first (ingress-path-matching.md, IMPORTANT NOTES)', async () => {
    const h = host('regex');
    await create(ingress('plain', [rule(h, [{ path: '/foo/bar', pathType: 'Prefix', service: 'web' }, { path: '/exact', pathType: 'Exact', service: 'api' }])]));
    await until('plain served', async () => (await get(h, '/foo/bar')).status === 200);
    assert.equal((await get(h, '/FOO/BAR')).status, 404, 'before: Prefix is case-sensitive');
    assert.equal((await get(h, '/exact/more')).status, 404, 'before: Exact is exact');
    await create(ingress('regex', [rule(h, [{ path: '/foo/bar/(.+)', pathType: 'ImplementationSpecific', service: 'api' }])], { [`${A}use-regex`]: 'true' }));
    await until('regex served', async () => (await get(h, '/foo/bar/1')).status === 200 && (await reached(h, '/foo/bar/1')).service === 'api');
    assert.equal((await reached(h, '/foo/bar/1')).service, 'api', '^/foo/bar/(.+) is the longest, tried first');
    assert.equal((await reached(h, '/foo/bar')).service, 'web');
    assert.equal((await reached(h, '/FOO/BAR')).service, 'web', 'the other Ingress\'s Prefix path is case-insensitive now');
    assert.equal((await reached(h, '/foo/barista')).service, 'web', '…and a plain prefix of the string ("^/foo/bar")');
    assert.equal((await reached(h, '/exact/more')).service, 'api', 'the other Ingress\'s Exact path is "^/exact" now');
    const ev = await admin().request<{ items: { type: string; regarding: { name: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
    const warnings = ev.items.filter((e) => e.type === 'Warning' && (e.regarding?.name === 'plain' || e.regarding?.name === 'regex'));
    assert.deepEqual(warnings, [], 'the quirk is documented, not warned about');
  });

  test('app-root: "/" (with any query) is answered 302 to <scheme>://<Host><app-root>; other paths are proxied (ingress-nginx `if ($uri = /) { return 302 $scheme://$http_host<app-root>; }`)', async () => {
    const h = host('approot');
    await create(ingress('approot', [rule(h, [{ path: '/', pathType: 'Prefix' }])], { [`${A}app-root`]: '/app1' }));
    await until('app-root served', async () => (await get(h, '/')).status === 302);
    const r = await get(h, '/?q=1');
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, `http://${h}/app1`);
    assert.equal((await reached(h, '/app1')).path, '/app1');
  });

  test('from-to-www-redirect: www.<host> answers 308 to <host> with the request URI and query, its last "/" dropped — not when www.<host> has rules of its own (ingress-nginx redirect servers)', async () => {
    const h = host('site'); // not "www.…" itself: for a www host ingress-nginx redirects the other way
    const taken = host('taken');
    await create(ingress('www', [rule(h, [{ path: '/', pathType: 'Prefix' }]), rule(taken, [{ path: '/', pathType: 'Prefix' }])], { [`${A}from-to-www-redirect`]: 'true' }));
    await create(ingress('own', [rule(`www.${taken}`, [{ path: '/', pathType: 'Prefix', service: 'api' }])]));
    await until('www redirect served', async () => (await get(`www.${h}`, '/a')).status === 308);
    const r = await get(`www.${h}`, '/a/b?q=1');
    assert.equal(r.headers.location, `http://${h}/a/b?q=1`);
    assert.equal((await get(`www.${h}`, '/a/b/')).headers.location, `http://${h}/a/b`);
    assert.equal((await reached(h, '/a')).path, '/a');
    await until('www.taken served by its own rule', async () => (await get(`www.${taken}`, '/')).status === 200);
    assert.equal((await reached(`www.${taken}`, '/x')).service, 'api');
  });

  test('trailing slash: an ImplementationSpecific "/docs/" (nginx `location /docs/`) answers "/docs" with nginx\'s 301 to "/docs/"; a Prefix "/guide/" matches "/guide" itself (Ingress spec: the trailing slash is ignored), never "/guidex"', async () => {
    const h = host('slash');
    await create(ingress('slash', [rule(h, [{ path: '/docs/', pathType: 'ImplementationSpecific', service: 'api' }, { path: '/guide/', pathType: 'Prefix', service: 'api' }, { path: '/api', pathType: 'Prefix', service: 'api' }, { path: '/', pathType: 'Prefix', service: 'web' }])]));
    await until('slash served', async () => (await get(h, '/docs/')).status === 200);
    const r = await get(h, '/docs?x=1');
    assert.equal(r.status, 301);
    assert.match(String(r.headers.location), /\/docs\/\?x=1$/);
    assert.equal((await reached(h, '/docs/page')).service, 'api');
    assert.equal((await reached(h, '/docsx')).service, 'web');
    assert.deepEqual(await reached(h, '/guide'), { service: 'api', path: '/guide' }, 'Prefix "/guide/" serves "/guide" (no 301)');
    assert.equal((await reached(h, '/guide/')).service, 'api');
    assert.equal((await reached(h, '/guide/x')).service, 'api');
    assert.equal((await reached(h, '/guidex')).service, 'web');
    assert.equal((await reached(h, '/api')).service, 'api');
  });

  test('redirect to HTTPS drops the final "/" of the request URI ("/p/" → https://host/p) unless preserve-trailing-slash is "true" (ingress-nginx lua_ingress)', async () => {
    const drop = host('ssl');
    const keep = host('keep');
    await create(ingress('ssl', [rule(drop, [{ path: '/', pathType: 'Prefix' }])], { [`${A}force-ssl-redirect`]: 'true' }));
    await create(ingress('keep', [rule(keep, [{ path: '/', pathType: 'Prefix' }])], { [`${A}force-ssl-redirect`]: 'true', [`${A}preserve-trailing-slash`]: 'true' }));
    await until('ssl redirects', async () => (await get(drop, '/p/')).status === 308 && (await get(keep, '/p/')).status === 308);
    assert.equal((await get(drop, '/p/')).headers.location, `https://${drop}/p`);
    assert.equal((await get(keep, '/p/')).headers.location, `https://${keep}/p/`);
  });

  test('paths are matched on nginx\'s normalized URI, as ingress-nginx\'s locations are: "/a/../admin", "/%61dmin", "//admin" match the "/admin" rule', async () => {
    const h = host('norm');
    await create(ingress('norm', [rule(h, [{ path: '/admin', pathType: 'Prefix', service: 'api' }, { path: '/', pathType: 'Prefix', service: 'web' }])]));
    await until('norm served', async () => (await get(h, '/admin')).status === 200);
    for (const path of ['/admin', '/a/../admin', '/%61dmin', '//admin', '/./admin/x']) assert.equal((await reached(h, path)).service, 'api', path);
    assert.equal((await reached(h, '/adminx')).service, 'web');
  });

  test('none of it reloads nginx: paths, rewrites and redirects are data', async () => {
    assert.equal(await reloads(), reloads0);
  });
});
