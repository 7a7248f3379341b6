// The instruction counts of dataplane.ts (callgrind, per proxied request) without the cluster: plain nginx, plain
// nginx with the same access log, and Portico's nginx rendered from the pure translation of one Ingress with what the
// controller always adds (per-request metrics, the installation's loop id), same static backend. Callgrind counts do
// not move with other load on the machine, so this runs anywhere: the backend is a static nginx (`return 200`) in a
// network namespace of its own (subnet 217 of testnet.test-helpers.ts); the counted nginx listens on 31970-31979.
// PORTICO_CG_ONLY=portico skips the two plain references; PORTICO_KEEP keeps the callgrind outputs (the directory is
// printed) for callgrind_annotate --inclusive=yes; PORTICO_CG_EDIT (below) counts a changed configuration.
// Usage: node e2e/bench/dataplane-cg.ts [many=2200] [few=200] [routes=0]   (routes: other hosts in the router table)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { translate } from '../../reconcilers/translate/translate.ts';
import { diffConfig, emptyDelta, structureChecksum } from '../../reconcilers/translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../reconcilers/translate/fixtures.test-helpers.ts';
import { loopIdOf } from '../../reconcilers/translate/self.ts';
import { renderNginxConf, runtimePaths } from '../../reconcilers/nginx-driver/nginx/render.ts';
import { DynamicClient } from '../../reconcilers/nginx-driver/nginx/dynamic.ts';
import { NginxProcess } from '../../reconcilers/nginx-driver/nginx/process.ts';
import { capturingLogger } from '../../reconcilers/nginx-driver/nginx/live.test-helpers.ts';
import { TestNet } from '../../reconcilers/nginx-driver/nginx/testnet.test-helpers.ts';
import { DEFAULT_BUCKETS } from '../../reconcilers/nginx-driver/compat-metrics.ts';
import type { HostRoutes } from '../../reconcilers/config/types.ts';
import { haveValgrind, instructionsPerRequest } from './instructions.ts';
import { plainNginxConf } from './static-backends.ts';

const many = Number(process.argv[2] ?? 2200);
const few = Number(process.argv[3] ?? 200);
const extraHosts = Number(process.argv[4] ?? 0);
const only = process.env.PORTICO_CG_ONLY?.split(',');
const BACKEND_PORT = 31979;
const LISTEN = { httpPort: 31970, httpsPort: 31971, statusPort: 31972, address: '127.0.0.1' };
if (!haveValgrind()) throw new Error('valgrind is not installed (make deps)');
const net = new TestNet(217);
const root = mkdtempSync(path.join(tmpdir(), 'portico-dp-cg-'));
let backend: ChildProcess | undefined;
process.on('exit', () => backend?.kill('SIGKILL'));
try {
  net.up();
  mkdirSync(path.join(root, 'b'), { recursive: true });
  writeFileSync(path.join(root, 'b', 'nginx.conf'), `daemon off; worker_processes 1; pid ${root}/b/pid; error_log stderr error;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000;
  server { listen ${net.ip}:${BACKEND_PORT}; location / { return 200 "ok\\n"; } } }`);
  backend = spawn('ip', ['netns', 'exec', net.netns, 'nginx', '-p', path.join(root, 'b'), '-c', path.join(root, 'b', 'nginx.conf'), '-e', 'stderr'], { stdio: 'inherit' });
  const ips = [net.ip];
  const results: [string, number][] = [];
  const plain = async (name: string, port: number, log: (d: string) => string) => {
    const d = path.join(root, name);
    mkdirSync(d, { recursive: true });
    const conf = plainNginxConf(root, name, port, ips, log(d)).replace(new RegExp(`:9090;`, 'g'), `:${BACKEND_PORT};`);
    results.push([name, await instructionsPerRequest({ dir: d, conf, port, host: 'bench.test', few, many })]);
  };
  if (!only || only.includes('plain')) await plain('plain', 31975, () => 'access_log off;');
  if (!only || only.includes('plain+log')) await plain('plain+log', 31976, (d) => `access_log ${d}/access.log l buffer=64k flush=1s;`);
  if (!only || only.includes('portico')) {
    const model = modelOf({
      services: [svc('static', [{ port: 80, targetPort: BACKEND_PORT }])],
      slices: [slice('static-1', 'static', [{ port: BACKEND_PORT }], [{ ip: net.ip }])],
      ingresses: [ing('static', { rules: [rule('bench.test', [{ path: '/', backend: svcRef('static', 80) }])] })],
    });
    const config = translate(model.snapshot(), {
      ...OPTS,
      listen: LISTEN,
      metrics: { undefinedHosts: false, buckets: DEFAULT_BUCKETS },
      loopId: loopIdOf('bench-service-uid', OPTS.controllerClass),
    }).config;
    const dir = path.join(root, 'portico');
    mkdirSync(dir, { recursive: true });
    const runtime = runtimePaths(dir);
    const client = new DynamicClient(runtime.apiSocket);
    new NginxProcess({ binary: '/usr/sbin/nginx', runtime, shutdownTimeoutMs: 2_000 }, client, capturingLogger().logger).prepare();
    let conf = renderNginxConf(config.structure, runtime, structureChecksum(config.structure));
    // PORTICO_CG_EDIT=<module>: its default export (conf) => conf changes the rendered configuration before counting
    // (to find what a directive costs by removing it).
    if (process.env.PORTICO_CG_EDIT) conf = ((await import(path.resolve(process.env.PORTICO_CG_EDIT))) as { default: (c: string) => string }).default(conf);
    writeFileSync(path.join(root, 'portico.conf'), conf);
    const extra: Record<string, HostRoutes> = {};
    const route = { source: 'Ingress/default/other', backendId: 'default_static_80', sslRedirect: false };
    for (let i = 0; i < extraHosts; i++) extra[`r${i}.bench.test`] = { tls: false, rules: [{ path: '/api', match: 'prefix', route }, { path: '/', match: 'prefix', route }] };
    try {
      const ready = async () => {
        await client.push(diffConfig(null, config).delta);
        if (extraHosts) await client.push({ ...emptyDelta(), routes: { upsert: extra, remove: [] } });
      };
      results.push(['portico', await instructionsPerRequest({ dir, conf, port: LISTEN.httpPort, host: 'bench.test', few, many, ready })]);
    } finally {
      await client.close();
    }
  }
  console.log(`[dataplane-cg] instructions per proxied request (callgrind, ${many} - ${few} requests): ${results.map(([n, v]) => `${n} ${v}`).join(', ')}`);
} finally {
  backend?.kill('SIGQUIT');
  await net.close();
  if (process.env.PORTICO_KEEP) console.log(`[dataplane-cg] kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
