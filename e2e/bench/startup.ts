// Start-up at scale through the real API server. N Ingresses (one host each; every 10th with its own TLS Secret),
// N Services over a pool of 50 echo pods, created BEFORE Portico starts; then Portico starts as a separate process
// (its ServiceAccount, leader election on) and the benchmark prints:
//   - process start → /readyz 200, and → every host answered by the right pod (TLS hosts: by SNI with their own
//     certificate — at the moment /readyz turns green every TLS host must already present its own certificate);
//   - controller RSS (now / peak), whether the leader ever lost its Lease, Events Portico posted about these
//     Ingresses (expected: none — they are all valid);
//   - endpoint propagation DURING a reload at this size: a change that still reloads (a new Ingress with a
//     never-seen directive profile) is made and, at once, a Service's only ready pod is replaced; time until the
//     new pod answers. (Plain Ingress changes no longer reload at all.)
// Usage: node e2e/bench/startup.ts [N=2000] [propagationTrials=10] (BENCH_KEEP=1: keep the objects afterwards;
// BENCH_REUSE=<namespace>: start against the objects a BENCH_KEEP=1 run of the same N left, instead of creating
// them again — 10,000 take about 20 minutes to create; BENCH_CREATE_ONLY=1: create them, print the namespace, stop; BENCH_HEAP_SNAPSHOT=<dir>: see below; BENCH_ENTRY=ts: run app/main.ts instead of the compiled controller the
// image runs — e2e/harness/portico.ts's porticoEntry). Needs `make cluster-up`. Bounded: a hard
// deadline of 20 minutes per phase.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import https from 'node:https';
import tls from 'node:tls';
import { createInterface } from 'node:readline';
import { execFileSync } from 'node:child_process';
import { admin, ensureCluster, serviceAccountKubeconfigFile, uniqueNamespace } from '../harness/cluster.ts';
import { addPod, deleteNamespace, removePod, setPodReady } from '../harness/pods.ts';
import { request } from '../harness/http.ts';
import { assertPortsFree, installPorticoRbac, porticoEntry, REPO_ROOT } from '../harness/portico.ts';
import { NODE_ENV, NODE_FLAGS } from '../../app/node-flags.ts';
import { summary } from './stats.ts';

const N = Number(process.argv[2] ?? 2000);
const TRIALS = Number(process.argv[3] ?? 10);
const PODS = 50;
const CONC = 24;
const DEADLINE_MS = 20 * 60_000;
const base = 47080;
await assertPortsFree([base, base + 1, base + 2, base + 3]);
await ensureCluster();
await installPorticoRbac();
const api = admin();
const REUSE = process.env.BENCH_REUSE;
const ns = REUSE ?? (await uniqueNamespace('startup'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pool<T>(items: T[], fn: (x: T) => Promise<void>, conc = CONC): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (i < items.length) await fn(items[i++] as T);
  }));
}

// One throw-away CA-less certificate per TLS host would cost N/10 openssl runs; one key + per-host certs is
// enough to tell "its own certificate" from the fallback: each cert's CN is its host.
function makeCert(host: string): { crt: string; key: string } {
  const out = execFileSync('bash', ['-c', `d=$(mktemp -d); openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=${host} -addext subjectAltName=DNS:${host} -keyout $d/k -out $d/c 2>/dev/null; cat $d/c; echo SPLIT; cat $d/k; rm -rf $d`], { encoding: 'utf8' });
  const [crt, key] = out.split('SPLIT\n') as [string, string];
  return { crt, key };
}

const idx = Array.from({ length: N }, (_, i) => i);
const tlsIdx = idx.filter((i) => i % 10 === 0);
// Unique per run: a namespace of an earlier run may still be terminating, and its (older) Ingresses would win.
// A reused namespace keeps its run id in the first Ingress's host.
const RUN = REUSE
  ? (/^h0\.([^.]+)\./.exec((await api.request<{ spec: { rules: { host: string }[] } }>('GET', `/apis/networking.k8s.io/v1/namespaces/${REUSE}/ingresses/i0`)).spec.rules[0]?.host ?? '')?.[1] ?? '')
  : Date.now().toString(36);
