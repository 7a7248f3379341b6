// The cluster-free data-plane benchmarks' setup (dataplane-cg.ts: instructions; dataplane-cpu.ts: CPU time): a static
// backend (nginx answering `return 200`) in a network namespace of its own, plain nginx proxying to it (with or
// without an access log), and Portico's nginx rendered from the pure translation of one Ingress to that backend with
// what the controller always adds (per-request metrics, the installation's loop id). Each server is returned as a
// configuration for one process and a `ready()` that pushes Portico's data; the caller runs it.
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
import { plainNginxConf } from './static-backends.ts';

/** One server to measure: its directory, a complete nginx.conf, the port serving `host`, what to call once it runs. */
export interface BenchServer {
  name: string;
  dir: string;
  conf: string;
  port: number;
  host: string;
  ready?: () => Promise<void>;
}

export interface StandaloneBench {
  root: string;
  /** Plain nginx on 127.0.0.1:port; log(dir) is its access_log directive. */
  plain(name: string, port: number, log: (dir: string) => string): BenchServer;
  /**
   * Portico's nginx on listen.httpPort, with `extraHosts` other hosts (two prefix paths each, never requested) in its
   * router table, pushed by ready() as the gateway would push that many Ingresses. PORTICO_CG_EDIT=<module>: its
   * default export (conf) => conf changes the rendered configuration (to find what a directive costs by removing it).
   */
  portico(extraHosts: number): Promise<BenchServer>;
}

/**
 * Runs `run` with the backend up in network namespace `subnet` (testnet.test-helpers.ts) on backendPort; Portico
 * listens on listen.httpPort (HTTPS and status on the next two). Everything is stopped and removed afterwards
 * (PORTICO_KEEP keeps the directory, e.g. for callgrind_annotate).
 */
export async function standaloneBench<T>(o: { tag: string; subnet: number; backendPort: number; httpPort: number }, run: (b: StandaloneBench) => Promise<T>): Promise<T> {
  const net = new TestNet(o.subnet);
  const root = mkdtempSync(path.join(tmpdir(), `portico-${o.tag}-`));
  let backend: ChildProcess | undefined;
  const clients: DynamicClient[] = [];
  const kill = () => backend?.kill('SIGKILL');
  process.on('exit', kill);
  try {
    net.up();
    mkdirSync(path.join(root, 'b'), { recursive: true });
    writeFileSync(path.join(root, 'b', 'nginx.conf'), `daemon off; worker_processes 1; pid ${root}/b/pid; error_log stderr error;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000;
  server { listen ${net.ip}:${o.backendPort}; location / { return 200 "ok\\n"; } } }`);
    // On core 1, with the load generator: core 0 is the measured nginx's alone (dataplane-cpu.ts pins it there).
    backend = spawn('ip', ['netns', 'exec', net.netns, 'taskset', '-c', '1', 'nginx', '-p', path.join(root, 'b'), '-c', path.join(root, 'b', 'nginx.conf'), '-e', 'stderr'], { stdio: 'inherit' });
    const plain = (name: string, port: number, log: (d: string) => string): BenchServer => {
      const dir = path.join(root, name);
      mkdirSync(dir, { recursive: true });
      const conf = plainNginxConf(root, name, port, [net.ip], log(dir)).replace(/:9090;/g, `:${o.backendPort};`);
      return { name, dir, conf, port, host: 'bench.test' };
    };
    const portico = async (extraHosts: number): Promise<BenchServer> => {
      const model = modelOf({
        services: [svc('static', [{ port: 80, targetPort: o.backendPort }])],
        slices: [slice('static-1', 'static', [{ port: o.backendPort }], [{ ip: net.ip }])],
        ingresses: [ing('static', { rules: [rule('bench.test', [{ path: '/', backend: svcRef('static', 80) }])] })],
      });
      const config = translate(model.snapshot(), {
        ...OPTS,
        listen: { httpPort: o.httpPort, httpsPort: o.httpPort + 1, statusPort: o.httpPort + 2, address: '127.0.0.1' },
        metrics: { undefinedHosts: false, buckets: DEFAULT_BUCKETS },
        loopId: loopIdOf('bench-service-uid', OPTS.controllerClass),
      }).config;
      const dir = path.join(root, 'portico');
      mkdirSync(dir, { recursive: true });
      const runtime = runtimePaths(dir);
      const client = new DynamicClient(runtime.apiSocket);
      clients.push(client);
      new NginxProcess({ binary: '/usr/sbin/nginx', runtime, shutdownTimeoutMs: 2_000 }, client, capturingLogger().logger).prepare();
      let conf = renderNginxConf(config.structure, runtime, structureChecksum(config.structure));
      if (process.env.PORTICO_CG_EDIT) conf = ((await import(path.resolve(process.env.PORTICO_CG_EDIT))) as { default: (c: string) => string }).default(conf);
      writeFileSync(path.join(root, 'portico.conf'), conf);
      const extra: Record<string, HostRoutes> = {};
      const route = { source: 'Ingress/default/other', backendId: 'default_static_80', sslRedirect: false };
      for (let i = 0; i < extraHosts; i++) extra[`r${i}.bench.test`] = { tls: false, rules: [{ path: '/api', match: 'prefix', route }, { path: '/', match: 'prefix', route }] };
      const ready = async () => {
        await client.push(diffConfig(null, config).delta);
        if (extraHosts) await client.push({ ...emptyDelta(), routes: { upsert: extra, remove: [] } });
      };
      return { name: 'portico', dir, conf, port: o.httpPort, host: 'bench.test', ready };
    };
    return await run({ root, plain, portico });
  } finally {
    for (const c of clients) await c.close();
    backend?.kill('SIGQUIT');
    process.off('exit', kill);
    await net.close();
    if (process.env.PORTICO_KEEP) console.log(`[${o.tag}] kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}
