// Data-plane benchmark: wrk through Portico's nginx vs a plain nginx with a static upstream to the same backends,
// same worker count (1 each), alternated in one run. Backends are a static nginx (`return 200`) on two pod IPs in
// the test network namespace, so the proxy, not the backend, is measured. When valgrind is installed it also counts
// instructions per proxied request (callgrind), which other load on the machine does not move.
// The router holds `routes` other hosts besides the measured one (default 10,000): they are pushed straight over
// the configuration socket, as the gateway would push 10,000 Ingresses, so the run needs no 10k API objects —
// what is measured is the lookup in a table of that size.
// Usage: node e2e/bench/dataplane.ts [seconds=8] [rounds=3] [routes=10000]
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureCluster, kubectl, uniqueNamespace } from '../harness/cluster.ts';
import { deleteNamespace } from '../harness/pods.ts';
import { request } from '../harness/http.ts';
import { installPorticoRbac, startPortico } from '../harness/portico.ts';
import { z } from 'zod';
import { DynamicClient } from '../../reconcilers/nginx-driver/nginx/dynamic.ts';
import { emptyDelta } from '../../reconcilers/translate/diff.ts';
import type { HostRoutes } from '../../reconcilers/config/types.ts';
import { haveValgrind, instructionsPerRequest } from './instructions.ts';
import { relocatedConf, wrk, type WrkResult } from './wrk.ts';
import { plainNginxConf, startPlainNginx, startStaticBackends } from './static-backends.ts';

