// `portico migrate --to gateway-api` end to end: an Ingress set with the annotations people migrate with
// (e2e/testdata/migrate-gateway-api/ingresses.yaml: TLS and the redirect to HTTPS, the three path types and nginx's
// trailing-slash redirect, rewrite-target with and without captures, permanent and temporal redirects, app-root,
// canaries by header, cookie and weight, CORS, a header to the backend, basic auth, a rate limit, allowlists) is
// applied in a namespace of its own and served by an in-process Portico; the converter (the module's function, as
// the command runs it) reads the same objects back from the API server, its HTTPRoutes, Plugins, Consumer, Secret
// and Gateway are applied, and every request of a corpus is sent to both — the Ingress ports and the Gateway's
// listener ports of the same Portico — and must be answered identically: status, Location, the CORS and
// authentication headers, which backend pod answered and what path and X-Forwarded-Prefix it received.
//
// The real API server (RBAC on) with the Gateway API release's CRDs, real nginx, echo pods in network namespaces.
// Ports: Portico 54980-54983. The IngressClass, GatewayClass and controller names are this run's own.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import type { KubeObject } from '../operator/kube/object.ts';
import { isNotFound } from '../operator/kube/client.ts';
import { migrateToGatewayApi, type Input } from '../app/migrate.ts';
import { admin, ensureCluster, kubectl, ownIngressClass, ROOT, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, tlsRequest, until, type Reply, type TlsReply } from './harness/http.ts';
import { Pki } from './harness/pki.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';

const BASE = 54980;
const RUN = Date.now().toString(36);
const CONTROLLER = `portico.dev/e2e-migrate-${RUN}`;
const GATEWAY_CLASS = `portico-migrate-${RUN}`;
const FIXTURE = path.join(ROOT, 'e2e/testdata/migrate-gateway-api/ingresses.yaml');
const GW = '/apis/gateway.networking.k8s.io/v1';
const AUTH = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;

let p: RunningPortico;
let ns = '';
let cls: Awaited<ReturnType<typeof ownIngressClass>> | undefined;

type Cond = { type: string; status: string; reason?: string };
const cond = (list: Cond[] | undefined, type: string) => list?.find((c) => c.type === type);
const get = <T>(p0: string) => admin().request<T>('GET', p0);

/** Where an object of the conversion is created: /api/v1 or /apis/<group>/<version>, its kind's plural. */
function collectionPath(o: KubeObject): string {
  const [group, version] = (o.apiVersion as string).includes('/') ? (o.apiVersion as string).split('/') : ['', o.apiVersion];
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const kind = (o.kind as string).toLowerCase();
  // English plurals of the kinds involved: "Ingress" → "ingresses", every other one takes an "s".
  return `${base}/namespaces/${o.metadata.namespace}/${kind.endsWith('s') ? `${kind}es` : `${kind}s`}`;
}

/** The pod port nginx serves a Gateway listener port on: the targetPort of the Service Portico made for the Gateway. */
async function gatewayPodPort(listenerPort: number): Promise<number | undefined> {
  const list = await get<{ items: { metadata: { annotations?: Record<string, string> }; spec: { ports: { port: number; targetPort: number }[] } }[] }>(`/api/v1/namespaces/${ns}/services?labelSelector=portico.dev/gateway`);
  const svc = list.items.find((s) => s.metadata.annotations?.['portico.dev/gateway'] === `${ns}/portico`);
  return svc?.spec.ports.find((x) => x.port === listenerPort)?.targetPort;
}

