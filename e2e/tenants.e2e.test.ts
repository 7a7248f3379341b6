// A shared cluster, end to end: the way users create Services works, and one namespace cannot take or change another
// namespace's traffic. Real apiserver (RBAC on), Portico as its ServiceAccount, real nginx, echo pods with real pod
// IPs. Objects are made with kubectl where that is how users make them (`kubectl create service`, `kubectl create
// ingress`), so the API server's own defaults (port names such as "8080-8080") reach Portico.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, kubectl, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until } from './harness/http.ts';
import { eventsAbout } from './harness/objects.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';

let p: RunningPortico;
let victim = '';
let evil = '';
let cfgNs = '';
const SUF = `ten${Date.now().toString(36)}.test`;
const H = (n: string) => `${n}.${SUF}`;
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const A = 'nginx.ingress.kubernetes.io/';
const get = (h: string, path: string, headers?: Record<string, string>) => request(p.httpPort, h, path, { headers });
const podOf = async (h: string, path: string): Promise<string> => {
  const r = await get(h, path);
  return r.status === 200 ? (r.json().pod as string) : `status ${r.status}`;
};

interface P { path: string; pathType: 'Prefix' | 'Exact' | 'ImplementationSpecific' }
const ingress = (ns: string, name: string, host: string, paths: P[], annotations: Record<string, string> = {}) =>
  admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, annotations },
      spec: { ingressClassName: CLASS, rules: [{ host, http: { paths: paths.map((x) => ({ ...x, backend: { service: { name: 'web', port: { number: 80 } } } })) } }] },
    },
  });
const service = (ns: string) =>
  admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
  });
const warning = (ns: string, name: string, reason: string) =>
  until(`${reason} Warning on ${ns}/${name}`, async () => (await eventsAbout(ns, 'Ingress', name)).find((e) => e.type === 'Warning' && e.reason === reason), 30_000);

