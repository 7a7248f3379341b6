// Benchmark: Gateway API route changes with N HTTPRoutes present, through the real API server, Portico IN-PROCESS
// (startPortico, its ServiceAccount, real nginx), one echo pod behind one Service. The HTTPRoute counterpart of
// new-ingress.ts, plus gateway-api-bench's "hitless" test in Portico's own version.
//
// For each size N:
//   1. in a fresh namespace: one echo pod and Service, a GatewayClass of this run, a Gateway (one HTTP listener) and N
//      HTTPRoutes (one unique hostname each, all to that Service), created BEFORE Portico starts;
//   2. Portico starts (default sync settings) and the benchmark waits until every 100th host and the last one
//      answer 200 on the Gateway's port (the pod port of the Service Portico writes for the Gateway);
//   3. first 200: `trials` times, POST one more HTTPRoute (new hostname) and poll it every ~2 ms until it answers
//      200, timed from just before the POST (10 s deadline per trial: a timeout is a failed trial);
//   4. hitless: while 4 clients send requests without pause to 8 hosts whose routes exist throughout (and whose
//      routes are edited meanwhile: a request header added and removed again, each edit a new generation), the
//      benchmark creates and deletes `churn` other HTTPRoutes; every answer that is not 200 is a failed request.
// It prints, per size, the latency percentiles, the nginx reloads during the trials and the churn (route changes are
// data: must be 0), and the churn's request count and failures.
//
// Usage: node e2e/bench/new-httproute.ts [sizes=100,10000] [trials=50] [churn=200]. Needs `make cluster-up`.
// Bounded: a hard deadline of 25 minutes per size; the churn's load is 4 clients for as long as the churn lasts.
import { admin, ensureCluster, uniqueNamespace } from '../harness/cluster.ts';
import { addPod, deleteNamespace } from '../harness/pods.ts';
import { request } from '../harness/http.ts';
import { startPortico, type RunningPortico } from '../harness/portico.ts';
import { isNotFound } from '../../operator/kube/client.ts';
import { percentile } from './stats.ts';

const SIZES = (process.argv[2] ?? '100,10000').split(',').map((s) => Number(s.trim()));
const TRIALS = Number(process.argv[3] ?? 50);
const CHURN = Number(process.argv[4] ?? 200);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1) || !Number.isInteger(TRIALS) || TRIALS < 1 || !Number.isInteger(CHURN) || CHURN < 0) {
  console.error('usage: node e2e/bench/new-httproute.ts [sizes=100,10000] [trials=50] [churn=200]');
  process.exit(2);
}
const BASE = 51180;
const CONC = 24;
const SIZE_DEADLINE_MS = 25 * 60_000;
const TRIAL_DEADLINE_MS = 10_000;
const RUN = Date.now().toString(36);
const CLASS = `portico-newhr-${RUN}`;
const CONTROLLER = `portico.dev/newhr-${RUN}`;
const GW = '/apis/gateway.networking.k8s.io/v1';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await ensureCluster();
const api = admin();

async function pool<T>(items: T[], fn: (x: T) => Promise<void>, conc = CONC): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (i < items.length) await fn(items[i++] as T);
  }));
}

