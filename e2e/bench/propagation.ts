// Benchmarks (print figures; not tests). Against the real control plane (make cluster-up), Portico in-process as
// its ServiceAccount, real nginx and echo pods:
//   1. endpoint propagation: pod becomes Ready → first 200 answered by that pod through Portico (no reload),
//      also split at the moment Portico's informer saw the EndpointSlice change;
//   2. new Ingress → first 200 (data only, no reload) with 100 Ingresses already present.
// Usage: node e2e/bench/propagation.ts [trials=50] [ingressTrials=30]
import { readFileSync } from 'node:fs';
import { admin, ensureCluster, kubectl, uniqueNamespace } from '../harness/cluster.ts';
import { addPod, deleteNamespace, removePod, setPodReady } from '../harness/pods.ts';
import { request } from '../harness/http.ts';
import { startPortico } from '../harness/portico.ts';
import { Resources } from '../../reconcilers/resources.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import { summary } from './stats.ts';

const trials = Number(process.argv[2] ?? 50);
const ingressTrials = Number(process.argv[3] ?? 30);
await ensureCluster();
// Portico's default sync settings (no quiet window, 250 ms max wait).
const p = await startPortico(38080, ['--sync-quiet', '0ms', '--sync-max-wait', '250ms']);
const ns = await uniqueNamespace('bench');
const apply = (y: string) => kubectl(['apply', '-f', '-'], y);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  // ---- 1. endpoint propagation -----------------------------------------------------------------------------
  apply(`apiVersion: v1\nkind: Service\nmetadata: { name: prop, namespace: ${ns} }\nspec:\n  selector: { app: prop }\n  ports: [{ name: http, port: 80, targetPort: http }]\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: prop, namespace: ${ns} }\nspec:\n  ingressClassName: portico\n  rules:\n    - host: prop.bench\n      http:\n        paths:\n          - { path: /, pathType: Prefix, backend: { service: { name: prop, port: { number: 80 } } } }\n`);
  await addPod(ns, 'prop-base', { labels: { app: 'prop' } });
  for (;;) {
    const r = await request(p.httpPort, 'prop.bench', '/');
    if (r.status === 200) break;
    await sleep(20);
  }
  const slices = p.manager.informer<KubeObject>(Resources.EndpointSlice);
  let sliceSeenAt = 0;
  let watching = '';
  slices.addHandler({
    update: (_o, n) => {
      const eps = (n as unknown as { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }).endpoints ?? [];
      if (watching && eps.some((e) => e.addresses[0] === watching && e.conditions?.ready)) sliceSeenAt ||= performance.now();
    },
  });
  await p.gateway.flush(); // every pending sync done before counting
  const reloadsBefore = await p.metric('portico_nginx_reloads_total');
  const total: number[] = [];
  const portico: number[] = [];
  for (let i = 0; i < trials; i++) {
    const name = `prop-${i}`;
    sliceSeenAt = 0;
    watching = await addPod(ns, name, { labels: { app: 'prop' }, ready: false });
    // Flip Ready now: this is t0, the moment the cluster may start sending it traffic.
    const t0 = performance.now();
    await setPodReady(ns, name, true);
    let t1 = 0;
    const deadline = t0 + 10_000;
    // Four concurrent probes so a 1-in-2 round-robin share is caught within about a millisecond.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (!t1 && performance.now() < deadline) {
          const r = await request(p.httpPort, 'prop.bench', '/');
          if (r.status === 200 && r.json().pod === name && !t1) t1 = performance.now();
        }
      }),
    );
    if (!t1) throw new Error(`trial ${i}: pod never answered`);
    total.push(t1 - t0);
    if (sliceSeenAt) portico.push(t1 - sliceSeenAt);
    watching = '';
    await removePod(ns, name);
    await sleep(100);
  }
  const reloads = (await p.metric('portico_nginx_reloads_total')) - reloadsBefore;
  console.log(`[propagation] pod Ready → first 200 from it (incl. kube-controller-manager EndpointSlice update): ${summary(total)}`);
  console.log(`[propagation] EndpointSlice seen by Portico → first 200 from the pod (Portico + nginx only):  ${summary(portico)}`);
  console.log(`[propagation] nginx reloads during ${trials} trials: ${reloads}`);

  // ---- 2. new Ingress → served, with 100 present ------------------------------------------------------------
  const many: string[] = [];
  for (let i = 0; i < 100; i++) {
    many.push(`apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: pre-${i}, namespace: ${ns} }\nspec:\n  ingressClassName: portico\n  rules:\n    - host: pre-${i}.bench\n      http:\n        paths:\n          - { path: /, pathType: Prefix, backend: { service: { name: prop, port: { number: 80 } } } }\n`);
  }
  apply(many.join('---\n'));
  for (;;) {
    const r = await request(p.httpPort, 'pre-99.bench', '/');
    if (r.status === 200) break;
    await sleep(50);
  }
  await sleep(500);
  const served: number[] = [];
  for (let i = 0; i < ingressTrials; i++) {
    const host = `new-${i}.bench`;
    const body = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: `new-${i}`, namespace: ns },
      spec: { ingressClassName: 'portico', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'prop', port: { number: 80 } } } }] } }] },
    };
    const t0 = performance.now();
    await admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, { body });
    for (;;) {
      const r = await request(p.httpPort, host, '/');
      if (r.status === 200) break;
      await sleep(2);
    }
    served.push(performance.now() - t0);
    await sleep(300);
  }
  console.log(`[new-ingress] create Ingress → first 200 on its host, 100+ Ingresses present (data only): ${summary(served)}`);
  const conf = readFileSync(p.gateway.nginx.confPath, 'utf8');
  console.log(`[new-ingress] nginx.conf with ${100 + ingressTrials + 1} Ingresses: ${(conf.length / 1024).toFixed(0)} KiB`);
} finally {
  await p.stop();
  await deleteNamespace(ns);
}
process.exit(0);
