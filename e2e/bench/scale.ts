// Scale benchmark, in-process (no cluster) with a real nginx: N Ingresses (1 host, 2 paths, each its own Service
// with 3 endpoints, a third with TLS). For each size it prints:
//   - controller: model build, full translation, and a new Ingress through the incremental translation + diff
//     (p50/p99 over 50 new Ingresses), peak RSS;
//   - nginx: nginx.conf bytes, `nginx -t` time, start time, memory (PSS: shared zones counted once) of master + workers with the data loaded but no
//     host requested, and again after every host was requested once (workers compile a host's routes on first
//     use), and the bytes and time of the first full push;
//   - data plane: a new Ingress's route pushed → first request routed by it (p50/p99, no reload), and an endpoint
//     change's cost (controller time and bytes sent).
// Requests go only to loopback and never reach an endpoint: only the first ten Services have endpoints (for the
// endpoint-change measurement), every probe goes to a host whose backend has none (the router answers through its
// 503 socket, or 308 for TLS hosts over plain HTTP) or to no host at all (404).
// Usage: node --expose-gc e2e/bench/scale.ts [100,1000,10000]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Model } from '../../reconcilers/model/model.ts';
import { normalizeEndpointSlice, normalizeIngress, normalizeIngressClass, normalizeService, parseTlsSecret } from '../../reconcilers/model/normalize.ts';
import { diffConfig, structureChecksum } from '../../reconcilers/translate/diff.ts';
import { IncrementalTranslator } from '../../reconcilers/translate/incremental.ts';
import { renderNginxConf, runtimePaths } from '../../reconcilers/nginx-driver/nginx/render.ts';
import { NginxProcess } from '../../reconcilers/nginx-driver/nginx/process.ts';
import { DynamicClient } from '../../reconcilers/nginx-driver/nginx/dynamic.ts';
import { groupMembers } from '../../reconcilers/nginx-driver/nginx/procgroup.ts';
import { endpointUpdates } from '../../reconcilers/nginx-driver/endpoint-updates.ts';
import { createLogger } from '../../operator/log.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Change } from '../../reconcilers/model/model.ts';
import { percentile } from './stats.ts';

const sizes = (process.argv[2] ?? '100,1000,10000').split(',').map(Number);
// Ports 48080-48109: each size gets its own three (a stopped nginx's sockets may linger for a moment).
let LISTEN = { httpPort: 48080, httpsPort: 48081, statusPort: 48082, address: '127.0.0.1' };
let OPTS = { controllerClass: 'portico.dev/ingress-controller', ingressClassName: 'portico', watchWithoutClass: false, listen: LISTEN };
const gc = (globalThis as { gc?: () => void }).gc;
const TRIALS = 50;

