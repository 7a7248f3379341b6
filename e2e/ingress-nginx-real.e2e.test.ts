// Migrating from the real ingress-nginx controller (issue 11, "side by side" and "in-place takeover"): ingress-nginx's
// own Go controller (e2e/harness/ingress-nginx.ts: built from its Go module; its OpenResty data plane replaced by a
// stand-in, its controller logic unchanged) and Portico against the same apiserver (RBAC on).
//   side by side  each controller serves and publishes the status of its own class only, and neither rewrites the
//                 other's: over several of ingress-nginx's status cycles no Ingress status changes at all (the status
//                 race migrating users hit when two controllers claim the same Ingresses);
//   takeover      ingress-nginx stopped (it clears the status of its Ingresses on the way out), Portico started with
//                 ingress-nginx's controller value and class name serves those Ingresses unchanged and publishes its
//                 own address.
// Ports: Portico 54280-54283 and 54290-54293, ingress-nginx 54300-54306.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { startIngressNginx, type IngressNginx } from './harness/ingress-nginx.ts';
import { createIngress, createService } from './harness/objects.ts';

let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.real${RUN}.test`;
const NGINX_CLASS = `nginx-real-${RUN}`;
const PORTICO_ADDRESS = '192.0.2.10';
const INGRESS_NGINX_ADDRESS = '192.0.2.20';
let portico: RunningPortico | undefined;
let ingressNginx: IngressNginx | undefined;
let ownClass: Awaited<ReturnType<typeof ownIngressClass>>;

interface IngressState { rv: string; ips: string[] }
async function state(name: string): Promise<IngressState> {
  const ing = await admin().request<{ metadata: { resourceVersion: string }; status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }>('GET', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/${name}`);
  return { rv: ing.metadata.resourceVersion, ips: (ing.status?.loadBalancer?.ingress ?? []).map((x) => x.ip ?? '') };
}

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('real');
  ownClass = await ownIngressClass('real');
  await admin().request('POST', '/apis/networking.k8s.io/v1/ingressclasses', { body: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: NGINX_CLASS }, spec: { controller: 'k8s.io/ingress-nginx' } } });
  await createService(ns, 'echo', 'echo');
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await createIngress(ns, NGINX_CLASS, 'theirs', H('theirs'), {});
  await createIngress(ns, ownClass.name, 'ours', H('ours'), {});
  // No class at all: neither controller watches Ingresses without one (both default to not).
  await admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'nobodys' }, spec: { rules: [{ host: H('nobodys'), http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }] } },
  });
});

after(async () => {
  await ingressNginx?.stop();
  await portico?.stop();
  if (ns) await deleteNamespace(ns);
  await ownClass?.remove();
  await admin().request('DELETE', `/apis/networking.k8s.io/v1/ingressclasses/${NGINX_CLASS}`).catch(() => undefined);
  await admin().request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/portico-e2e-ingress-nginx-${ns}`).catch(() => undefined);
});

describe('Portico beside, then instead of, the real ingress-nginx controller', () => {
  test('side by side: each publishes the status of its own class only; over three of ingress-nginx\'s 5 s status cycles no status is rewritten', async () => {
    ingressNginx = await startIngressNginx({ ns, ingressClass: NGINX_CLASS, statusAddress: INGRESS_NGINX_ADDRESS, base: 54300, electionId: `ingress-nginx-leader-${RUN}` });
    portico = await startPortico(54280, [...ownClass.flags, '--publish-status-address', PORTICO_ADDRESS]);
    await until('ingress-nginx published its Ingress\'s status', async () => (await state('theirs')).ips.join() === INGRESS_NGINX_ADDRESS, 60_000, 200)
      .catch((e: unknown) => { throw new Error(`${String(e)}\ningress-nginx log (tail):\n${ingressNginx?.log().slice(-3000)}`); });
    await until('Portico published its Ingress\'s status', async () => (await state('ours')).ips.join() === PORTICO_ADDRESS, 30_000, 200);
    await until('Portico serves its Ingress', async () => (await request(portico!.httpPort, H('ours'), '/')).status === 200);
    assert.equal((await request(portico.httpPort, H('theirs'), '/')).status, 404, 'ingress-nginx\'s Ingress is not Portico\'s to serve');
    // The observation: every 250 ms for 16 s (ingress-nginx re-syncs every 5 s, Portico on every change), each
    // Ingress's resourceVersion and status. A status race shows as a changed version or a foreign address.
    const start = { theirs: await state('theirs'), ours: await state('ours'), nobodys: await state('nobodys') };
    const seen: Record<keyof typeof start, Set<string>> = { theirs: new Set(), ours: new Set(), nobodys: new Set() };
    const t0 = Date.now();
    while (Date.now() - t0 < 16_000) {
      for (const name of Object.keys(start) as (keyof typeof start)[]) {
        const s = await state(name);
        seen[name].add(`${s.rv} ${s.ips.join(',')}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.deepEqual([...seen.theirs], [`${start.theirs.rv} ${INGRESS_NGINX_ADDRESS}`]);
    assert.deepEqual([...seen.ours], [`${start.ours.rv} ${PORTICO_ADDRESS}`]);
    assert.deepEqual([...seen.nobodys], [`${start.nobodys.rv} `]);
    assert.match(ingressNginx.log(), /successfully acquired lease|new leader elected/i, 'ingress-nginx ran as the status leader');
  });

  test('takeover: ingress-nginx stops (clearing its status); Portico with its controller value and class serves the same Ingress unchanged and publishes its address', async () => {
    await ingressNginx!.stop();
    await until('ingress-nginx cleared its status on shutdown', async () => (await state('theirs')).ips.length === 0, 30_000, 200)
      .catch((e: unknown) => { throw new Error(`${String(e)}\ningress-nginx log (tail):\n${ingressNginx?.log().slice(-3000)}`); });
    await portico!.stop();
    portico = await startPortico(54290, ['--controller-class', 'k8s.io/ingress-nginx', '--ingress-class', NGINX_CLASS, '--publish-status-address', PORTICO_ADDRESS]);
    await until('Portico serves the ingress-nginx Ingress', async () => (await request(portico!.httpPort, H('theirs'), '/')).status === 200, 30_000);
    assert.equal((await request(portico.httpPort, H('theirs'), '/')).json().pod, 'echo-1');
    await until('Portico published its address', async () => (await state('theirs')).ips.join() === PORTICO_ADDRESS, 30_000, 200);
    assert.deepEqual((await state('nobodys')).ips, []);
  });
});