before(async () => {
  await ensureCluster();
  victim = await uniqueNamespace('victim');
  evil = await uniqueNamespace('evil');
  cfgNs = await uniqueNamespace('tencfg');
  const cls = await ownIngressClass('ten');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(52280, [...cls.flags, '--configmap', `${cfgNs}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  for (const ns of [victim, evil]) {
    await service(ns);
    await addPod(ns, `${ns.startsWith('victim') ? 'victim' : 'evil'}-web`, { labels: { app: 'web' } });
  }
});

after(async () => {
  await p?.stop();
  for (const ns of [victim, evil, cfgNs]) if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('day one', () => {
  test('the quick start: kubectl create service clusterip web --tcp=8080:8080 (port named "8080-8080") + kubectl create ingress serves 200', async () => {
    const ns = await uniqueNamespace('quick');
    try {
      kubectl(['-n', ns, 'create', 'service', 'clusterip', 'web', '--tcp=8080:8080']);
      const svc = JSON.parse(kubectl(['-n', ns, 'get', 'service', 'web', '-o', 'json'])) as { spec: { ports: { name: string }[] } };
      assert.equal(svc.spec.ports[0]?.name, '8080-8080', 'kubectl names the port after the ports');
      // The pod the Deployment would make: label app=web, listening on 8080, its container port named by kubectl's
      // convention (none); the EndpointSlice controller names the slice port after the Service port.
      await addPod(ns, 'web-1', { labels: { app: 'web' }, port: 8080 });
      kubectl(['-n', ns, 'create', 'ingress', 'web', `--class=${CLASS}`, `--rule=${H('quick')}/*=web:8080`]);
      const r = await until('the quick start served', async () => {
        const x = await get(H('quick'), '/anything');
        return x.status === 200 ? x : undefined;
      }, 30_000);
      assert.equal(r.json().pod, 'web-1');
    } finally {
      await deleteNamespace(ns);
    }
  });
});

describe('names: exactly what the API server accepts', () => {
  test('a Service named "1web" (Kubernetes 1.36 accepts a leading digit) and a host with a 70-character label are served', async () => {
    const ns = await uniqueNamespace('names');
    try {
      await admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
        body: { apiVersion: 'v1', kind: 'Service', metadata: { name: '1web' }, spec: { selector: { app: 'one' }, ports: [{ port: 80, targetPort: 8080 }] } },
      });
      await addPod(ns, 'one-1', { labels: { app: 'one' } });
      const long = `${'a'.repeat(70)}.${SUF}`;
      await admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
        body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'names' }, spec: { ingressClassName: CLASS, rules: [{ host: long, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: '1web', port: { number: 80 } } } }] } }] } },
      });
      await until('served', async () => (await podOf(long, '/')) === 'one-1', 30_000);
    } finally {
      await deleteNamespace(ns);
    }
  });
});

describe('one namespace never takes or changes another namespace\'s traffic', () => {
  test('a canary Ingress in another namespace with canary-weight 100 gets none of the victim\'s requests, and a Warning says why', async () => {
    await ingress(victim, 'shop', H('shop'), [{ path: '/', pathType: 'Prefix' }]);
    await until('victim served', async () => (await podOf(H('shop'), '/')) === 'victim-web');
    await ingress(evil, 'steal', H('shop'), [{ path: '/', pathType: 'Prefix' }], { [`${A}canary`]: 'true', [`${A}canary-weight`]: '100' });
    const w = await warning(evil, 'steal', 'CanaryWithoutMain');
    assert.match(w.note, /must be in its main Ingress's namespace/);
    for (let i = 0; i < 20; i++) assert.equal(await podOf(H('shop'), `/r${i}`), 'victim-web');
  });

  test('use-regex in another namespace on the same host leaves the victim\'s Exact path exact: "/API/PUBLIC-x" never reaches the victim\'s backend', async () => {
    await ingress(victim, 'public', H('api'), [{ path: '/api/public', pathType: 'Exact' }]);
    await until('victim exact path served', async () => (await podOf(H('api'), '/api/public')) === 'victim-web');
    await ingress(evil, 'rx', H('api'), [{ path: '/zz.*', pathType: 'ImplementationSpecific' }], { [`${A}use-regex`]: 'true' });
    await until('the other namespace\'s regex path is served', async () => (await podOf(H('api'), '/zzTOP')) === 'evil-web');
    for (const path of ['/API/PUBLIC-x', '/api/public-x', '/api/public/x', '/Api/Public']) assert.equal((await get(H('api'), path)).status, 404, path);
    assert.equal(await podOf(H('api'), '/api/public'), 'victim-web');
  });

  test('namespace-exclusive-hosts: the host stays with the namespace that named it first; another namespace\'s path on it is refused with a Warning naming the owner', async () => {
    await ingress(victim, 'owned', H('owned'), [{ path: '/', pathType: 'Prefix' }]);
    await until('owner served', async () => (await podOf(H('owned'), '/')) === 'victim-web');
    // creationTimestamp has whole seconds (ties go by namespace/name): let the clock pass the owner's second.
    const owned = await admin().request<{ metadata: { creationTimestamp: string } }>('GET', `/apis/networking.k8s.io/v1/namespaces/${victim}/ingresses/owned`);
    await until('a later second than the owner\'s creationTimestamp', () => Date.now() >= Date.parse(owned.metadata.creationTimestamp) + 1000, 5_000, 50);
    await ingress(evil, 'squat', H('owned'), [{ path: '/admin', pathType: 'Prefix' }]);
    await until('shared by default: the other namespace\'s path is served', async () => (await podOf(H('owned'), '/admin')) === 'evil-web');
    await admin().request('POST', `/api/v1/namespaces/${cfgNs}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: { 'namespace-exclusive-hosts': 'true' } } });
    const w = await warning(evil, 'squat', 'HostOwnedByNamespace');
    assert.match(w.note, new RegExp(`belongs to namespace ${victim}`));
    await until('the squatter\'s path is gone: "/admin" is the owner\'s "/"', async () => (await podOf(H('owned'), '/admin')) === 'victim-web');
    // A host of its own still works for the other namespace.
    await ingress(evil, 'mine', H('evil-own'), [{ path: '/', pathType: 'Prefix' }]);
    await until('the other namespace\'s own host served', async () => (await podOf(H('evil-own'), '/')) === 'evil-web');
  });
});