const certDir = mkdtempSync(path.join(tmpdir(), 'portico-scale-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '30', '-subj', '/CN=*.scale.test', '-addext', 'subjectAltName=DNS:*.scale.test', '-keyout', path.join(certDir, 'k'), '-out', path.join(certDir, 'c')], { stdio: 'ignore' });
const tlsSecret = {
  metadata: { name: 'tls', namespace: 'ns' },
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': readFileSync(path.join(certDir, 'c')).toString('base64'), 'tls.key': readFileSync(path.join(certDir, 'k')).toString('base64') },
};

let peakRss = 0;
const sample = () => (peakRss = Math.max(peakRss, process.memoryUsage().rss));
const ms = (v: number) => v.toFixed(1);
const pcts = (xs: number[]) => `p50 ${ms(percentile(xs, 50))} / p99 ${ms(percentile(xs, 99))} ms`;

function ingress(i: number, service = `svc-${i}`): KubeObject {
  return {
    metadata: { name: `ing-${i}`, namespace: `ns${i % 50}`, uid: `u${i}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      ingressClassName: 'portico',
      ...(i % 3 === 0 ? { tls: [{ hosts: [`h${i}.scale.test`], secretName: 'tls' }] } : {}),
      rules: [{ host: `h${i}.scale.test`, http: { paths: [
        { path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } },
        { path: '/api', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } },
      ] } }],
    },
  } as unknown as KubeObject;
}
const service = (name: string, ns: string) => ({ metadata: { name, namespace: ns }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } }) as unknown as KubeObject;
// Endpoint addresses from 198.18.0.0/15 (RFC 2544); nothing here ever connects to them.
const slice = (i: number, extra = 0) => ({
  metadata: { name: `svc-${i}-x`, namespace: `ns${i % 50}`, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: [1, 2, 3 + extra].map((k) => ({ addresses: [`198.18.${Math.floor(i / 80)}.${(i % 80) * 3 + k}`], conditions: { ready: true } })),
}) as unknown as KubeObject;

function get(host: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: '/', headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Proportional set size (kB): shared memory (the zones every nginx process maps) counted once in the sum. */
function pssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

for (const [idx, n] of sizes.entries()) {
  LISTEN = { ...LISTEN, httpPort: 48080 + 10 * idx, httpsPort: 48081 + 10 * idx, statusPort: 48082 + 10 * idx };
  OPTS = { ...OPTS, listen: LISTEN };
  gc?.();
  peakRss = process.memoryUsage().rss;
  // ---- controller --------------------------------------------------------------------------------------------
  let t0 = performance.now();
  const m = new Model();
  m.setIngressClass(normalizeIngressClass({ metadata: { name: 'portico', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }, spec: { controller: OPTS.controllerClass } } as unknown as KubeObject));
  const perNsTls = new Set<string>();
  for (let i = 0; i < n; i++) {
    const ns = `ns${i % 50}`;
    m.setService(normalizeService(service(`svc-${i}`, ns)));
    if (i < 10) {
      const s = normalizeEndpointSlice(slice(i));
      if (s) m.setEndpointSlices(s.serviceKey, [s]);
    }
    const r = normalizeIngress(ingress(i));
    if (r.ok) m.setIngress(r.ingress);
    if (i % 3 === 0 && !perNsTls.has(ns)) {
      perNsTls.add(ns);
      m.setSecret(parseTlsSecret({ ...tlsSecret, metadata: { name: 'tls', namespace: ns } } as never, new Date()));
    }
    if (i % 1000 === 0) sample();
  }
  // New Ingresses of the trials point at Services without endpoints: probing them never leaves loopback.
  for (let k = 0; k < 50; k++) m.setService(normalizeService(service('empty', `ns${k}`)));
  const tModel = performance.now() - t0;
  const translator = new IncrementalTranslator();
  t0 = performance.now();
  let config = translator.translate(m.snapshot(), OPTS, null).config;
  const tFull = performance.now() - t0;
  sample();

  // ---- nginx -------------------------------------------------------------------------------------------------
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-scale-nginx-'));
  const dynamic = new DynamicClient();
  const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 5_000 }, dynamic, createLogger('error'));
  nginx.prepare();
  const checksum = structureChecksum(config.structure);
  const conf = renderNginxConf(config.structure, nginx.runtime, checksum);
  mkdirSync(nginx.runtime.apiDir, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(dir, 'probe.conf'), conf);
  t0 = performance.now();
  const test = spawnSync('/usr/sbin/nginx', ['-t', '-q', '-p', dir, '-c', path.join(dir, 'probe.conf'), '-e', 'stderr'], { encoding: 'utf8' });
  const tTest = performance.now() - t0;
  if (test.status !== 0) throw new Error(`nginx -t failed: ${test.stderr}`);
  if (!(await nginx.writeValidated(conf)).ok) throw new Error('nginx -t failed');
  t0 = performance.now();
  nginx.start();
  // nginx runs in its own process group: if this benchmark dies, take the group with it.
  const pgid = nginx.pid as number;
  const killGroup = () => {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  process.on('exit', killGroup);
  if (!(await nginx.waitLive(checksum))) throw new Error('nginx did not start');
  const tStart = performance.now() - t0;
  t0 = performance.now();
  const fullBytes = await dynamic.push(diffConfig(null, config).delta);
  const tPush = performance.now() - t0;
  // Every worker syncs on its first request (host names only; routes are compiled on first use).
  for (let k = 0; k < 40; k++) await get('no-such-host.scale.test');
  const pids = groupMembers(nginx.pid as number);
  const nginxRss = pids.reduce((a, p) => a + pssKb(p), 0) / 1024;
  // Every host requested once (hosts 10.. have no endpoints; the first ten are left out, they would be proxied).
  for (let i = 10; i < n; i++) {
    const st = await get(`h${i}.scale.test`);
    if (st !== 503 && st !== 308) throw new Error(`h${i}.scale.test answered ${st}`);
  }
  const nginxRssAll = pids.reduce((a, p) => a + pssKb(p), 0) / 1024;
  sample();

  // ---- new Ingress: controller work, then pushed → routed ------------------------------------------------------
  const controllerMs: number[] = [];
  const routedMs: number[] = [];
  const reloads: boolean[] = [];
  for (let k = 0; k < TRIALS; k++) {
    const i = n + k;
    const r = normalizeIngress(ingress(i, 'empty'));
    if (!r.ok) throw new Error(r.reason);
    const host = `h${i}.scale.test`;
    const before = await get(host);
    if (before !== 404) throw new Error(`${host} answered ${before} before it existed`);
    t0 = performance.now();
    m.setIngress(r.ingress);
    const next = translator.translate(m.snapshot(), OPTS, new Set([r.ingress.key])).config;
    const d = diffConfig(config, next);
    controllerMs.push(performance.now() - t0);
    reloads.push(d.reload);
    const t1 = performance.now();
    await dynamic.push(d.delta);
    // Routed: 503 from the router's socket (no endpoints), or 308 to HTTPS for the TLS hosts.
    for (let st = await get(host); st !== 503 && st !== 308; st = await get(host)) {
      if (performance.now() - t1 > 5_000) throw new Error(`${host} not routed after 5 s`);
    }
    routedMs.push(performance.now() - t1);
    config = next;
  }
  sample();

  // ---- one endpoint change -----------------------------------------------------------------------------------
  const cpu1 = process.cpuUsage();
  const t3 = performance.now();
  const s = normalizeEndpointSlice(slice(7, 1));
  const changes: Change[] = [];
  m.onChange((c) => changes.push(...c));
  if (s) m.setEndpointSlices(s.serviceKey, [s]);
  const { upsert, needsStructure } = endpointUpdates(m, config.data.backends, new Set(changes.map((c) => c.key)), new Set());
  if (needsStructure || !Object.keys(upsert).length) throw new Error('fast path not taken');
  const payload = JSON.stringify({ backends: { upsert, remove: [] } });
  const tChange = performance.now() - t3;
  const cpuChange = process.cpuUsage(cpu1);
  await nginx.stop();
  process.off('exit', killGroup);
  await dynamic.close();
  rmSync(dir, { recursive: true, force: true });

  console.log(
    `[scale] ${n} Ingresses: controller: model ${tModel.toFixed(0)} ms, full translation ${tFull.toFixed(0)} ms, peak RSS ${(peakRss / 1048576).toFixed(0)} MB; ` +
      `new Ingress (incremental translation + diff) ${pcts(controllerMs)}`,
  );
  console.log(
    `[scale] ${n}: nginx: nginx.conf ${conf.length} bytes, nginx -t ${tTest.toFixed(0)} ms, start ${tStart.toFixed(0)} ms, ` +
      `memory (PSS) of master + ${pids.length - 1} workers ${nginxRss.toFixed(0)} MB with the data loaded, ${nginxRssAll.toFixed(0)} MB after every host was requested once; ` +
      `first full push ${(fullBytes / 1048576).toFixed(2)} MB in ${tPush.toFixed(0)} ms`,
  );
  console.log(
    `[scale] ${n}: new Ingress pushed → first request routed ${pcts(routedMs)}, reloads ${reloads.filter(Boolean).length}/${TRIALS}; ` +
      `one endpoint change: ${payload.length} bytes, controller ${tChange.toFixed(2)} ms wall / ${((cpuChange.user + cpuChange.system) / 1000).toFixed(2)} ms CPU`,
  );
}
rmSync(certDir, { recursive: true, force: true });
