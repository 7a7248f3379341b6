// The harness itself: a real apiserver with RBAC, the real EndpointSlice controller, echo pods with real IPs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, isForbidden } from '../operator/kube/client.ts';
import { admin, ensureCluster, kubectl, serviceAccountKubeConfig, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace, listPods, removePod } from './harness/pods.ts';
import { until } from './harness/http.ts';

let ns: string;
before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('cp');
});
after(async () => {
  if (ns) await deleteNamespace(ns);
});

interface Slice {
  endpoints: { addresses: string[]; conditions: { ready?: boolean; serving?: boolean; terminating?: boolean } }[];
}
async function endpoints(svc: string) {
  const l = await admin().request<{ items: Slice[] }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
    query: { labelSelector: `kubernetes.io/service-name=${svc}` },
  });
  return l.items.flatMap((s) => s.endpoints ?? []).map((e) => ({ ip: e.addresses[0], ...e.conditions }));
}

test('the apiserver is the real v1.36 build with RBAC enforced', async () => {
  const v = await admin().request<{ gitVersion: string }>('GET', '/version');
  assert.equal(v.gitVersion, 'v1.36.3');
  kubectl(['-n', ns, 'create', 'serviceaccount', 'nobody']);
  const nobody = new KubeClient(await serviceAccountKubeConfig(ns, 'nobody'));
  await assert.rejects(nobody.request('GET', `/api/v1/namespaces/${ns}/pods`), (e: unknown) => isForbidden(e));
});

test('echo pods get real IPs, the EndpointSlice controller publishes them, termination is visible', async () => {
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
    body: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'echo' },
      spec: { selector: { app: 'echo' }, ports: [{ name: 'web', port: 80, targetPort: 'http' }] },
    },
  });
  const ipA = await addPod(ns, 'a', { labels: { app: 'echo' } });
  const ipB = await addPod(ns, 'b', { labels: { app: 'echo' } });
  assert.notEqual(ipA, ipB);
  assert.match(ipA, /^198\.51\.100\.\d+$/);
  await until('both endpoints ready', async () => {
    const eps = await endpoints('echo');
    return eps.filter((e) => e.ready).length === 2 && eps;
  }, 15_000, 100);
  const res = await fetch(`http://${ipA}:8080/some/path?q=1`, { headers: { 'X-Test': 'yes' } });
  const body = (await res.json()) as { pod: string; namespace: string; ip: string; path: string; headers: Record<string, string> };
  assert.equal(body.pod, 'a');
  assert.equal(body.namespace, ns);
  assert.equal(body.ip, ipA);
  assert.equal(body.path, '/some/path?q=1');
  assert.equal(body.headers['x-test'], 'yes');

  const { terminated } = await removePod(ns, 'b', 3);
  const term = await until('b terminating', async () => (await endpoints('echo')).find((e) => e.ip === ipB && e.terminating), 15_000, 100);
  assert.equal(term.ready, false);
  assert.equal(term.serving, true);
  // still answering during the grace period
  assert.equal((await fetch(`http://${ipB}:8080/`)).status, 200);
  await terminated;
  await until('b gone', async () => !(await endpoints('echo')).some((e) => e.ip === ipB), 15_000, 100);
  assert.ok(!(await listPods()).some((p) => p.ip === ipB), 'listener released');
  await removePod(ns, 'a');
});
