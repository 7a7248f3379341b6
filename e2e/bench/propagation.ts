// Benchmarks (print figures; not tests). Against the real control plane (make cluster-up), Portico in-process as
// its ServiceAccount, real nginx and echo pods:
//   1. endpoint propagation: pod becomes Ready → first 200 answered by that pod through Portico (no reload),
//      also split at the moment Portico's informer saw the EndpointSlice change;
//   2. new Ingress → first 200 (data only, no reload) with 100 Ingresses already present;
//   3. where an endpoint change's time goes: a selectorless Service whose EndpointSlice the benchmark writes itself,
//      each stage timed from before the write — the API server's answer, watch delivery to Portico's informer, the
//      Service reconciler writing the model (work queue + reconcile), the data lane's push to nginx's Lua (started,
//      answered), and the first 200 from the new endpoint (a worker picks the new version up on its next request).
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

  // ---- 3. EndpointSlice write → first 200, by stage ---------------------------------------------------------
  {
    apply(`apiVersion: v1\nkind: Service\nmetadata: { name: manual, namespace: ${ns} }\nspec:\n  ports: [{ name: http, port: 80, targetPort: 8080 }]\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: manual, namespace: ${ns} }\nspec:\n  ingressClassName: portico\n  rules:\n    - host: manual.bench\n      http:\n        paths:\n          - { path: /, pathType: Prefix, backend: { service: { name: manual, port: { number: 80 } } } }\n`);
    const baseIp = await addPod(ns, 'manual-base', { labels: { app: 'manual' } });
    const slicePath = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    const endpoint = (ip: string, pod: string) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: false }, targetRef: { kind: 'Pod', namespace: ns, name: pod } });
    const slice = (eps: object[]) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'manual-1', namespace: ns, labels: { 'kubernetes.io/service-name': 'manual' } }, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: eps });
    await admin().request('POST', slicePath, { body: slice([endpoint(baseIp, 'manual-base')]) });
    for (;;) {
      const r = await request(p.httpPort, 'manual.bench', '/');
      if (r.status === 200) break;
      await sleep(20);
    }
    // Stage marks, set by hooks on Portico's own objects (this process runs it).
    const mark: Record<string, number> = {};
    let want = '';
    const hasWanted = (o: unknown) => ((o as { endpoints?: { addresses: string[] }[] }).endpoints ?? []).some((e) => e.addresses[0] === want);
    slices.addHandler({ update: (_o, n) => { if (want && !mark.informer && hasWanted(n)) mark.informer = performance.now(); } });
    const model = p.model as unknown as { setEndpointSlices: (key: string, s: unknown[]) => void };
    const setSlices = model.setEndpointSlices.bind(model);
    model.setEndpointSlices = (key, sl) => {
      setSlices(key, sl);
      if (want && !mark.model && key === `${ns}/manual` && JSON.stringify(sl).includes(`"${want}"`)) mark.model = performance.now();
    };
    const dyn = p.gateway.dynamic as unknown as { push: (d: { backends?: { upsert: Record<string, unknown> } }) => Promise<number> };
    const push = dyn.push.bind(dyn);
    dyn.push = async (d) => {
      const mine = want && !mark.pushStart && JSON.stringify(d.backends?.upsert ?? {}).includes(`"${want}"`);
      if (mine) mark.pushStart = performance.now();
      const r = await push(d);
      if (mine) mark.pushDone = performance.now();
      return r;
    };
    const stages: Record<string, number[]> = { apiAnswer: [], watch: [], reconcile: [], lane: [], push: [], firstOk: [], total: [] };
    for (let i = 0; i < trials; i++) {
      const name = `manual-${i}`;
      const ip = await addPod(ns, name, { labels: { app: 'manual' } });
      for (const k of Object.keys(mark)) delete mark[k];
      want = ip;
      const t0 = performance.now();
      await admin().request('PUT', `${slicePath}/manual-1`, { body: slice([endpoint(baseIp, 'manual-base'), endpoint(ip, name)]) });
      const tAnswer = performance.now();
      let t1 = 0;
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (!t1 && performance.now() - t0 < 10_000) {
          const r = await request(p.httpPort, 'manual.bench', '/');
          if (r.status === 200 && r.json().pod === name && !t1) t1 = performance.now();
        }
      }));
      if (!t1 || !mark.informer || !mark.model || !mark.pushStart || !mark.pushDone) throw new Error(`trial ${i}: missing a stage (${JSON.stringify(mark)}, first 200 ${t1})`);
      stages.apiAnswer!.push(tAnswer - t0);
      stages.watch!.push(mark.informer - t0);
      stages.reconcile!.push(mark.model - mark.informer);
      stages.lane!.push(mark.pushStart - mark.model);
      stages.push!.push(mark.pushDone - mark.pushStart);
      stages.firstOk!.push(t1 - mark.pushDone);
      stages.total!.push(t1 - t0);
      want = '';
      await admin().request('PUT', `${slicePath}/manual-1`, { body: slice([endpoint(baseIp, 'manual-base')]) });
      await removePod(ns, name);
      await sleep(100);
    }
    const names: Record<string, string> = {
      apiAnswer: 'write → API server answered (the slice stored)',
      watch: 'write → Portico\'s informer has it (watch delivery, decode)',
      reconcile: 'informer → model updated (work queue + Service reconciler)',
      lane: 'model → data lane push starts (lane scheduling, endpoint diff)',
      push: 'push to nginx\'s Lua → answered (JSON over the socket, stored)',
      firstOk: 'push answered → first 200 from the endpoint (worker picks it up; probes)',
      total: 'EndpointSlice write → first 200 from the new endpoint',
    };
    for (const [k, xs] of Object.entries(stages)) console.log(`[stages] ${names[k]}: ${summary(xs)}`);
  }

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
