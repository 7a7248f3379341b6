// Moving from ingress-nginx (issue 11, "in-place takeover" and "side by side"), through the real apiserver:
//   takeover     Portico started with ingress-nginx's controller value (--controller-class k8s.io/ingress-nginx) and
//                class name serves that class's Ingresses — by spec.ingressClassName and by the legacy
//                kubernetes.io/ingress.class annotation — unchanged, and publishes its address in their status;
//   side by side an Ingress of another controller's class (one ingress-nginx would keep serving) is neither served
//                nor has its status touched by Portico while Portico writes the status of its own.
// The class names are of this run (a reused cluster may hold others); what is matched is the controller value.
// Portico on its own ports (53780-53783).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.tko${RUN}.test`;
const NGINX_CLASS = `nginx-${RUN}`;
const OTHER_CLASS = `other-${RUN}`;
const ADDRESS = '192.0.2.10';
const THEIRS = '192.0.2.99';

const ingressBody = (name: string, host: string, cls: { spec?: string; annotation?: string }) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, ...(cls.annotation ? { annotations: { 'kubernetes.io/ingress.class': cls.annotation } } : {}) },
  spec: { ...(cls.spec ? { ingressClassName: cls.spec } : {}), rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }] },
});
const lb = async (name: string) =>
  (await admin().request<{ status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }>('GET', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/${name}`)).status?.loadBalancer?.ingress ?? [];

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('tko');
  for (const [name, controller] of [[NGINX_CLASS, 'k8s.io/ingress-nginx'], [OTHER_CLASS, 'example.com/other-controller']]) {
    await admin().request('POST', '/apis/networking.k8s.io/v1/ingressclasses', { body: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name }, spec: { controller } } });
  }
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo' }, spec: { selector: { app: 'echo' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  // What ingress-nginx left behind: Ingresses of its class, and one of another controller with that one's address.
  await admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, { body: ingressBody('by-spec', H('spec'), { spec: NGINX_CLASS }) });
  await admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, { body: ingressBody('by-annotation', H('legacy'), { annotation: NGINX_CLASS }) });
  await admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, { body: ingressBody('theirs', H('theirs'), { spec: OTHER_CLASS }) });
  await admin().request('PATCH', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/theirs/status`, { body: { status: { loadBalancer: { ingress: [{ ip: THEIRS }] } } }, contentType: 'application/merge-patch+json' });
  p = await startPortico(53780, ['--controller-class', 'k8s.io/ingress-nginx', '--ingress-class', NGINX_CLASS, '--publish-status-address', ADDRESS]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  for (const name of [NGINX_CLASS, OTHER_CLASS]) await admin().request('DELETE', `/apis/networking.k8s.io/v1/ingressclasses/${name}`).catch(() => undefined);
});

test('takeover: the ingress-nginx class is served unchanged (spec and legacy annotation), its status gets Portico\'s address; another controller\'s Ingress is left alone', async () => {
  for (const host of [H('spec'), H('legacy')]) {
    await until(`${host} served`, async () => (await request(p.httpPort, host, '/')).status === 200);
    assert.equal((await request(p.httpPort, host, '/')).json().pod, 'echo-1');
  }
  for (const name of ['by-spec', 'by-annotation']) await until(`${name} status published`, async () => (await lb(name)).some((x) => x.ip === ADDRESS));
  assert.equal((await request(p.httpPort, H('theirs'), '/')).status, 404, 'the other controller\'s Ingress is not served');
  assert.deepEqual(await lb('theirs'), [{ ip: THEIRS }], 'its status is untouched (no status race)');
});
