// Benchmark: new Ingress → first 200 on its host, with N Ingresses already served. Through the real API server,
// Portico IN-PROCESS (startPortico, its ServiceAccount, real nginx), one echo pod behind one Service.
//
// For each size N:
//   1. in a fresh namespace: one echo pod, one Service, then N Ingresses (one unique host each, all to that
//      Service) created through the API server (24 POSTs in flight) BEFORE Portico starts;
//   2. Portico starts (with Portico's default sync settings: no quiet window, 250 ms max wait) and the benchmark waits until every 100th host and the last one answer 200;
//   3. `trials` times: POST one more Ingress (new host, same Service) and poll that host every ~2 ms until it
//      answers 200 (10 s deadline per trial; a timeout is a failed trial and is printed). Time is measured from
//      just before the POST. Between trials it waits until the structural lane is idle again.
// It prints, per size, the latency percentiles, the nginx reloads during the trials (delta of
// portico_nginx_reloads_total{result="success"}; routes are data, so it must be 0) and the size of nginx.conf.
//
// Isolation: the Ingresses use an IngressClass of this run (its own controller value, passed to Portico with
// --controller-class/--ingress-class) and Portico reads a ConfigMap of this run's namespace (absent: defaults).
// So other Porticos on the cluster (e.g. an e2e run) never serve these Ingresses, and this Portico never sees
// theirs nor their edits of the shared portico-system/portico ConfigMap (which would reload nginx).
//
// Usage: node e2e/bench/new-ingress.ts [sizes=100,10000] [trials=50]. Needs `make cluster-up`. Bounded: a hard
// deadline of 25 minutes per size (the run stops, cleans up and exits 1 past it).
import { existsSync, statSync } from 'node:fs';
import { admin, ensureCluster, uniqueNamespace } from '../harness/cluster.ts';
import { addPod, deleteNamespace } from '../harness/pods.ts';
import { request } from '../harness/http.ts';
import { startPortico, type RunningPortico } from '../harness/portico.ts';
import { isNotFound } from '../../operator/kube/client.ts';
import { percentile } from './stats.ts';