before(async () => {
  await ensureCluster();
  const have = kubectl(['get', 'crd', '-o', 'name']).split('\n');
  if (!['gatewayclasses', 'gateways', 'httproutes', 'referencegrants'].every((r) => have.includes(`customresourcedefinition.apiextensions.k8s.io/${r}.gateway.networking.k8s.io`))) {
    const crds = execFileSync('bash', [path.join(ROOT, 'e2e/gateway-api/crds.sh'), 'standard'], { encoding: 'utf8' }).trim();
    kubectl(['apply', '--server-side', '--force-conflicts', '-f', crds]);
  }
  await until('Gateway API served', async () => {
    try {
      await get(`${GW}/httproutes`);
      return true;
    } catch {
      return false;
    }
  });
  cls = await ownIngressClass('migrate');
  ns = await uniqueNamespace('migrate-gw');
  // Portico's own Service (--publish-service): the Gateway's Service copies its selector.
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'portico' }, spec: { selector: { app: `portico-${RUN}` }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
  // "next" backs only next.example, whose canary takes all requests by weight: ingress-nginx (and Portico) attach a
  // canary to its main backend (the Service port), so every Ingress path naming that backend would follow it.
  for (const app of ['web', 'web-v2', 'api', 'next']) {
    await admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: app }, spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
    await addPod(ns, `${app}-1`, { labels: { app } });
  }
  const pki = new Pki().ca('ca').server('site', 'ca', 'site.example');
  await admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'site-tls' }, data: { 'tls.crt': Buffer.from(pki.read('site.crt')).toString('base64'), 'tls.key': Buffer.from(pki.read('site.key')).toString('base64') } },
  });
  // The fixture, in this run's namespace and IngressClass.
  for (const d of loadAllYaml(readFileSync(FIXTURE, 'utf8')) as (KubeObject & { spec?: { ingressClassName?: string } })[]) {
    const o = { ...d, metadata: { ...d.metadata, namespace: ns } };
    if (o.kind === 'Ingress') o.spec = { ...o.spec, ingressClassName: cls.name };
    await admin().request('POST', collectionPath(o), { body: o });
  }
  await admin().request('POST', `${GW}/gatewayclasses`, { body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: GATEWAY_CLASS }, spec: { controllerName: CONTROLLER } } });
  p = await startPortico(BASE, [...cls.flags, '--enable-gateway-api', 'true', '--gateway-controller-name', CONTROLLER, '--publish-service', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200, 60_000);
  await until('the Ingresses served', async () => podOf(await request(p.httpPort, 'shop.example', '/')) === 'web-1' && (await tlsRequest(p.httpsPort, 'site.example', { path: '/' })).status === 200, 30_000);
});

