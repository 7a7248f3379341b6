// Plugin benchmark, two figures:
//  1. Requests/s through a Route with key-auth + rate-limit (limit set far above the load) against the same Route
//     without plugins, in one run: wrk alternates between the two hosts, same Portico, same backends (a static
//     nginx on two pod IPs in the test network namespace, so the proxy is what is measured), 1 nginx worker.
//     Goal: ≥ 0.85 of the plugin-free rate.
//  2. A plugin config change until it is enforced: the rate-limit Plugin is switched between a limit far above the
//     load and one that refuses at once, through the API server, and the time from the PATCH to the first answer
//     showing the new limit (429, then 200 again) is measured by requests sent back to back. Goal: p99 ≤ 100 ms,
//     0 nginx reloads.
// Usage: node e2e/bench/plugins.ts [seconds=8] [rounds=3] [changes=30]   (needs make cluster-up)
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from '../harness/cluster.ts';
import { addPod, deleteNamespace } from '../harness/pods.ts';
import { request, until } from '../harness/http.ts';
import { startPortico } from '../harness/portico.ts';
import { percentile } from './stats.ts';
import { haveValgrind, instructionsPerRequest } from './instructions.ts';
import { relocatedConf, wrk, type WrkResult } from './wrk.ts';
import { DynamicClient } from '../../reconcilers/nginx-driver/nginx/dynamic.ts';
import { emptyDelta } from '../../reconcilers/translate/diff.ts';

const seconds = Number(process.argv[2] ?? 8);
const rounds = Number(process.argv[3] ?? 3);
const changes = Number(process.argv[4] ?? 30);
/** "detail": also measure each part alone (the plugin location with a trivial plugin, key-auth only, rate-limit only). */
const detail = process.argv[5] === 'detail';
const KEY = 'bench-key-0123456789';