if (!RUN) throw new Error(`BENCH_REUSE=${REUSE}: no Ingress i0 of this benchmark there`);
const host = (i: number) => `h${i}.${RUN}.startup.test`;
let child: ReturnType<typeof spawn> | undefined;
try {
  // ---- objects, created before Portico runs -----------------------------------------------------------------
  const tc = performance.now();
  if (REUSE) {
    // What the propagation trials of the earlier run added goes; the N Ingresses, Services and pods stay.
    for (const [kind, list] of [['ingresses', '/apis/networking.k8s.io/v1'], ['services', '/api/v1'], ['pods', '/api/v1']] as const) {
      const items = (await api.request<{ items: { metadata: { name: string } }[] }>('GET', `${list}/namespaces/${ns}/${kind}`)).items;
      for (const it of items.filter((x) => /^(prop|extra-)/.test(x.metadata.name))) {
        if (kind === 'pods') await removePod(ns, it.metadata.name);
        else await api.request('DELETE', `${list}/namespaces/${ns}/${kind}/${it.metadata.name}`);
      }
    }
  }
  if (!REUSE) {
  const pods = Array.from({ length: PODS }, (_, k) => k);
  await pool(pods, async (k) => void (await addPod(ns, `p${k}`, { labels: { app: `a${k}` } })), 8);
  await pool(tlsIdx, async (i) => {
    const c = makeCert(host(i));
    await api.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: `t${i}` }, data: { 'tls.crt': Buffer.from(c.crt).toString('base64'), 'tls.key': Buffer.from(c.key).toString('base64') } },
    });
  }, 4);
  await pool(idx, async (i) => {
    await api.request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: `s${i}` }, spec: { selector: { app: `a${i % PODS}` }, ports: [{ port: 80, targetPort: 8080 }] } } });
    await api.request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
      body: {
        apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: `i${i}` },
        spec: {
          ingressClassName: 'portico',
          ...(i % 10 === 0 ? { tls: [{ hosts: [host(i)], secretName: `t${i}` }] } : {}),
          rules: [{ host: host(i), http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: `s${i}`, port: { number: 80 } } } }] } }],
        },
      },
    });
  });
  // Wait until kube-controller-manager has published an EndpointSlice for every Service.
  for (;;) {
    const l = await api.request<{ items: unknown[] }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`);
    if (l.items.length >= N) break;
    if (performance.now() - tc > DEADLINE_MS) throw new Error('EndpointSlices not published in time');
    await sleep(1000);
  }
  console.log(`[startup] created ${N} Ingresses (${tlsIdx.length} with TLS), ${N} Services, ${PODS} pods in ${((performance.now() - tc) / 1000).toFixed(1)} s`);
  }
  if (process.env.BENCH_CREATE_ONLY === '1') {
    console.log(`[startup] objects only: rerun with BENCH_REUSE=${ns}`);
    process.exit(0);
  }

  // ---- Portico starts -----------------------------------------------------------------------------------------
  const kubeconfig = await serviceAccountKubeconfigFile('portico-system', 'portico');
  const entry = porticoEntry();
  console.log(`[startup] controller: ${entry.label}`);
  const t0 = performance.now();
  // BENCH_HEAP_SNAPSHOT=<dir>: Portico writes a V8 heap snapshot there once every host is served (for profiling
  // the controller's memory: open it in Chrome DevTools, or summarize it with e2e/bench/heap-summary.ts).
  const snapDir = process.env.BENCH_HEAP_SNAPSHOT;
  // BENCH_NODE_FLAGS: extra Node flags for the controller (memory experiments; the image's own come after them).
  child = spawn(path.join(REPO_ROOT, 'node_modules/.bin/node'), [
    ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    ...(snapDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`] : []),
    ...NODE_FLAGS,
    entry.file, '--kubeconfig', kubeconfig, '--http-port', String(base), '--https-port', String(base + 1),
    '--status-port', String(base + 2), '--health-addr', `127.0.0.1:${base + 3}`, '--runtime-dir', path.join(REPO_ROOT, '.dev', 'nginx-startup'), '--access-log-path', path.join(REPO_ROOT, '.dev', 'nginx-startup', 'access.log'),
    '--election-id', `startup-${Date.now().toString(36)}`, '--log-level', process.env.LOG_LEVEL ?? 'info',
  ], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...NODE_ENV } });
  const logLines: { msg?: string; level?: string }[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    try {
      logLines.push(JSON.parse(l) as { msg?: string });
    } catch {
      // nginx access log lines share stdout; not JSON
    }
  });
  const rss = () => {
    const st = readFileSync(`/proc/${child?.pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)?.[1] ?? 0) / 1024;
    return { now: kb('VmRSS'), peak: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') };
  };
  // Where the RSS is: anonymous (heap, malloc) vs file-backed (the node binary's pages), and V8's own figures from
  // Portico's /metrics (prom-client's process metrics).
  const memDetail = async () => {
    const m = rss();
    const text = (await request(base + 3, 'x', '/metrics').catch(() => ({ body: '' }))).body;
    const metric = (name: string) =>
      text.split('\n').filter((l) => l.startsWith(`portico_process_${name}`) && !l.includes('space=')).reduce((a, l) => a + Number(l.split(' ').pop()), 0) / 1048576;
    const spaces = text.split('\n').filter((l) => l.startsWith('portico_process_nodejs_heap_space_size_used_bytes{'))
      .map((l) => `${/space="([^"]+)"/.exec(l)?.[1]} ${(Number(l.split(' ').pop()) / 1048576).toFixed(0)}`).filter((x) => !x.endsWith(' 0'));
    // Anonymous RSS by mapping: glibc's main heap ([heap]), its thread arenas (64 MB reservations), the rest (V8's
    // pages, thread stacks).
    const groups = new Map<string, number>();
    const files = new Map<string, number>();
    let name = '';
    let size = 0;
    for (const line of readFileSync(`/proc/${child?.pid}/smaps`, 'utf8').split('\n')) {
      const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
      if (head) {
        size = (parseInt(head[2] as string, 16) - parseInt(head[1] as string, 16)) / 1048576;
        name = head[3] || (size >= 16 ? `anon${Math.round(size)}M` : 'anon');
        continue;
      }
      const r = /^Anonymous:\s+(\d+) kB/.exec(line);
      if (r) groups.set(name, (groups.get(name) ?? 0) + Number(r[1]) / 1024);
      const f = /^Rss:\s+(\d+) kB/.exec(line);
      if (f && name.startsWith('/')) files.set(name, (files.get(name) ?? 0) + Number(f[1]) / 1024);
    }
    const anonBy = [...groups].filter(([, v]) => v >= 1).sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
    const fileBy = [...files].filter(([, v]) => v >= 1).sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, v]) => `${path.basename(k)} ${v.toFixed(0)}`).join(', ');
    const settles = text.split('\n').find((l) => l.startsWith('portico_memory_settles_total'))?.split(' ').pop() ?? '?';
    const settleSum = Number(text.split('\n').find((l) => l.startsWith('portico_memory_settle_duration_seconds_sum'))?.split(' ').pop() ?? 0);
    return `memory settles ${settles} (${(settleSum * 1000).toFixed(0)} ms in all); anon ${m.anon.toFixed(0)} (${anonBy}) + file ${m.file.toFixed(0)} (${fileBy}) MB; V8 heap used ${metric('nodejs_heap_size_used_bytes').toFixed(0)} of ${metric('nodejs_heap_size_total_bytes').toFixed(0)} MB (${spaces.join(', ')}), external ${metric('nodejs_external_memory_bytes').toFixed(0)} MB`;
  };
  // BENCH_HEAP_SNAPSHOT: one snapshot once every host is served, one after the idle minute (taken after the idle
  // RSS readings: writing a snapshot grows the heap it describes).
  // BENCH_HEAP_SNAPSHOT_AT=served|idle: only that one.
  const heapSnapshot = async (when: string) => {
    if (!snapDir || !child) return;
    const at = process.env.BENCH_HEAP_SNAPSHOT_AT;
    if (at && !when.startsWith(at === 'served' ? 'every' : 'idle')) return;
    const before = new Set(readdirSync(snapDir));
    child.kill('SIGUSR2');
    const t = performance.now();
    // The snapshot is written synchronously on Portico's main thread: it is complete once the file has appeared
    // and Portico answers again.
    let file: string | undefined;
    while (performance.now() - t < 180_000) {
      await sleep(500);
      file ??= readdirSync(snapDir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
      if (file && (await request(base + 3, 'x', '/readyz').catch(() => ({ status: 0 }))).status === 200) break;
    }
    console.log(`[startup] heap snapshot (${when}): ${file ? path.join(snapDir, file) : 'none written in 180 s'}`);
  };
  let tReady = 0;
  while (!tReady) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Portico exited before Ready (${child.exitCode ?? child.signalCode})`);
    const r = await request(base + 3, 'x', '/readyz').catch(() => ({ status: 0 }));
    if (r.status === 200) tReady = performance.now() - t0;
    else await sleep(50);
    if (performance.now() - t0 > DEADLINE_MS) throw new Error('never ready');
  }
  // At the moment of Ready: which TLS hosts present their own certificate?
  const certCN = (h: string) =>
    new Promise<string>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port: base + 1, servername: h, rejectUnauthorized: false }, () => {
        const cn = s.getPeerCertificate().subject?.CN;
        s.destroy();
        resolve(typeof cn === 'string' ? cn : '');
      });
      s.setTimeout(5_000, () => {
        s.destroy();
        resolve('timeout');
      });
      s.on('error', () => resolve('error'));
    });
  let wrongCert = 0;
  const wrongSample: string[] = [];
  await pool(tlsIdx, async (i) => {
    const cn = await certCN(host(i));
    if (cn !== host(i)) {
      wrongCert++;
      if (wrongSample.length < 3) wrongSample.push(`${host(i)} → ${cn || '(none)'}`);
    }
  }, 16);
  console.log(`[startup] Ready after ${(tReady / 1000).toFixed(1)} s; certificates checked${wrongSample.length ? `; e.g. ${wrongSample.join(', ')}` : ''}`);
  // TLS hosts redirect plain HTTP to HTTPS: ask them over TLS, by SNI.
  const httpsAgent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
  const podOf = (i: number) =>
    i % 10 !== 0
      ? request(base, host(i), '/').then((r) => (r.status === 200 ? (JSON.parse(r.body) as { pod?: string }).pod : `${r.status}`)).catch(() => 'error')
      : new Promise<string>((resolve) => {
          const req = https.get({ host: '127.0.0.1', port: base + 1, servername: host(i), headers: { host: host(i) }, path: '/', agent: httpsAgent, timeout: 10_000 }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve(res.statusCode === 200 ? ((JSON.parse(body) as { pod?: string }).pod ?? '') : String(res.statusCode)));
          });
          req.on('timeout', () => req.destroy(new Error('timeout')));
          req.on('error', () => resolve('error'));
        });
  const pending = new Set(idx);
  let nextReport = performance.now() + 30_000;
  while (pending.size) {
    if (performance.now() > nextReport) {
      nextReport += 30_000;
      const i = [...pending][0] as number;
      console.log(`[startup] still ${pending.size} hosts pending; e.g. ${host(i)}: ${await podOf(i)}`);
    }
    await pool([...pending], async (i) => {
      if ((await podOf(i)) === `p${i % PODS}`) pending.delete(i);
    }, 16);
    if (pending.size) await sleep(100);
    if (performance.now() - t0 > DEADLINE_MS) {
      const i = [...pending][0] as number;
      throw new Error(`${pending.size} hosts not served in time; e.g. ${host(i)}: ${await podOf(i)}`);
    }
  }
  const tServed = performance.now() - t0;
  const mem = rss();
  console.log(`[startup] memory once every host is served: ${await memDetail()}`);
  await heapSnapshot('every host served');
  const evs = await api.request<{ items: { reason?: string; reportingController?: string; regarding?: { kind?: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
  const ours = evs.items.filter((e) => e.reportingController === 'portico.dev/ingress-controller');
  const warnings = ours.filter((e) => e.reason !== 'Programmed');
  const leaseLost = logLines.filter((l) => /stepping down|lost the lease|lease update failed/i.test(l.msg ?? '')).length;
  const conf = readFileSync(path.join(REPO_ROOT, '.dev', 'nginx-startup', 'nginx.conf'), 'utf8');
  console.log(`[startup] ${N} Ingresses: process start → Ready ${(tReady / 1000).toFixed(1)} s; → every host served ${(tServed / 1000).toFixed(1)} s`);
  console.log(`[startup] TLS hosts presenting the fallback (or no) certificate at the moment of Ready: ${wrongCert} of ${tlsIdx.length}`);
  console.log(`[startup] controller RSS ${mem.now.toFixed(0)} MB now, peak ${mem.peak.toFixed(0)} MB; lease lost ${leaseLost}×; Events other than Programmed: ${warnings.length} (${[...new Set(warnings.map((w) => w.reason))].join(', ') || 'none'}); Programmed events ${ours.length - warnings.length}; nginx.conf ${(conf.length / 1048576).toFixed(1)} MB`);

  // After start, idle: nothing changes for 60 s (the controller settles its start-up burst once it is quiet, at most
  // once per 30 s: a reading in the first seconds may come before the settle that follows the start's last burst).
  const afterStart: number[] = [];
  for (let s = 0; s < 6; s++) {
    await sleep(10_000);
    afterStart.push(Math.round(rss().now));
  }
  console.log(`[startup] controller RSS after start, idle, every 10 s for 60 s: ${afterStart.join(', ')} MB; ${await memDetail()}`);

  // ---- endpoint propagation while a reload runs ----------------------------------------------------------------
  await api.request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'prop' }, spec: { selector: { app: 'prop' }, ports: [{ port: 80, targetPort: 8080 }] } } });
  await api.request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'prop' }, spec: { ingressClassName: 'portico', rules: [{ host: `prop.${RUN}.startup.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'prop', port: { number: 80 } } } }] } }] } },
  });
  let current = 'prop-0';
  await addPod(ns, current, { labels: { app: 'prop' } });
  for (;;) {
    const r = await request(base, `prop.${RUN}.startup.test`, '/').catch(() => undefined);
    if (r?.status === 200 && r.json().pod === current) break;
    await sleep(50);
    if (performance.now() - t0 > DEADLINE_MS * 2) throw new Error('prop host never served');
  }
  const reloadMs = async () => {
    const text = (await request(base + 3, 'x', '/metrics')).body;
    return text.split('\n').filter((l) => l.startsWith('portico_nginx_reloads_total')).reduce((s, l) => s + Number(l.split(' ').pop()), 0);
  };
  const lat: number[] = [];
  let duringReload = 0;
  for (let t = 1; t <= TRIALS; t++) {
    const next = `prop-${t}`;
    await addPod(ns, next, { labels: { app: 'prop' }, ready: false });
    const reloads0 = await reloadMs();
    // The structural change: a new Ingress whose body-size limit is a directive profile nginx.conf does not have yet.
    await api.request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
      body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: `extra-${t}`, annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': `${100 + t}m` } }, spec: { ingressClassName: 'portico', rules: [{ host: `extra-${t}.${RUN}.startup.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's0', port: { number: 80 } } } }] } }] } },
    });
    const t1 = performance.now();
    await setPodReady(ns, current, false);
    await setPodReady(ns, next, true);
    let served = 0;
    while (!served) {
      const r = await request(base, `prop.${RUN}.startup.test`, '/').catch(() => undefined);
      if (r?.status === 200 && r.json().pod === next) served = performance.now();
      if (performance.now() - t1 > 60_000) throw new Error('new pod never served');
    }
    lat.push(served - t1);
    // Was the reload still running when the new pod answered? (it counts only if the reload had not finished)
    if ((await reloadMs()) === reloads0) duringReload++;
    await removePod(ns, current);
    current = next;
    for (;;) {
      const r = await request(base, `extra-${t}.${RUN}.startup.test`, '/').catch(() => undefined);
      if (r?.status === 200) break;
      await sleep(100);
    }
  }
  console.log(`[startup] pod readiness flip → first 200 from the new pod while a ${N}-Ingress reload runs (incl. kube-controller-manager): ${summary(lat)}; answered before that reload finished: ${duringReload}/${TRIALS}`);
  // Steady state: the controller's memory once nothing changes (V8 and the allocator give memory back over time).
  const idle: number[] = [];
  for (let s = 0; s < 6; s++) {
    await sleep(10_000);
    idle.push(Math.round(rss().now));
  }
  console.log(`[startup] controller RSS while idle, every 10 s for 60 s: ${idle.join(', ')} MB; ${await memDetail()}`);
  await heapSnapshot('idle, after the trials');
} finally {
  if (child) {
    // (A process that already exited would never emit 'exit' again: the wait would hang and skip the clean-up.)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child?.once('exit', r));
    }
  }
  // BENCH_KEEP=1 leaves the objects (to start Portico against them again by hand).
  if (process.env.BENCH_KEEP === '1') console.log(`[startup] kept namespace ${ns}`);
  else await deleteNamespace(ns);
}
process.exit(0);
