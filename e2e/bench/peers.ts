// make bench-peers: plain nginx, Portico and Traefik side by side, from one run, on the same API server, pods and
// machine, so every claim is relative to the others measured at the same time.
//   - Portico runs as its own process (app/node-flags.ts's flags; the compiled tree when built, as the image), one
//     nginx worker, per-request metrics on (the default);
//   - Traefik v3.6.12 built from its Go module (e2e/bench/peers/build-traefik.sh), GOMAXPROCS=1, provider throttling
//     off (its default waits 2 s before applying a change);
//   - plain nginx: one worker, a static upstream to the same backends, no access log.
// Figures:
//   1. req/s and p99 through each, wrk -t1 -c32 (pinned to the second core), alternated rounds; backends are a
//      static nginx on two pod addresses, so the proxy is what is measured;
//   2. new Ingress → first 200 on its host, timed from before the create;
//   3. pod Ready → first 200 from that pod (the Ready flip is the moment Kubernetes may send it traffic; it includes
//      kube-controller-manager's EndpointSlice update, the same for both controllers — one flip, both probed);
//   4. EndpointSlice write → first 200 from the added endpoint (a selectorless Service whose slice the benchmark
//      writes itself: what each controller adds after the API server has the slice);
//   5. controller RSS after the run, idle (Portico: the controller process; its nginx's PSS given apart).
// Usage: node e2e/bench/peers.ts [seconds=8] [rounds=3] [trials=30]
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { admin, ensureCluster, kubectl, uniqueNamespace } from '../harness/cluster.ts';
import { addPod, deleteNamespace, removePod, setPodReady } from '../harness/pods.ts';
import { request } from '../harness/http.ts';
import { installPorticoRbac } from '../harness/portico.ts';
import { startPorticoProcess } from '../harness/portico-process.ts';
import { porticoEntry } from '../harness/portico.ts';
import { startTraefik, TRAEFIK_INGRESS_CLASS } from '../harness/traefik.ts';
import { percentile } from './stats.ts';
import { startPlainNginx, startStaticBackends } from './static-backends.ts';
import { wrk, type WrkResult } from './wrk.ts';

const seconds = Number(process.argv[2] ?? 8);
const rounds = Number(process.argv[3] ?? 3);
const trials = Number(process.argv[4] ?? 30);
const PORTICO = 44080;
const PLAIN = 44180;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await ensureCluster();
await installPorticoRbac();
kubectl(['-n', 'portico-system', 'patch', 'configmap', 'portico', '--type=merge', '-p', '{"data":{"worker-processes":"1"}}']);
const ns = await uniqueNamespace('peers');
const dir = mkdtempSync(path.join(tmpdir(), 'portico-peers-'));
const children: ReturnType<typeof spawn>[] = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));
const classes = { portico: 'portico', traefik: TRAEFIK_INGRESS_CLASS } as const;
type Ctl = keyof typeof classes;
const ingress = (name: string, cls: string, host: string, svc: string) =>
  ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: ns }, spec: { ingressClassName: cls, rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: svc, port: { number: 80 } } } }] } }] } });
const createIngress = (body: object) => admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, { body });