await ensureCluster();
const ns = await uniqueNamespace('bp');
const dir = mkdtempSync(path.join(tmpdir(), 'portico-bp-'));
const children: ReturnType<typeof spawn>[] = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));
const api = admin();
const post = (p: string, body: unknown) => api.request('POST', p, { body });
const crd = (plural: string) => `/apis/portico.dev/v1alpha1/namespaces/${ns}/${plural}`;
const cls = await ownIngressClass('bp');
const CLASS = cls.name;
await post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: { 'worker-processes': '1' } });
// Production's sync settings (no debounce; the e2e harness adds 20 ms of quiet).
const p = await startPortico(40080, [...cls.flags, '--configmap', `${ns}/portico`, '--sync-quiet', '0ms']);
try {
  const ips = [await addPod(ns, 'static-1', { labels: { app: 'static' } }), await addPod(ns, 'static-2', { labels: { app: 'static' } })];
  mkdirSync(path.join(dir, 'b'), { recursive: true });
  writeFileSync(path.join(dir, 'b', 'nginx.conf'), `daemon off; worker_processes 1; pid ${dir}/b/pid; error_log stderr error;
events { worker_connections 16384; multi_accept on; }
http { access_log off; keepalive_requests 100000;
  server { ${ips.map((ip) => `listen ${ip}:9090;`).join(' ')} location / { return 200 "ok\\n"; } } }`);
  children.push(spawn('ip', ['netns', 'exec', 'portico-pods', 'nginx', '-p', path.join(dir, 'b'), '-c', path.join(dir, 'b', 'nginx.conf'), '-e', 'stderr'], { stdio: 'inherit' }));

  await post(`/api/v1/namespaces/${ns}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'static' }, spec: { selector: { app: 'static' }, ports: [{ port: 80, targetPort: 9090 }] } });
  await post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bench-key' }, type: 'Opaque', stringData: { key: KEY } });
  await post(crd('consumers'), { apiVersion: 'portico.dev/v1alpha1', kind: 'Consumer', metadata: { name: 'bench' }, spec: { username: 'bench', credentials: [{ type: 'key-auth', secretRef: { name: 'bench-key' } }] } });
  await post(crd('plugins'), { apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'auth' }, spec: { type: 'key-auth' } });
  const HIGH = { requestsPerSecond: 1_000_000, burst: 1_000_000, requestsPerMinute: null };
  const LOW = { requestsPerMinute: 1, burst: 0, requestsPerSecond: null };
  await post(crd('plugins'), { apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'limit' }, spec: { type: 'rate-limit', config: { requestsPerSecond: 1_000_000, burst: 1_000_000, by: 'consumer' } } });
  const route = (name: string, host: string, plugins: string[]) =>
    post(crd('routes'), { apiVersion: 'portico.dev/v1alpha1', kind: 'Route', metadata: { name }, spec: { ingressClassName: CLASS, hosts: [host], rules: [{ backends: [{ service: { name: 'static', port: 80 } }], ...(plugins.length ? { plugins } : {}) }] } });
  await route('plain', 'plain.bench.test', []);
  await route('plugins', 'plugins.bench.test', ['auth', 'limit']);
  if (detail) {
    await post(crd('plugins'), { apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'hdr' }, spec: { type: 'response-headers', config: { set: [{ name: 'X-Bench', value: '1' }] } } });
    await route('hdr', 'hdr.bench.test', ['hdr']);
    await route('auth-only', 'auth.bench.test', ['auth']);
    await route('limit-only', 'limit.bench.test', ['limit']);
    await until('detail routes served', async () => (await request(p.httpPort, 'hdr.bench.test', '/')).body === 'ok\n' && (await request(p.httpPort, 'limit.bench.test', '/')).body === 'ok\n' && (await request(p.httpPort, 'auth.bench.test', '/', { headers: { apikey: KEY } })).body === 'ok\n', 60_000);
  }
  await until('both routes served', async () => (await request(p.httpPort, 'plain.bench.test', '/')).body === 'ok\n' && (await request(p.httpPort, 'plugins.bench.test', '/', { headers: { apikey: KEY } })).body === 'ok\n', 60_000);
  const denied = (await request(p.httpPort, 'plugins.bench.test', '/')).status;
  if (denied !== 401) throw new Error(`key-auth not enforced (got ${denied})`);

  // ---- 1. throughput --------------------------------------------------------------------------------------------
  const run = (host: string, auth: boolean) => wrk(p.httpPort, seconds, { Host: host, ...(auth ? { apikey: KEY } : {}) });
  run('plain.bench.test', false); // warm-up
  run('plugins.bench.test', true);
  type R = WrkResult;
  const plain: R[] = [];
  const plug: R[] = [];
  for (let r = 0; r < rounds; r++) {
    plain.push(run('plain.bench.test', false));
    plug.push(run('plugins.bench.test', true));
  }
  const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const show = (name: string, xs: R[]) =>
    `${name}: ${avg(xs.map((x) => x.rps)).toFixed(0)} req/s (rounds ${xs.map((x) => x.rps.toFixed(0)).join(', ')}), p99 ${avg(xs.map((x) => x.p99)).toFixed(2)} ms, non-2xx ${xs.reduce((s, x) => s + x.errors, 0)}`;
  if (detail) {
    for (const [host, auth, label] of [['hdr.bench.test', false, 'plugin location + response-headers'], ['auth.bench.test', true, 'key-auth only'], ['limit.bench.test', false, 'rate-limit only']] as const) {
      const xs: R[] = [];
      for (let r = 0; r < rounds; r++) xs.push(run(host, auth));
      console.log(`[plugins] ${show(label, xs)}`);
    }
  }
  console.log(`[plugins] ${show('no plugins           ', plain)}`);
  console.log(`[plugins] ${show('key-auth + rate-limit', plug)}`);
  const median = (xs: number[]) => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length % 2 ? (v[(v.length - 1) / 2] as number) : ((v[v.length / 2 - 1] as number) + (v[v.length / 2] as number)) / 2;
  };
  const ratio = avg(plug.map((x) => x.rps)) / avg(plain.map((x) => x.rps));
  const ratioMedian = median(plug.map((x) => x.rps)) / median(plain.map((x) => x.rps));
  console.log(`[plugins] ratio with/without plugins: ${ratioMedian.toFixed(2)} by the median round (${ratio.toFixed(2)} by the mean; goal ≥ 0.85) — wrk -t1 -c32 -d${seconds}s pinned to the second core, 1 nginx worker, ${rounds} alternated rounds`);

  // ---- 1b. instructions per request (callgrind): the same comparison, unmoved by other load on the machine ---------
  if (!haveValgrind()) console.log('[plugins] valgrind not installed: no instruction counts');
  else {
    // Portico's rendered nginx.conf, moved to other ports, sockets, pid and log; the data Lua holds is pushed to the
    // copy over its own configuration socket (a fresh nginx holds none).
    const held = p.gateway.heldData;
    const count = async (name: string, host: string, headers?: Record<string, string>) => {
      const d = path.join(dir, `cg-${name}`);
      const { conf, apiSocket } = relocatedConf(p, d, 40392);
      const client = new DynamicClient(apiSocket);
      const n = await instructionsPerRequest({
        dir: d,
        conf,
        port: 40392,
        host,
        headers,
        ready: () =>
          client
            .push({
              ...emptyDelta(),
              backends: { upsert: held.backends, remove: [] },
              routes: { upsert: held.routes, remove: [] },
              plugins: { upsert: held.plugins, remove: [] },
              consumers: { upsert: held.consumers, remove: [] },
            })
            .then(() => undefined),
      });
      await client.close();
      return n;
    };
    const iPlain = await count('plain', 'plain.bench.test');
    const iPlug = await count('plugins', 'plugins.bench.test', { apikey: KEY });
    console.log(`[plugins] user-space instructions per proxied request (callgrind; the kernel's share of each request is not counted, so this ratio is a lower bound for the throughput ratio): no plugins ${iPlain}, key-auth + rate-limit ${iPlug} (+${iPlug - iPlain}); ratio ${(iPlain / iPlug).toFixed(2)}`);
  }

  // ---- 2. plugin config change → enforced ---------------------------------------------------------------------------
  const reloads0 = await p.metric('portico_nginx_reloads_total', { result: 'success' });
  const ms: number[] = [];
  const patchLimit = (config: unknown) => api.request('PATCH', `${crd('plugins')}/limit`, { contentType: 'application/merge-patch+json', body: { spec: { config } } });
  const enforced = async (want: number): Promise<void> => {
    const t0 = performance.now();
    for (;;) {
      const r = await request(p.httpPort, 'plugins.bench.test', '/', { headers: { apikey: KEY } });
      if (r.status === want) return;
      if (performance.now() - t0 > 10_000) throw new Error(`status ${want} not seen within 10 s (last ${r.status})`);
    }
  };
  // Where the time goes: the watch event reaching the model (apiserver + informer), then the gateway's sync
  // (translation, diff, push to Lua), then the first request that sees it.
  let seenAt = 0;
  p.model.onChange((cs) => {
    if (cs.some((c) => c.kind === 'Plugin')) seenAt = performance.now();
  });
  const watchMs: number[] = [];
  const syncMs: number[] = [];
  for (let i = 0; i < changes; i++) {
    const low = i % 2 === 0;
    seenAt = 0;
    const syncs0 = p.gateway.history.length;
    const t0 = performance.now();
    await patchLimit(low ? LOW : HIGH);
    await enforced(low ? 429 : 200);
    ms.push(performance.now() - t0);
    if (seenAt) watchMs.push(seenAt - t0);
    for (const r of p.gateway.history.slice(syncs0)) syncMs.push(r.ms);
  }
  const reloads = (await p.metric('portico_nginx_reloads_total', { result: 'success' })) - reloads0;
  const sorted = [...ms].sort((a, b) => a - b);
  const q = (xs: number[], n: number) => percentile([...xs].sort((a, b) => a - b), n).toFixed(1);
  console.log(`[plugins]   of which PATCH sent → change in Portico's model (apiserver, watch, reconciler): p50 ${q(watchMs, 50)} ms, p99 ${q(watchMs, 99)} ms; gateway syncs (translate, diff, push): p50 ${q(syncMs, 50)} ms, p99 ${q(syncMs, 99)} ms (${syncMs.length} syncs)`);
  console.log(`[plugins] plugin config change → enforced (PATCH sent → first answer with the new limit), ${changes} changes: p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${sorted[sorted.length - 1]?.toFixed(1)} ms; nginx reloads ${reloads} (goal p99 ≤ 100 ms, 0 reloads)`);
} finally {
  for (const c of children) c.kill('SIGQUIT');
  await p.stop();
  await deleteNamespace(ns);
  await cls.remove();
}
process.exit(0);
