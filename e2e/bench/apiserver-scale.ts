// Scale through the API server: N Ingresses, each with its own Service and echo pod, created in the real control
// plane while Portico (a separate process, as its ServiceAccount) runs. Prints the time until every host answers
// from its pod, the controller's memory and the reloads it took. Usage: node e2e/bench/apiserver-scale.ts [2000]
// (BENCH_ENTRY=ts: run app/main.ts instead of the compiled controller the image runs; e2e/harness/portico.ts).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { admin, ensureCluster, serviceAccountKubeconfigFile, uniqueNamespace } from '../harness/cluster.ts';
import { addPod, deleteNamespace } from '../harness/pods.ts';
import { request } from '../harness/http.ts';
import { assertPortsFree, installPorticoRbac, porticoEntry, REPO_ROOT } from '../harness/portico.ts';
import { NODE_ENV, NODE_FLAGS } from '../../app/node-flags.ts';

const N = Number(process.argv[2] ?? 2000);
const CONC = 16;
await ensureCluster();
await installPorticoRbac();
const kubeconfig = await serviceAccountKubeconfigFile('portico-system', 'portico');
const base = 49080;
await assertPortsFree([base, base + 1, base + 2, base + 3]);
const entry = porticoEntry();
console.log(`[apiserver-scale] controller: ${entry.label}`);
const child = spawn(path.join(REPO_ROOT, 'node_modules/.bin/node'), [
  ...NODE_FLAGS,
  entry.file, '--kubeconfig', kubeconfig, '--http-port', String(base), '--https-port', String(base + 1),
  '--status-port', String(base + 2), '--health-addr', `127.0.0.1:${base + 3}`, '--runtime-dir', path.join(REPO_ROOT, '.dev', 'nginx-scale'), '--access-log-path', path.join(REPO_ROOT, '.dev', 'nginx-scale', 'access.log'),
  '--leader-elect', 'false', '--log-level', 'warn',
], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...NODE_ENV } });
const rss = () => {
  const st = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)?.[1] ?? 0) / 1024;
  return { now: kb('VmRSS'), peak: kb('VmHWM') };
};
const metric = async (name: string) => {
  const text = (await request(base + 3, 'x', '/metrics')).body;
  return text.split('\n').filter((l) => l.startsWith(name)).reduce((s, l) => s + Number(l.split(' ').pop()), 0);
};
for (;;) {
  if ((await request(base + 3, 'x', '/readyz')).status === 200) break;
  await new Promise((r) => setTimeout(r, 100));
}
const ns = await uniqueNamespace('scale');
const api = admin();
async function pool<T>(items: T[], fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: CONC }, async () => {
    while (i < items.length) await fn(items[i++] as T);
  }));
}
try {
  const reloads0 = await metric('portico_nginx_reloads_total');
  const idx = Array.from({ length: N }, (_, i) => i);
  const t0 = performance.now();
  await pool(idx, async (i) => {
    await api.request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: `s${i}` }, spec: { selector: { app: `a${i}` }, ports: [{ port: 80, targetPort: 8080 }] } } });
    await addPod(ns, `p${i}`, { labels: { app: `a${i}` } });
    await api.request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
      body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: `i${i}` }, spec: { ingressClassName: 'portico', rules: [{ host: `h${i}.scale.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: `s${i}`, port: { number: 80 } } } }] } }] } },
    });
  });
  const tCreated = performance.now() - t0;
  let maxRss = rss().peak;
  const pending = new Set(idx);
  while (pending.size) {
    for (const i of [...pending]) {
      const r = await request(base, `h${i}.scale.test`, '/');
      if (r.status === 200 && r.json().pod === `p${i}`) pending.delete(i);
    }
    maxRss = Math.max(maxRss, rss().peak);
    if (pending.size) await new Promise((r) => setTimeout(r, 200));
    if (performance.now() - t0 > 30 * 60_000) throw new Error(`${pending.size} hosts still not served after 30 min`);
  }
  const tServed = performance.now() - t0;
  const m = rss();
  const conf = readFileSync(path.join(REPO_ROOT, '.dev', 'nginx-scale', 'nginx.conf'), 'utf8');
  console.log(`[apiserver-scale] ${N} Ingresses + Services + pods created through the API server in ${(tCreated / 1000).toFixed(1)} s; all ${N} hosts answered by their own pod after ${(tServed / 1000).toFixed(1)} s`);
  console.log(`[apiserver-scale] controller RSS ${m.now.toFixed(0)} MB now, peak ${Math.max(maxRss, m.peak).toFixed(0)} MB; nginx reloads ${(await metric('portico_nginx_reloads_total')) - reloads0}; nginx.conf ${(conf.length / 1048576).toFixed(1)} MB`);
} finally {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  await deleteNamespace(ns);
}
process.exit(0);