const portico = await startPorticoProcess(PORTICO, ['--configmap', 'portico-system/portico']);
const traefik = await startTraefik({ ns });
const port: Record<Ctl, number> = { portico: portico.httpPort, traefik: traefik.port };
try {
  // ---- backends and plain nginx ---------------------------------------------------------------------------------
  const ips = await startStaticBackends(ns, dir, children);
  startPlainNginx(dir, 'p', PLAIN, ips, 'access_log off;', children);
  kubectl(['apply', '-f', '-'], `apiVersion: v1\nkind: Service\nmetadata: { name: static, namespace: ${ns} }\nspec:\n  selector: { app: static }\n  ports: [{ port: 80, targetPort: 9090 }]\n`);
  for (const c of Object.keys(classes) as Ctl[]) await createIngress(ingress(`static-${c}`, classes[c], 'bench.test', 'static'));
  for (let i = 0; ; i++) {
    const r = await Promise.all([port.portico, port.traefik, PLAIN].map((p) => request(p, 'bench.test', '/').catch(() => ({ status: 0, body: '' }))));
    if (r.every((x) => x.status === 200 && x.body === 'ok\n')) break;
    if (i > 300) throw new Error(`not serving: ${r.map((x) => x.status).join(', ')}`);
    await sleep(100);
  }

  // ---- 1. throughput ------------------------------------------------------------------------------------------
  const targets = { plain: PLAIN, portico: port.portico, traefik: port.traefik };
  const res: Record<keyof typeof targets, WrkResult[]> = { plain: [], portico: [], traefik: [] };
  for (const p of Object.values(targets)) wrk(p, Math.min(seconds, 3), { Host: 'bench.test' }); // warm-up
  for (let r = 0; r < rounds; r++) for (const [k, p] of Object.entries(targets)) res[k as keyof typeof targets].push(wrk(p, seconds, { Host: 'bench.test' }));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

  // ---- 2. new Ingress → first 200 -----------------------------------------------------------------------------
  const newIngress: Record<Ctl, number[]> = { portico: [], traefik: [] };
  for (let i = 0; i < trials; i++) {
    for (const c of (i % 2 ? ['traefik', 'portico'] : ['portico', 'traefik']) as Ctl[]) {
      const host = `new-${c}-${i}.bench.test`;
      const t0 = performance.now();
      await createIngress(ingress(`new-${c}-${i}`, classes[c], host, 'static'));
      for (;;) {
        const r = await request(port[c], host, '/').catch(() => ({ status: 0 }));
        if (r.status === 200) break;
        if (performance.now() - t0 > 30_000) throw new Error(`${c}: ${host} never served`);
        await sleep(1);
      }
      newIngress[c].push(performance.now() - t0);
    }
  }

  // ---- 3. pod Ready → first 200 from it (one flip, both controllers probed) -------------------------------------
  kubectl(['apply', '-f', '-'], `apiVersion: v1\nkind: Service\nmetadata: { name: prop, namespace: ${ns} }\nspec:\n  selector: { app: prop }\n  ports: [{ name: http, port: 80, targetPort: http }]\n`);
  for (const c of Object.keys(classes) as Ctl[]) await createIngress(ingress(`prop-${c}`, classes[c], `prop-${c}.bench.test`, 'prop'));
  await addPod(ns, 'prop-base', { labels: { app: 'prop' } });
  for (const c of Object.keys(classes) as Ctl[]) {
    for (let i = 0; (await request(port[c], `prop-${c}.bench.test`, '/').catch(() => ({ status: 0 }))).status !== 200; i++) {
      if (i > 600) throw new Error(`${c}: prop never served`);
      await sleep(50);
    }
  }
  /** Until `pod` answers through controller c (4 probes in parallel: a 1-in-2 share is caught within a ms or so). */
  const firstFrom = async (c: Ctl, host: string, pod: string, t0: number): Promise<number> => {
    let t1 = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (!t1 && performance.now() - t0 < 10_000) {
        const r = await request(port[c], host, '/').catch(() => undefined);
        if (r?.status === 200 && !t1 && (r.json() as { pod?: string }).pod === pod) t1 = performance.now();
      }
    }));
    if (!t1) throw new Error(`${c}: ${pod} never answered on ${host}`);
    return t1 - t0;
  };
  const ready: Record<Ctl, number[]> = { portico: [], traefik: [] };
  for (let i = 0; i < trials; i++) {
    const name = `prop-${i}`;
    await addPod(ns, name, { labels: { app: 'prop' }, ready: false });
    const t0 = performance.now();
    await setPodReady(ns, name, true);
    const [a, b] = await Promise.all([firstFrom('portico', 'prop-portico.bench.test', name, t0), firstFrom('traefik', 'prop-traefik.bench.test', name, t0)]);
    ready.portico.push(a);
    ready.traefik.push(b);
    await removePod(ns, name);
    await sleep(150);
  }

  // ---- 4. EndpointSlice write → first 200 from the endpoint it adds -------------------------------------------
  kubectl(['apply', '-f', '-'], `apiVersion: v1\nkind: Service\nmetadata: { name: manual, namespace: ${ns} }\nspec:\n  ports: [{ name: http, port: 80, targetPort: 8080 }]\n`);
  const baseIp = await addPod(ns, 'manual-base', { labels: { app: 'manual' } });
  const slicePath = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
  const endpoint = (ip: string, pod: string) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: false }, targetRef: { kind: 'Pod', namespace: ns, name: pod } });
  const slice = (eps: object[]) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'manual-1', namespace: ns, labels: { 'kubernetes.io/service-name': 'manual' } }, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: eps });
  await admin().request('POST', slicePath, { body: slice([endpoint(baseIp, 'manual-base')]) });
  for (const c of Object.keys(classes) as Ctl[]) {
    await createIngress(ingress(`manual-${c}`, classes[c], `manual-${c}.bench.test`, 'manual'));
    for (let i = 0; (await request(port[c], `manual-${c}.bench.test`, '/').catch(() => ({ status: 0 }))).status !== 200; i++) {
      if (i > 600) throw new Error(`${c}: manual never served`);
      await sleep(50);
    }
  }
  const sliceWrite: Record<Ctl, number[]> = { portico: [], traefik: [] };
  for (let i = 0; i < trials; i++) {
    const name = `manual-${i}`;
    const ip = await addPod(ns, name, { labels: { app: 'manual' } });
    const t0 = performance.now();
    await admin().request('PUT', `${slicePath}/manual-1`, { body: slice([endpoint(baseIp, 'manual-base'), endpoint(ip, name)]) });
    const [a, b] = await Promise.all([firstFrom('portico', 'manual-portico.bench.test', name, t0), firstFrom('traefik', 'manual-traefik.bench.test', name, t0)]);
    sliceWrite.portico.push(a);
    sliceWrite.traefik.push(b);
    await admin().request('PUT', `${slicePath}/manual-1`, { body: slice([endpoint(baseIp, 'manual-base')]) });
    await removePod(ns, name);
    await sleep(150);
  }

  // ---- 5. memory, idle ------------------------------------------------------------------------------------------
  await sleep(20_000);
  const mem = { portico: portico.rssMB(), nginx: portico.nginxPssMB(), traefik: traefik.rssMB() };
  const reloads = await portico.metric('portico_nginx_reloads_total');

  // ---- the table ------------------------------------------------------------------------------------------------
  const rps = (k: keyof typeof targets) => median(res[k].map((x) => x.rps));
  const cpu = (k: keyof typeof targets) => median(res[k].map((x) => x.cpuUs));
  const p99 = (k: keyof typeof targets) => {
    const xs = res[k].map((x) => x.p99);
    return `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)} ms`;
  };
  const pp = (xs: number[]) => `${percentile(xs, 50).toFixed(0)} / ${percentile(xs, 90).toFixed(0)} / ${percentile(xs, 99).toFixed(0)} ms`;
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const lines = [
    row(['figure', 'plain nginx', 'Portico', 'Traefik v3.6.12']),
    row(['---', '---', '---', '---']),
    row([`req/s, median of ${rounds} × ${seconds} s rounds (wrk -t1 -c32)`, rps('plain').toFixed(0), `${rps('portico').toFixed(0)} (${(rps('portico') / rps('plain')).toFixed(2)})`, `${rps('traefik').toFixed(0)} (${(rps('traefik') / rps('plain')).toFixed(2)})`]),
    row(['p99 over the rounds', p99('plain'), p99('portico'), p99('traefik')]),
    // What one core serves: the CPU time (user + system) the serving process spent per request, median round (nginx's
    // worker; Traefik's process), which wrk and the backends sharing the cores do not move as they move req/s.
    row(['CPU per request (µs, median round) → requests one core serves vs plain', cpu('plain').toFixed(1), `${cpu('portico').toFixed(1)} (${(cpu('plain') / cpu('portico')).toFixed(2)})`, `${cpu('traefik').toFixed(1)} (${(cpu('plain') / cpu('traefik')).toFixed(2)})`]),
    row([`new Ingress → first 200, p50 / p90 / p99 (${trials} each)`, '—', pp(newIngress.portico), pp(newIngress.traefik)]),
    row([`pod Ready → first 200 from it, p50 / p90 / p99 (${trials} flips)`, '—', pp(ready.portico), pp(ready.traefik)]),
    row([`EndpointSlice write → first 200 from the new endpoint, p50 / p90 / p99 (${trials})`, '—', pp(sliceWrite.portico), pp(sliceWrite.traefik)]),
    row(['controller RSS, idle after the run', '—', `${mem.portico.toFixed(0)} MB (+ nginx ${mem.nginx.toFixed(0)} MB PSS)`, `${mem.traefik.toFixed(0)} MB`]),
  ];
  console.log(`[peers] Portico ${porticoEntry().label}, nginx reloads during the run: ${reloads}; one nginx worker, Traefik GOMAXPROCS=1`);
  for (const l of lines) console.log(l);
  const half = (k: 'ready' | 'sliceWrite') => {
    const m = k === 'ready' ? ready : sliceWrite;
    return [50, 90].map((q) => `p${q} ${(percentile(m.portico, q) / percentile(m.traefik, q)).toFixed(2)}`).join(', ');
  };
  console.log(`[peers] Portico / Traefik: pod Ready → 200 ${half('ready')}; slice write → 200 ${half('sliceWrite')}`);
} finally {
  for (const c of children) c.kill('SIGQUIT');
  kubectl(['-n', 'portico-system', 'patch', 'configmap', 'portico', '--type=json', '-p', '[{"op":"remove","path":"/data"}]']);
  await portico.stop();
  await traefik.stop();
  await deleteNamespace(ns);
}
process.exit(0);