after(async () => {
  await p?.stop();
  try {
    await admin().request('DELETE', `${GW}/gatewayclasses/${GATEWAY_CLASS}`);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (ns) await deleteNamespace(ns);
  await cls?.remove();
});

type Seen = { pod?: string; path?: string; headers?: Record<string, string> };
const podOf = (r: Reply) => (r.status === 200 ? r.json<Seen>().pod : undefined);

/** What is compared of an answer: status, the headers that carry meaning here, and what the backend received. */
const SHOWN = ['location', 'www-authenticate', 'access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers', 'access-control-max-age', 'retry-after'];
function view(r: Reply | TlsReply, asked?: string): Record<string, unknown> {
  const out: Record<string, unknown> = { status: r.status };
  for (const h of SHOWN) if (r.headers[h] !== undefined) out[h] = r.headers[h];
  // A Location is compared as the client follows it: nginx's own trailing-slash redirect is relative ("/docs/"),
  // a Gateway API RequestRedirect absolute ("http://site.example/docs/"); both lead to the same URL.
  if (asked && typeof out.location === 'string') out.location = new URL(out.location, asked).href;
  if (r.status === 200 && String(r.headers['content-type'] ?? '').includes('application/json')) {
    const seen = JSON.parse(r.body) as Seen;
    out.pod = seen.pod;
    out.path = seen.path;
    out['x-forwarded-prefix'] = seen.headers?.['x-forwarded-prefix'];
  }
  return out;
}

interface Case {
  host: string;
  path: string;
  tls?: true;
  method?: string;
  headers?: Record<string, string>;
  /** What the answer must be (besides equal on both sides), so a corpus both sides get wrong alike still fails. */
  expect: Record<string, unknown>;
}

const CORPUS: Case[] = [
  // TLS host: HTTP redirected (the path kept: preserve-trailing-slash), HTTPS served; nginx's "/docs" → "/docs/" first.
  { host: 'site.example', path: '/', expect: { status: 308, location: 'https://site.example/' } },
  { host: 'site.example', path: '/exact?q=1', expect: { status: 308, location: 'https://site.example/exact?q=1' } },
  { host: 'site.example', path: '/docs', expect: { status: 301, location: 'http://site.example/docs/' } },
  { host: 'site.example', path: '/', tls: true, expect: { status: 200, pod: 'web-1', path: '/', 'x-forwarded-prefix': '/site' } },
  { host: 'site.example', path: '/exact', tls: true, expect: { status: 200, pod: 'api-1' } },
  { host: 'site.example', path: '/exact/more', tls: true, expect: { status: 200, pod: 'web-1' } },
  { host: 'site.example', path: '/docs', tls: true, expect: { status: 301, location: 'https://site.example/docs/' } },
  { host: 'site.example', path: '/docs/guide', tls: true, expect: { status: 200, pod: 'api-1', path: '/docs/guide' } },
  // rewrite-target with captures (a regex path, matched case-insensitively) and without (the whole path replaced).
  { host: 'rewrite.example', path: '/blog', expect: { status: 200, pod: 'web-1', path: '/' } },
  { host: 'rewrite.example', path: '/blog/2024/post?x=1', expect: { status: 200, path: '/2024/post?x=1' } },
  { host: 'rewrite.example', path: '/BLOG/Abc', expect: { status: 200, path: '/Abc' } },
  { host: 'rewrite.example', path: '/blogger', expect: { status: 404 } },
  { host: 'renamed.example', path: '/old', expect: { status: 200, pod: 'api-1', path: '/new' } },
  { host: 'renamed.example', path: '/old/x?q=1', expect: { status: 200, path: '/new?q=1' } },
  { host: 'renamed.example', path: '/other', expect: { status: 404 } },
  // Redirects: to a URL (the request's path and query not appended), app-root.
  { host: 'moved.example', path: '/any/where?x=1', expect: { status: 308, location: 'https://new.example/landing' } },
  { host: 'away.example', path: '/', expect: { status: 302, location: 'http://elsewhere.example/maintenance' } },
  { host: 'root.example', path: '/', expect: { status: 302, location: 'http://root.example/app' } },
  { host: 'root.example', path: '/app/page', expect: { status: 200, pod: 'web-1', path: '/app/page' } },
  // Canaries: the header first ("always" / "never"), then the cookie, then the weight (0 here, 100 on next.example).
  { host: 'shop.example', path: '/', expect: { status: 200, pod: 'web-1' } },
  { host: 'shop.example', path: '/', headers: { 'X-Canary': 'always' }, expect: { status: 200, pod: 'web-v2-1' } },
  { host: 'shop.example', path: '/', headers: { 'X-Canary': 'never' }, expect: { status: 200, pod: 'web-1' } },
  { host: 'shop.example', path: '/', headers: { Cookie: 'beta=always' }, expect: { status: 200, pod: 'web-v2-1' } },
  { host: 'shop.example', path: '/', headers: { Cookie: 'theme=dark; beta=always' }, expect: { status: 200, pod: 'web-v2-1' } },
  { host: 'shop.example', path: '/', headers: { Cookie: 'beta=always2' }, expect: { status: 200, pod: 'web-1' } },
  { host: 'shop.example', path: '/', headers: { 'X-Canary': 'never', Cookie: 'beta=always' }, expect: { status: 200, pod: 'web-1' } },
  { host: 'shop.example', path: '/', headers: { 'X-Canary': 'always', Cookie: 'beta=never' }, expect: { status: 200, pod: 'web-v2-1' } },
  { host: 'shop.example', path: '/', headers: { 'X-Canary': 'maybe', Cookie: 'beta=always' }, expect: { status: 200, pod: 'web-v2-1' } },
  { host: 'next.example', path: '/', expect: { status: 200, pod: 'web-v2-1' } },
  // CORS: a preflight and a request from the allowed origin, a request from another.
  { host: 'cors.example', path: '/', method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'PUT' }, expect: { 'access-control-allow-origin': 'https://app.example', 'access-control-allow-credentials': 'true', 'access-control-max-age': '600' } },
  { host: 'cors.example', path: '/', headers: { Origin: 'https://app.example' }, expect: { status: 200, pod: 'api-1', 'access-control-allow-origin': 'https://app.example', 'access-control-expose-headers': 'x-request-id' } },
  { host: 'cors.example', path: '/', headers: { Origin: 'https://evil.example' }, expect: { status: 200, pod: 'api-1' } },
  // Basic auth.
  { host: 'staff.example', path: '/', expect: { status: 401, 'www-authenticate': 'Basic realm="Staff only"' } },
  { host: 'staff.example', path: '/', headers: { Authorization: AUTH }, expect: { status: 200, pod: 'api-1' } },
  { host: 'staff.example', path: '/', headers: { Authorization: `Basic ${Buffer.from('alice:nope').toString('base64')}` }, expect: { status: 401 } },
  // Client address lists (the test's requests come from 127.0.0.1).
  { host: 'internal.example', path: '/', expect: { status: 403 } },
  { host: 'local.example', path: '/', expect: { status: 200, pod: 'web-1' } },
];