const routeBody = (name: string, host: string, header?: string) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name },
  spec: {
    parentRefs: [{ name: 'gw' }],
    hostnames: [host],
    rules: [{ ...(header ? { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-bench', value: header }] } }] } : {}), backendRefs: [{ name: 'echo', port: 80 }] }],
  },
});

class Deadline extends Error {}

async function runSize(n: number): Promise<string> {
  const t0 = performance.now();
  const check = (what: string) => {
    if (performance.now() - t0 > SIZE_DEADLINE_MS) throw new Deadline(`N=${n}: hard deadline of ${SIZE_DEADLINE_MS / 60_000} min passed while ${what}`);
  };
  const ns = await uniqueNamespace(`newhr-${n}`);
  const host = (i: number) => `h${i}.n${n}.${RUN}.new-httproute.test`;
  const routes = `${GW}/namespaces/${ns}/httproutes`;
  let p: RunningPortico | undefined;
  try {
    await addPod(ns, 'echo', { labels: { app: 'echo' } });
    for (const [name, selector] of [['echo', { app: 'echo' }], ['portico', { app: `portico-${RUN}` }]] as const) {
      await api.request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector, ports: [{ port: 80, targetPort: 8080 }] } } });
    }
    await api.request('POST', `${GW}/namespaces/${ns}/gateways`, {
      body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw' }, spec: { gatewayClassName: CLASS, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] } },
    });
    let created = 0;
    await pool(Array.from({ length: n }, (_, i) => i), async (i) => {
      check(`creating HTTPRoutes (${created} of ${n} created)`);
      await api.request('POST', routes, { body: routeBody(`r${i}`, host(i)) });
      if (++created % 1000 === 0) console.log(`[new-httproute] N=${n}: ${created} HTTPRoutes created (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    });
    for (;;) {
      const l = await api.request<{ items: { endpoints?: { conditions?: { ready?: boolean } }[] }[] }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { query: { labelSelector: 'kubernetes.io/service-name=echo' } });
      if (l.items.some((s) => s.endpoints?.some((e) => e.conditions?.ready))) break;
      check('waiting for the EndpointSlice');
      await sleep(200);
    }
    const tCreated = performance.now();
    console.log(`[new-httproute] N=${n}: ${n} HTTPRoutes created in ${((tCreated - t0) / 1000).toFixed(1)} s; starting Portico`);

    p = await startPortico(BASE, [
      '--sync-quiet', '0ms', '--sync-max-wait', '250ms',
      '--enable-gateway-api', 'true', '--gateway-controller-name', CONTROLLER, '--publish-service', `${ns}/portico`,
      '--controller-class', `portico.dev/newhr-ingress-${RUN}`, '--ingress-class', `none-${RUN}`, '--configmap', `${ns}/portico`,
      ...(process.env.PORTICO_BENCH_FLAGS ?? '').split(' ').filter(Boolean),
    ]);
    const running = p;
    // The Gateway's pod port: the targetPort of the Service Portico writes for it.
    let port = 0;
    while (!port) {
      check('waiting for the Gateway\'s Service');
      const l = await api.request<{ items: { metadata: { annotations?: Record<string, string> }; spec: { ports: { targetPort: number }[] } }[] }>('GET', `/api/v1/namespaces/${ns}/services`, { query: { labelSelector: 'portico.dev/gateway' } });
      port = l.items.find((s) => s.metadata.annotations?.['portico.dev/gateway'] === `${ns}/gw`)?.spec.ports[0]?.targetPort ?? 0;
      if (!port) await sleep(100);
    }
    const sample = [...Array.from({ length: Math.ceil(n / 100) }, (_, k) => k * 100), n - 1].filter((i, k, a) => a.indexOf(i) === k);
    const pending = new Set(sample);
    while (pending.size) {
      await pool([...pending], async (i) => {
        if ((await request(port, host(i), '/', { timeoutMs: 5_000 })).status === 200) pending.delete(i);
      }, 8);
      if (!pending.size) break;
      check(`waiting for the sampled hosts (${pending.size} of ${sample.length} not served)`);
      await sleep(100);
    }
    console.log(`[new-httproute] N=${n}: Portico start → ${sample.length} sampled hosts answer 200 in ${((performance.now() - tCreated) / 1000).toFixed(1)} s`);
    const idle = async () => {
      while (!(running.gateway.structural.state === 'idle' && !running.gateway.structural.dirty)) {
        check('waiting for the structural lane to be idle');
        await sleep(10);
      }
    };
    await idle();
    const reloads0 = await running.metric('portico_nginx_reloads_total', { result: 'success' });
    const histMark = Date.now();
    const tr0 = { ...running.gateway.translator.stats };

    // ---- first 200 ----------------------------------------------------------------------------------------------
    const lat: number[] = [];
    const failed: string[] = [];
    for (let t = 0; t < TRIALS; t++) {
      check(`trial ${t + 1} of ${TRIALS}`);
      const h = `new${t}.n${n}.${RUN}.new-httproute.test`;
      const start = performance.now();
      await api.request('POST', routes, { body: routeBody(`new-${t}`, h) });
      let last = '';
      let ok = false;
      while (performance.now() - start < TRIAL_DEADLINE_MS) {
        const r = await request(port, h, '/', { timeoutMs: TRIAL_DEADLINE_MS });
        if (r.status === 200) {
          ok = true;
          break;
        }
        last = r.status ? String(r.status) : (r.error ?? 'error');
        await sleep(2);
      }
      if (ok) lat.push(performance.now() - start);
      else {
        failed.push(h);
        console.log(`[new-httproute] N=${n}: trial ${t + 1}: ${h} not served within ${TRIAL_DEADLINE_MS / 1000} s (last answer: ${last})`);
      }
      await idle();
    }
    const reloadsTrials = (await running.metric('portico_nginx_reloads_total', { result: 'success' })) - reloads0;
    const f = (v: number) => `${v.toFixed(1)} ms`;
    const stats = lat.length ? `p50 ${f(percentile(lat, 50))}, p90 ${f(percentile(lat, 90))}, p99 ${f(percentile(lat, 99))}, max ${f(Math.max(...lat))}` : 'none served';
    const syncs = running.gateway.history.filter((r) => r.at >= histMark && r.lane === 'structural').map((r) => r.ms);
    const tr = running.gateway.translator.stats;
    if (syncs.length) console.log(`[new-httproute] N=${n}: ${syncs.length} structural syncs during the trials: ${f(percentile(syncs, 50))} p50, ${f(Math.max(...syncs))} max; translations ${tr.scoped - tr0.scoped} scoped, ${tr.full - tr0.full} full`);

    // ---- hitless: route churn under load ------------------------------------------------------------------------
    let churnLine = 'churn skipped';
    if (CHURN > 0) {
      const loaded = Array.from({ length: 8 }, (_, k) => Math.floor((k * n) / 8));
      const counts = { sent: 0, failed: 0 };
      const samples: string[] = [];
      let stop = false;
      const clients = Array.from({ length: 4 }, async (_, c) => {
        let k = c;
        while (!stop) {
          const i = loaded[k++ % loaded.length] as number;
          const r = await request(port, host(i), '/', { timeoutMs: 5_000 });
          counts.sent++;
          if (r.status !== 200) {
            counts.failed++;
            if (samples.length < 5) samples.push(`${host(i)}: ${r.status || r.error}`);
          }
        }
      });
      const reloadsBefore = await running.metric('portico_nginx_reloads_total', { result: 'success' });
      const tChurn = performance.now();
      let edits = 0;
      await pool(Array.from({ length: CHURN }, (_, i) => i), async (i) => {
        check(`churn ${i} of ${CHURN}`);
        const name = `churn-${i}`;
        await api.request('POST', routes, { body: routeBody(name, `churn${i}.n${n}.${RUN}.new-httproute.test`) });
        // Every fourth step edits a loaded route (a header added, then removed): a new generation of a served route.
        if (i % 4 === 0) {
          const j = loaded[(i / 4) % loaded.length] as number;
          const cur = await api.request<{ metadata: { resourceVersion: string } }>('GET', `${routes}/r${j}`);
          const body = routeBody(`r${j}`, host(j), i % 8 === 0 ? `edit-${i}` : undefined);
          await api.request('PUT', `${routes}/r${j}`, { body: { ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata.resourceVersion } } });
          edits++;
        }
        await api.request('DELETE', `${routes}/${name}`);
      }, 4);
      await idle();
      stop = true;
      await Promise.all(clients);
      const churnS = (performance.now() - tChurn) / 1000;
      const reloadsChurn = (await running.metric('portico_nginx_reloads_total', { result: 'success' })) - reloadsBefore;
      churnLine = `churn: ${CHURN} HTTPRoutes created and deleted and ${edits} served routes edited in ${churnS.toFixed(1)} s under load: ${counts.sent} requests, ${counts.failed} failed${samples.length ? ` (e.g. ${samples.join('; ')})` : ''}, reloads ${reloadsChurn}`;
      console.log(`[new-httproute] N=${n}: ${churnLine}`);
    }
    const line = `[new-httproute] N=${n}: first 200 ${stats} (${TRIALS} trials${failed.length ? `, ${failed.length} FAILED` : ''}), reloads during trials: ${reloadsTrials}; ${churnLine}`;
    console.log(line);
    return line;
  } finally {
    if (p) await p.stop();
    await deleteNamespace(ns);
  }
}

let watchdog: NodeJS.Timeout | undefined;
const lines: string[] = [];
let code = 0;
try {
  await api.request('POST', `${GW}/gatewayclasses`, { body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: CLASS }, spec: { controllerName: CONTROLLER } } });
  for (const n of SIZES) {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      console.error(`[new-httproute] N=${n}: hung past ${SIZE_DEADLINE_MS / 60_000 + 2} min; exiting (namespace and GatewayClass ${CLASS} may be left behind)`);
      process.exit(1);
    }, SIZE_DEADLINE_MS + 2 * 60_000);
    try {
      lines.push(await runSize(n));
    } catch (e) {
      code = 1;
      console.error(`[new-httproute] N=${n}: ${e instanceof Deadline ? e.message : String((e as Error).stack ?? e)}`);
      if (!(e instanceof Deadline)) break;
    }
  }
} finally {
  clearTimeout(watchdog);
  try {
    await api.request('DELETE', `${GW}/gatewayclasses/${CLASS}`);
  } catch (e) {
    if (!isNotFound(e)) console.error(`[new-httproute] could not delete GatewayClass ${CLASS}: ${String(e)}`);
  }
}
if (lines.length > 1) for (const l of lines) console.log(l);
process.exit(code);
