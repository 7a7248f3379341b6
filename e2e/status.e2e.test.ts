// Status publishing with two replicas: only the leader writes status.loadBalancer; when it goes away the other
// one continues; an Ingress Portico stops serving has the address cleared.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, kubectl, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';

let a: RunningPortico | undefined;
let b: RunningPortico | undefined;
let ns: string;

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('st');
  const flags = ['--publish-status-address', '192.0.2.10,lb.example.test', '--election-id', `status-e2e-${Date.now().toString(36)}`, '--lease-duration', '6s', '--renew-deadline', '4s', '--retry-period', '1s'];
  a = await startPortico(29080, flags);
  b = await startPortico(29180, flags);
});
after(async () => {
  await a?.stop();
  await b?.stop();
  if (ns) await deleteNamespace(ns);
});

const statusOf = async (name: string) =>
  (await admin().request<{ status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } }>('GET', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/${name}`)).status?.loadBalancer?.ingress ?? [];
const ingress = (name: string, cls = 'portico') =>
  kubectl(['apply', '-f', '-'], `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: ${name}, namespace: ${ns} }\nspec:\n  ingressClassName: ${cls}\n  rules:\n    - host: ${name}.${ns}.test\n      http:\n        paths:\n          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }\n`);
const EXPECTED = [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }];

test('only the leader writes Ingress status; the other replica takes over; a dropped Ingress is cleared', async () => {
  kubectl(['apply', '-f', '-'], `apiVersion: v1\nkind: Service\nmetadata: { name: web, namespace: ${ns} }\nspec:\n  selector: { app: web }\n  ports: [{ port: 80, targetPort: 8080 }]\n`);
  await addPod(ns, 'web-1', { labels: { app: 'web' } });
  const leader = await until('a leader', () => (a?.manager.isLeader() ? a : b?.manager.isLeader() ? b : undefined), 20_000);
  const follower = leader === a ? b : a;
  assert.ok(follower && !follower.manager.isLeader(), 'exactly one leader');
  ingress('first');
  await until('status published on first', async () => JSON.stringify(await statusOf('first')) === JSON.stringify(EXPECTED));
  assert.ok((await leader.metric('portico_status_updates_total')) >= 1);
  assert.equal(await follower.metric('portico_status_updates_total'), 0, 'the non-leader never writes');

  await leader.stop();
  if (leader === a) a = undefined;
  else b = undefined;
  await until('the other replica leads', () => follower.manager.isLeader(), 15_000);
  ingress('second');
  await until('status published on second by the new leader', async () => JSON.stringify(await statusOf('second')) === JSON.stringify(EXPECTED));
  assert.ok((await follower.metric('portico_status_updates_total')) >= 1);

  ingress('second', 'other-controller');
  await until('status cleared when Portico stops serving it', async () => (await statusOf('second')).length === 0);
  assert.equal(JSON.stringify(await statusOf('first')), JSON.stringify(EXPECTED), 'others untouched');
});