describe('portico migrate --to gateway-api', () => {
  test('the converted HTTPRoutes and Plugins answer the request corpus exactly as the Ingresses do', async () => {
    // The converter reads what the API server has: the Ingresses of the class, the basic-auth Secret, Portico's
    // ConfigMap (the statuses and defaults both sides answer with).
    const ingresses = (await get<{ items: KubeObject[] }>(`/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`)).items.map((i) => ({ ...i, apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' }));
    const users = await get<{ data: Record<string, string> }>(`/api/v1/namespaces/${ns}/secrets/staff-users`);
    let configMap: Input['configMap'] = null;
    try {
      const cm = await get<{ data?: Record<string, string> }>('/api/v1/namespaces/portico-system/configmaps/portico');
      configMap = { namespace: 'portico-system', name: 'portico', data: cm.data ?? {} };
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    const input: Input = { source: { kind: 'cluster', server: 'e2e' }, ingresses, configMap, secrets: new Map([[`${ns}/staff-users`, { data: users.data }]]), missingSecrets: new Set(), services: new Map(), configMaps: new Map() };
    const c = migrateToGatewayApi(input, { gatewayClass: GATEWAY_CLASS });
    assert.deepEqual(c.report.ingresses.filter((i) => i.verdict !== 'converted').map((i) => `${i.name}: ${JSON.stringify(i)}`), [], 'every Ingress of the set converts');
    assert.equal(c.report.summary.exitCode, 0);
    assert.deepEqual(c.report.gateways.map((g) => g.listeners.map((l) => l.name)), [['http', 'https-site-example']]);

    for (const o of c.objects) await admin().request('POST', collectionPath(o), { body: o });

    await until('the Gateway Programmed', async () => cond((await get<{ status?: { conditions?: Cond[] } }>(`${GW}/namespaces/${ns}/gateways/portico`)).status?.conditions, 'Programmed')?.status === 'True', 30_000);
    for (const r of c.objects.filter((o) => o.kind === 'HTTPRoute')) {
      await until(`HTTPRoute ${r.metadata.name} Accepted with its references resolved`, async () => {
        const s = await get<{ status?: { parents?: { controllerName: string; conditions: Cond[] }[] } }>(`${GW}/namespaces/${ns}/httproutes/${r.metadata.name}`);
        const mine = s.status?.parents?.filter((x) => x.controllerName === CONTROLLER) ?? [];
        return mine.length > 0 && mine.every((x) => cond(x.conditions, 'Accepted')?.status === 'True' && cond(x.conditions, 'ResolvedRefs')?.status === 'True');
      }, 30_000);
    }
    for (const pl of c.objects.filter((o) => o.kind === 'Plugin')) {
      await until(`Plugin ${pl.metadata.name} Accepted`, async () => cond((await get<{ status?: { conditions?: Cond[] } }>(`/apis/portico.dev/v1alpha1/namespaces/${ns}/plugins/${pl.metadata.name}`)).status?.conditions, 'Accepted')?.status === 'True', 30_000);
    }
    const http = await until('the Gateway\'s HTTP port', () => gatewayPodPort(80));
    const https = await until('the Gateway\'s HTTPS port', () => gatewayPodPort(443));

    const send = (port: number, tlsPort: number, k: Case): Promise<Reply | TlsReply> =>
      k.tls ? tlsRequest(tlsPort, k.host, { host: k.host, path: k.path }) : request(port, k.host, k.path, { ...(k.method ? { method: k.method } : {}), ...(k.headers ? { headers: k.headers } : {}) });
    // Route data reaches nginx after the statuses: each host is waited for once (answered, not 404 from no route).
    for (const host of [...new Set(CORPUS.map((k) => k.host))]) {
      const first = CORPUS.find((k) => k.host === host) as Case;
      await until(`${host} served on the Gateway`, async () => (await send(http, https, first)).status === view(await send(p.httpPort, p.httpsPort, first)).status);
    }
    for (const k of CORPUS) {
      const what = `${k.method ?? 'GET'} ${k.tls ? 'https' : 'http'}://${k.host}${k.path} ${JSON.stringify(k.headers ?? {})}`;
      const asked = `${k.tls ? 'https' : 'http'}://${k.host}${k.path}`;
      const ing = view(await send(p.httpPort, p.httpsPort, k), asked);
      const gw = view(await send(http, https, k), asked);
      assert.deepEqual(gw, ing, `${what}: the Gateway answers differently from the Ingress`);
      for (const [key, v] of Object.entries(k.expect)) assert.deepEqual(ing[key], v, `${what}: ${key}`);
    }

    // The rate limit (1 request per second per client, burst 1): each side counts on its own (a Plugin object's
    // counter, the Ingress's), so each is first waited for to let a request through, then sent a burst.
    const burst = async (port: number) => {
      await until(`limited.example lets a request through on port ${port}`, async () => (await request(port, 'limited.example', '/')).status === 200, 10_000);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await request(port, 'limited.example', '/')).status);
      return statuses;
    };
    const ingLimited = await burst(p.httpPort);
    const gwLimited = await burst(http);
    const refused = (s: number[]) => [...new Set(s.filter((x) => x !== 200))];
    assert.ok(refused(ingLimited).length === 1, `the Ingress refuses over the limit: ${ingLimited}`);
    assert.deepEqual(refused(gwLimited), refused(ingLimited), `the same refusal status: Ingress ${ingLimited}, Gateway ${gwLimited}`);
  });
});
