// Control-plane scale benchmark (in-process, no cluster): N Ingresses (1 host, 2 paths, each its own Service with
// 3 endpoints, a third with TLS). Prints time and peak RSS for model build + translation + render, nginx.conf size,
// `nginx -t` and start time of that config with real nginx, and the cost of one endpoint change (controller CPU
// time and bytes sent to nginx). Usage: node --expose-gc e2e/bench/scale.ts [1000,5000,10000]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Model } from '../../reconcilers/model/model.ts';
import { normalizeEndpointSlice, normalizeIngress, normalizeIngressClass, normalizeService, parseTlsSecret } from '../../reconcilers/model/normalize.ts';
import { translate } from '../../reconcilers/translate/translate.ts';
import { diffConfig, structureChecksum } from '../../reconcilers/translate/diff.ts';
import { renderNginxConf, runtimePaths } from '../../reconcilers/gateway/nginx/render.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Change } from '../../reconcilers/model/model.ts';
import { endpointUpdates } from '../../reconcilers/gateway/endpoint-updates.ts';

const sizes = (process.argv[2] ?? '1000,5000,10000').split(',').map(Number);
const OPTS = { controllerClass: 'portico.dev/ingress-controller', ingressClassName: 'portico', watchWithoutClass: false, listen: { httpPort: 48080, httpsPort: 48443, statusPort: 48246, address: '127.0.0.1' } };
const gc = (globalThis as { gc?: () => void }).gc;