const SIZES = (process.argv[2] ?? '100,10000').split(',').map((s) => Number(s.trim()));
const TRIALS = Number(process.argv[3] ?? 50);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1) || !Number.isInteger(TRIALS) || TRIALS < 1) {
  console.error('usage: node e2e/bench/new-ingress.ts [sizes=100,10000] [trials=50]');
  process.exit(2);
}
const BASE = 51080;
const CONC = 24;
const SIZE_DEADLINE_MS = 25 * 60_000;
const TRIAL_DEADLINE_MS = 10_000;
// Unique per run: a namespace of an earlier run may still be terminating.
const RUN = Date.now().toString(36);
const CLASS = `portico-newing-${RUN}`;
const CONTROLLER = `portico.dev/newing-${RUN}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await ensureCluster();
const api = admin();

async function pool<T>(items: T[], fn: (x: T) => Promise<void>, conc = CONC): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (i < items.length) await fn(items[i++] as T);
  }));
}

function ingressBody(name: string, host: string) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name },
    spec: {
      ingressClassName: CLASS,
      rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }],
    },
  };
}

class Deadline extends Error {}

async function runSize(n: number): Promise<string> {
  const t0 = performance.now();
  const check = (what: string) => {
    if (performance.now() - t0 > SIZE_DEADLINE_MS) throw new Deadline(`N=${n}: hard deadline of ${SIZE_DEADLINE_MS / 60_000} min passed while ${what}`);
  };
  const ns = await uniqueNamespace(`newing-${n}`);
  const host = (i: number) => `h${i}.n${n}.${RUN}.new-ingress.test`;
  const ingPath = `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`;
  let p: RunningPortico | undefined;
  try {
    // ---- objects, created before Portico starts ---------------------------------------------------------------
    await addPod(ns, 'echo', { labels: { app: 'echo' } });
    await api.request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo' }, spec: { selector: { app: 'echo' }, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    let created = 0;
    await pool(Array.from({ length: n }, (_, i) => i), async (i) => {
      check(`creating Ingresses (${created} of ${n} created)`);
      await api.request('POST', ingPath, { body: ingressBody(`i${i}`, host(i)) });
      if (++created % 1000 === 0) console.log(`[new-ingress] N=${n}: ${created} Ingresses created (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    });
    // The Service's EndpointSlice (kube-controller-manager) must list the pod as ready.
    for (;;) {
      const l = await api.request<{ items: { endpoints?: { conditions?: { ready?: boolean } }[] }[] }>(
        'GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { query: { labelSelector: 'kubernetes.io/service-name=echo' } },
      );
      if (l.items.some((s) => s.endpoints?.some((e) => e.conditions?.ready))) break;
      check('waiting for the EndpointSlice');
      await sleep(200);
    }
    const tCreated = performance.now();
    console.log(`[new-ingress] N=${n}: ${n} Ingresses created in ${((tCreated - t0) / 1000).toFixed(1)} s; starting Portico`);

    // ---- Portico ----------------------------------------------------------------------------------------------
    p = await startPortico(BASE, [
      '--sync-quiet', '0ms', '--sync-max-wait', '250ms',
      '--controller-class', CONTROLLER, '--ingress-class', CLASS, '--configmap', `${ns}/portico`,
      // PORTICO_BENCH_FLAGS: extra flags, e.g. "--enable-metrics=false" to measure without per-request metrics.
      ...(process.env.PORTICO_BENCH_FLAGS ?? '').split(' ').filter(Boolean),
    ]);
    const running = p;
    const sample = [...Array.from({ length: Math.ceil(n / 100) }, (_, k) => k * 100), n - 1].filter((i, k, a) => a.indexOf(i) === k);
    const pending = new Set(sample);
    let nextReport = performance.now() + 30_000;
    while (pending.size) {
      await pool([...pending], async (i) => {
        const r = await request(running.httpPort, host(i), '/', { timeoutMs: 5_000 });
        if (r.status === 200) pending.delete(i);
      }, 8);
      if (!pending.size) break;
      if (performance.now() > nextReport) {
        nextReport += 30_000;
        const i = [...pending][0] as number;
        const r = await request(running.httpPort, host(i), '/', { timeoutMs: 5_000 });
        console.log(`[new-ingress] N=${n}: ${pending.size} of ${sample.length} sampled hosts not served yet; e.g. ${host(i)}: ${r.status || r.error}`);
      }
      check(`waiting for the sampled hosts (${pending.size} of ${sample.length} not served)`);
      await sleep(100);
    }
    console.log(`[new-ingress] N=${n}: Portico start → ${sample.length} sampled hosts answer 200 in ${((performance.now() - tCreated) / 1000).toFixed(1)} s`);
    const idle = async () => {
      while (!(running.gateway.structural.state === 'idle' && !running.gateway.structural.dirty)) {
        check('waiting for the structural lane to be idle');
        await sleep(10);
      }
    };
    await idle();
    const reloads0 = await running.metric('portico_nginx_reloads_total', { result: 'success' });
    const histMark = Date.now();

    // ---- trials -----------------------------------------------------------------------------------------------
    const lat: number[] = [];
    const failed: string[] = [];
    for (let t = 0; t < TRIALS; t++) {
      check(`trial ${t + 1} of ${TRIALS}`);
      const h = `new${t}.n${n}.${RUN}.new-ingress.test`;
      const start = performance.now();
      await api.request('POST', ingPath, { body: ingressBody(`new-${t}`, h) });
      let last = '';
      let ok = false;
      while (performance.now() - start < TRIAL_DEADLINE_MS) {
        const r = await request(running.httpPort, h, '/', { timeoutMs: TRIAL_DEADLINE_MS });
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
        console.log(`[new-ingress] N=${n}: trial ${t + 1}: ${h} not served within ${TRIAL_DEADLINE_MS / 1000} s (last answer: ${last})`);
      }
      await idle();
    }
    const reloads = (await running.metric('portico_nginx_reloads_total', { result: 'success' })) - reloads0;
    const reloadRecords = running.gateway.history.filter((r) => r.at >= histMark && r.reload).length;
    const confPath = running.gateway.nginx.confPath;
    const confBytes = existsSync(confPath) ? statSync(confPath).size : NaN;
    const f = (v: number) => `${v.toFixed(1)} ms`;
    const stats = lat.length
      ? `p50 ${f(percentile(lat, 50))}, p90 ${f(percentile(lat, 90))}, p99 ${f(percentile(lat, 99))}, max ${f(Math.max(...lat))}`
      : 'none served';
    const line =
      `[new-ingress] N=${n}: first 200 ${stats} (${TRIALS} trials${failed.length ? `, ${failed.length} FAILED` : ''}), ` +
      `reloads during trials: ${reloads}${reloadRecords !== reloads ? ` (history: ${reloadRecords} reload syncs)` : ''}, nginx.conf bytes ${confBytes}`;
    // Where the time goes: the gateway's own syncs during the trials (translate, diff, push to Lua).
    const syncs = running.gateway.history.filter((r) => r.at >= histMark && r.lane === 'structural');
    const ms = syncs.map((r) => r.ms);
    const kb = syncs.map((r) => r.bytesSent / 1024);
    if (syncs.length) {
      console.log(`[new-ingress] N=${n}: ${syncs.length} structural syncs during the trials: ${f(percentile(ms, 50))} p50, ${f(Math.max(...ms))} max; pushed ${percentile(kb, 50).toFixed(1)} KiB p50, ${Math.max(...kb).toFixed(1)} KiB max`);
    }
    console.log(line);
    return line;
  } finally {
    if (p) await p.stop();
    await deleteNamespace(ns);
  }
}

// Last resort if something hangs outside the checked loops (e.g. an API call that never returns).
let watchdog: NodeJS.Timeout | undefined;
const lines: string[] = [];
let code = 0;
try {
  await api.request('POST', '/apis/networking.k8s.io/v1/ingressclasses', {
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: CLASS }, spec: { controller: CONTROLLER } },
  });
  for (const n of SIZES) {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      console.error(`[new-ingress] N=${n}: hung past ${SIZE_DEADLINE_MS / 60_000 + 2} min; exiting (namespace and IngressClass ${CLASS} may be left behind)`);
      process.exit(1);
    }, SIZE_DEADLINE_MS + 2 * 60_000);
    try {
      lines.push(await runSize(n));
    } catch (e) {
      code = 1;
      console.error(`[new-ingress] N=${n}: ${e instanceof Deadline ? e.message : String((e as Error).stack ?? e)}`);
      if (!(e instanceof Deadline)) break;
    }
  }
} finally {
  clearTimeout(watchdog);
  try {
    await api.request('DELETE', `/apis/networking.k8s.io/v1/ingressclasses/${CLASS}`);
  } catch (e) {
    if (!isNotFound(e)) console.error(`[new-ingress] could not delete IngressClass ${CLASS}: ${String(e)}`);
  }
}
if (lines.length > 1) for (const l of lines) console.log(l);
process.exit(code);