const seconds = Number(process.argv[2] ?? 8);
const rounds = Number(process.argv[3] ?? 3);
const extraHosts = Number(process.argv[4] ?? 10_000);
await ensureCluster();
const ns = await uniqueNamespace('dp');
await installPorticoRbac(); // the portico-system namespace and ConfigMap, on a fresh cluster too
kubectl(['-n', 'portico-system', 'patch', 'configmap', 'portico', '--type=merge', '-p', '{"data":{"worker-processes":"1"}}']);
const p = await startPortico(39080);
// The same Portico with per-request metrics off (its own election id, ports and nginx), measured in the same rounds:
// what the ingress-nginx metrics cost (--enable-metrics, on by default).
const pOff = await startPortico(39180, ['--enable-metrics=false', '--election-id', 'portico-bench-metrics-off']);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-dp-'));
const children: ReturnType<typeof spawn>[] = [];
// The nginx processes started here must not outlive this run (a killed run left them serving stale backends).
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));
try {
  const ips = await startStaticBackends(ns, dir, children);
  // Plain nginx: static upstream to the same two backends, same settings that matter (1 worker, keepalive).
  // Two plain references: without access log, and with the same access log Portico writes (same work).
  const plainConf = (name: string, port: number, log: string) => plainNginxConf(dir, name, port, ips, log);
  startPlainNginx(dir, 'p', 39380, ips, 'access_log off;', children);
  startPlainNginx(dir, 'pl', 39381, ips, `access_log ${dir}/pl/access.log l buffer=64k flush=1s;`, children);
  kubectl(['apply', '-f', '-'], `apiVersion: v1\nkind: Service\nmetadata: { name: static, namespace: ${ns} }\nspec:\n  selector: { app: static }\n  ports: [{ port: 80, targetPort: 9090 }]\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: static, namespace: ${ns} }\nspec:\n  ingressClassName: portico\n  rules:\n    - host: bench.test\n      http:\n        paths:\n          - { path: /, pathType: Prefix, backend: { service: { name: static, port: { number: 80 } } } }\n`);
  for (let i = 0; ; i++) {
    const a = await request(p.httpPort, 'bench.test', '/');
    const b = await request(39380, 'bench.test', '/');
    const c = await request(pOff.httpPort, 'bench.test', '/');
    if (a.status === 200 && a.body === 'ok\n' && b.status === 200 && c.status === 200) break;
    if (i > 300) throw new Error(`not ready: portico ${a.status} plain ${b.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // The other hosts: two paths each, to the same backend (never requested).
  const backendId = `${ns}_static_80`;
  const extra: Record<string, HostRoutes> = {};
  for (let i = 0; i < extraHosts; i++) {
    const route = { source: `Ingress/${ns}/r${i}`, backendId, sslRedirect: false };
    extra[`r${i}.bench.test`] = { tls: false, rules: [{ path: '/api', match: 'prefix', route }, { path: '/', match: 'prefix', route }] };
  }
  if (extraHosts) {
    await p.gateway.dynamic.push({ ...emptyDelta(), routes: { upsert: extra, remove: [] } });
    await pOff.gateway.dynamic.push({ ...emptyDelta(), routes: { upsert: extra, remove: [] } });
  }
  const loaded = Object.keys(await p.gateway.dynamic.getRoutes()).length;
  console.log(`[dataplane] router table: ${loaded} hosts`);
  const run = (port: number) => wrk(port, seconds, { Host: 'bench.test' });
  run(p.httpPort); // warm-up
  run(39380);
  run(39381);
  run(pOff.httpPort);
  type R = WrkResult;
  const res: { portico: R[]; plain: R[]; plainLog: R[]; off: R[] } = { portico: [], plain: [], plainLog: [], off: [] };
  for (let r = 0; r < rounds; r++) {
    res.plain.push(run(39380));
    res.portico.push(run(p.httpPort));
    res.plainLog.push(run(39381));
    res.off.push(run(pOff.httpPort));
  }
  const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const show = (name: string, xs: typeof res.plain) =>
    `${name}: ${avg(xs.map((x) => x.rps)).toFixed(0)} req/s (rounds ${xs.map((x) => x.rps.toFixed(0)).join(', ')}), p99 ${avg(xs.map((x) => x.p99)).toFixed(2)} ms, non-2xx ${xs.reduce((s, x) => s + x.errors, 0)}`;
  console.log(`[dataplane] ${show('plain nginx', res.plain)}`);
  console.log(`[dataplane] ${show('plain nginx + same access log', res.plainLog)}`);
  console.log(`[dataplane] ${show('portico    ', res.portico)}`);
  console.log(`[dataplane] ${show('portico, per-request metrics off', res.off)}`);
  const med = (xs: R[]) => [...xs.map((x) => x.rps)].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  // Also per round (the two ran one after the other, so a slow spell of the machine hits both): the median ratio.
  const paired = res.portico.map((x, i) => x.rps / (res.off[i] as R).rps).sort((a, b) => a - b);
  console.log(`[dataplane] per-request metrics on/off: ${(med(res.portico) / med(res.off)).toFixed(3)} of the req/s (median of ${rounds} rounds; mean ${(avg(res.portico.map((x) => x.rps)) / avg(res.off.map((x) => x.rps))).toFixed(3)}; per-round ratios ${paired.map((r) => r.toFixed(3)).join(', ')}, median ${(paired[Math.floor(paired.length / 2)] as number).toFixed(3)})`);
  const ratio = (xs: R[]) => (avg(res.portico.map((x) => x.rps)) / avg(xs.map((x) => x.rps))).toFixed(2);
  console.log(`[dataplane] ratio portico/plain: ${ratio(res.plain)} (vs plain with the same access log: ${ratio(res.plainLog)}) — wrk -t1 -c32 -d${seconds}s, 1 nginx worker each, ${rounds} alternated rounds`);
  // The same rounds by the CPU time the nginx worker spent per request (user + system, from /proc): what one core
  // serves is its inverse, which wrk and the backends sharing the machine's two cores do not move as they move req/s.
  const cpu = (xs: R[]) => [...xs.map((x) => x.cpuUs)].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  console.log(`[dataplane] nginx worker CPU per request (median round): plain ${cpu(res.plain).toFixed(1)} µs, plain + same access log ${cpu(res.plainLog).toFixed(1)} µs, portico ${cpu(res.portico).toFixed(1)} µs, metrics off ${cpu(res.off).toFixed(1)} µs → one core serves ${(cpu(res.plain) / cpu(res.portico)).toFixed(2)} of plain nginx's requests with Portico (${(cpu(res.plainLog) / cpu(res.portico)).toFixed(2)} of plain with the same access log)`);
  if (!haveValgrind()) console.log('[dataplane] valgrind not installed: no instruction counts');
  else {
    try {
      await countInstructions();
    } catch (e) {
      console.log(`[dataplane] instruction count failed: ${String(e)}`);
    }
  }
  async function countInstructions(): Promise<void> {
    // The same three configurations, each a single nginx process under callgrind on its own ports. 8,000 requests
    // counted (as dataplane-cg.ts): over 2,000, Portico's count moved by 2-5k between runs of the same code (32.2k,
    // 34.5k, 33.3k against 29.5k over 8,000), as LuaJIT's collector and JIT landed unevenly in the short window.
    const window = { few: Number(process.env.BENCH_CG_FEW ?? 500), many: Number(process.env.BENCH_CG_MANY ?? 8500) };
    const cgPlain = async (name: string, port: number, log: string) => {
      const d = path.join(dir, `cg-${name}`);
      mkdirSync(d, { recursive: true });
      return instructionsPerRequest({ dir: d, conf: plainConf(`cg-${name}`, port, log), port, host: 'bench.test', ...window });
    };
    const iPlain = await cgPlain('p', 39390, 'access_log off;');
    const iPlainLog = await cgPlain('pl', 39391, `access_log ${dir}/cg-pl/access.log l buffer=64k flush=1s;`);
    // Portico's own rendered configuration, moved to other ports, sockets, pid and log file; its backend is
    // pushed over the copy's own configuration socket (a fresh nginx holds no data).
    const d = path.join(dir, 'cg-portico');
    const { conf, apiSocket } = relocatedConf(p, d, 39392);
    const id = `${ns}_static_80`;
    const live = z.object({ endpoints: z.array(z.object({ address: z.string(), port: z.number(), weight: z.number() })) }).parse((await p.gateway.dynamic.getBackends())[id]);
    const hostRoutes = (await p.gateway.dynamic.getRoutes())['bench.test'] as HostRoutes;
    const client = new DynamicClient(apiSocket);
    const iPortico = await instructionsPerRequest({
      dir: d,
      conf,
      port: 39392,
      host: 'bench.test',
      ...window,
      ready: async () => {
        await client.push({
          ...emptyDelta(),
          backends: { upsert: { [id]: { id, balance: 'round_robin', endpoints: live.endpoints } }, remove: [] },
          // Under callgrind (about 50× slower) a 10k-host push takes minutes; a lookup is a hash lookup whatever the
          // table size, so the count uses at most 1,000 other hosts.
          routes: { upsert: { ...(extraHosts <= 1000 ? extra : Object.fromEntries(Object.entries(extra).slice(0, 1000))), 'bench.test': hostRoutes }, remove: [] },
        });
      },
    });
    await client.close();
    console.log(`[dataplane] instructions per proxied request (callgrind, ${window.many - window.few} requests; router table ${Math.min(extraHosts, 1000) + 1} hosts): plain nginx ${iPlain}, plain + same access log ${iPlainLog}, portico ${iPortico} (+${iPortico - iPlain} over plain, +${iPortico - iPlainLog} over plain with the same access log)`);
  }
} finally {
  for (const c of children) c.kill('SIGQUIT');
  kubectl(['-n', 'portico-system', 'patch', 'configmap', 'portico', '--type=json', '-p', '[{"op":"remove","path":"/data"}]']);
  await p.stop();
  await pOff.stop();
  await deleteNamespace(ns);
}
process.exit(0);