const certDir = mkdtempSync(path.join(tmpdir(), 'portico-scale-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '30', '-subj', '/CN=*.scale.test', '-addext', 'subjectAltName=DNS:*.scale.test', '-keyout', path.join(certDir, 'k'), '-out', path.join(certDir, 'c')], { stdio: 'ignore' });
const tlsSecret = {
  metadata: { name: 'tls', namespace: 'ns' },
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': readFileSync(path.join(certDir, 'c')).toString('base64'), 'tls.key': readFileSync(path.join(certDir, 'k')).toString('base64') },
};

let peakRss = 0;
const sample = () => (peakRss = Math.max(peakRss, process.memoryUsage().rss));

function objects(i: number) {
  const ns = `ns${i % 50}`;
  const ing = {
    metadata: { name: `ing-${i}`, namespace: ns, uid: `u${i}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      ingressClassName: 'portico',
      ...(i % 3 === 0 ? { tls: [{ hosts: [`h${i}.scale.test`], secretName: 'tls' }] } : {}),
      rules: [{ host: `h${i}.scale.test`, http: { paths: [
        { path: '/', pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { number: 80 } } } },
        { path: '/api', pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { number: 80 } } } },
      ] } }],
    },
  } as unknown as KubeObject;
  const svc = { metadata: { name: `svc-${i}`, namespace: ns }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } as unknown as KubeObject;
  const b = i % 250;
  const slice = (extra = 0) => ({
    metadata: { name: `svc-${i}-x`, namespace: ns, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [1, 2, 3 + extra].map((k) => ({ addresses: [`10.${Math.floor(i / 250)}.${b}.${k}`], conditions: { ready: true } })),
  }) as unknown as KubeObject;
  return { ing, svc, slice, ns };
}

for (const n of sizes) {
  gc?.();
  peakRss = process.memoryUsage().rss;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const m = new Model();
  m.setIngressClass(normalizeIngressClass({ metadata: { name: 'portico', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }, spec: { controller: OPTS.controllerClass } } as unknown as KubeObject));
  const perNsTls = new Set<string>();
  for (let i = 0; i < n; i++) {
    const o = objects(i);
    m.setService(normalizeService(o.svc));
    const s = normalizeEndpointSlice(o.slice());
    if (s) m.setEndpointSlices(s.serviceKey, [s]);
    const r = normalizeIngress(o.ing);
    if (r.ok) m.setIngress(r.ingress);
    if (i % 3 === 0 && !perNsTls.has(o.ns)) {
      perNsTls.add(o.ns);
      m.setSecret(parseTlsSecret({ ...tlsSecret, metadata: { name: 'tls', namespace: o.ns } } as never, new Date()));
    }
    if (i % 1000 === 0) sample();
  }
  const tModel = performance.now() - t0;
  sample();
  const t1 = performance.now();
  const res = translate(m.snapshot(), OPTS);
  const tTranslate = performance.now() - t1;
  sample();
  const t2 = performance.now();
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-scale-nginx-'));
  const rt = runtimePaths(dir);
  mkdirSync(rt.tempDir, { recursive: true });
  mkdirSync(rt.apiDir, { recursive: true, mode: 0o700 });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=p', '-keyout', rt.placeholderKey, '-out', rt.placeholderCert], { stdio: 'ignore' });
  const checksum = structureChecksum(res.config.structure);
  const conf = renderNginxConf(res.config.structure, rt, checksum);
  const tRender = performance.now() - t2;
  sample();
  const cpuFull = process.cpuUsage(cpu0);
  const confPath = path.join(dir, 'nginx.conf');
  writeFileSync(confPath, conf);
  const tt = performance.now();
  const test = spawnSync('nginx', ['-t', '-q', '-p', dir, '-c', confPath, '-e', 'stderr'], { encoding: 'utf8' });
  const tTest = performance.now() - tt;
  if (test.status !== 0) throw new Error(`nginx -t failed: ${test.stderr}`);
  // One endpoint change at this size: controller work and payload.
  const cpu1 = process.cpuUsage();
  const t3 = performance.now();
  const o = objects(7);
  const s = normalizeEndpointSlice(o.slice(1));
  const changes: Change[] = [];
  m.onChange((c) => changes.push(...c));
  if (s) m.setEndpointSlices(s.serviceKey, [s]);
  // What the gateway does for an endpoint-only change: recompute the touched backends, serialize the delta.
  const { upsert, needsStructure } = endpointUpdates(m, res.config.data.backends, new Set(changes.map((c) => c.key)), new Set());
  if (needsStructure || !Object.keys(upsert).length) throw new Error('fast path not taken');
  const payload = JSON.stringify({ upsert, remove: [] });
  const tChange = performance.now() - t3;
  const cpuChange = process.cpuUsage(cpu1);
  // The full path for comparison (what a change of any other kind costs before nginx is involved).
  const t4 = performance.now();
  const d = diffConfig(res.config, translate(m.snapshot(), OPTS).config);
  const tFull = performance.now() - t4;
  const fullPayload = JSON.stringify({ upsert: res.config.data.backends, remove: [] });
  console.log(
    `[scale] ${n} Ingresses: model ${tModel.toFixed(0)} ms, translate ${tTranslate.toFixed(0)} ms, render ${tRender.toFixed(0)} ms ` +
      `(build+translate+render ${(tModel + tTranslate + tRender).toFixed(0)} ms, CPU ${((cpuFull.user + cpuFull.system) / 1000).toFixed(0)} ms), ` +
      `peak RSS ${(peakRss / 1048576).toFixed(0)} MB, nginx.conf ${(conf.length / 1048576).toFixed(1)} MB, nginx -t ${tTest.toFixed(0)} ms`,
  );
  console.log(
    `[scale] ${n}: one endpoint change → ${Object.keys(upsert).length} backend in the delta, ${payload.length} bytes sent ` +
      `(all backends would be ${(fullPayload.length / 1024).toFixed(0)} KiB), controller ${tChange.toFixed(2)} ms wall / ${((cpuChange.user + cpuChange.system) / 1000).toFixed(2)} ms CPU; ` +
      `full re-translation + diff for comparison ${tFull.toFixed(0)} ms (reload=${d.reload}, ${Object.keys(d.delta.backends.upsert).length} backend changed)`,
  );
  rmSync(dir, { recursive: true, force: true });
}
rmSync(certDir, { recursive: true, force: true });
