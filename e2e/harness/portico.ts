// Installing Portico's manifests (`kubectl apply -k kustomize/`, as a user would) and running Portico for a test:
// in-process, as its ServiceAccount (so the kustomize RBAC is enforced), on its own ports.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../operator/kube/client.ts';
import { Manager } from '../../operator/manager.ts';
import { Metrics } from '../../operator/metrics.ts';
import { createLogger } from '../../operator/log.ts';
import { parseConfig, type Config } from '../../app/flags.ts';
import { setupPortico, type Portico } from '../../app/setup.ts';
import { kubectl, serviceAccountKubeConfig } from './cluster.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The entry point of the benchmarks that start Portico as a process (e2e/bench/startup.ts, apiserver-scale.ts,
 * portico-process.ts): by default what the image runs, the controller compiled to JavaScript (image/build-js.sh,
 * `make build-js`) — rebuilt into .dev/js once per benchmark process (a few seconds), so a benchmark never runs a
 * stale build; PORTICO_JS_ROOT=<dir>: a tree built before (its app/main.js, used as is); BENCH_ENTRY=ts: app/main.ts
 * from the sources (through Node's type stripper: about 28 MB more RSS). The label says which, for the output.
 */
export function porticoEntry(): { file: string; label: string } {
  entry ??= chooseEntry();
  return entry;
}
let entry: { file: string; label: string } | undefined;
function chooseEntry(): { file: string; label: string } {
  const which = process.env.BENCH_ENTRY ?? 'js';
  if (which === 'ts') return { file: path.join(REPO_ROOT, 'app/main.ts'), label: 'app/main.ts (sources, type stripping)' };
  if (which !== 'js') throw new Error(`BENCH_ENTRY=${which}: expected js (default) or ts`);
  const prebuilt = process.env.PORTICO_JS_ROOT;
  if (prebuilt) return { file: path.join(path.resolve(prebuilt), 'app/main.js'), label: `${prebuilt}/app/main.js (compiled, PORTICO_JS_ROOT)` };
  const out = path.join(REPO_ROOT, '.dev', 'js');
  execFileSync('bash', [path.join(REPO_ROOT, 'image/build-js.sh'), REPO_ROOT, out, process.execPath, '--link'], { stdio: ['ignore', 'inherit', 'inherit'] });
  return { file: path.join(out, 'app/main.js'), label: '.dev/js/app/main.js (compiled, as in the image)' };
}

/**
 * Fails unless every port is free on 127.0.0.1: a benchmark that starts Portico as a process on fixed ports would
 * otherwise poll another run's Portico (its /readyz answers at once) while its own process cannot bind.
 */
export async function assertPortsFree(ports: readonly number[]): Promise<void> {
  for (const port of ports) {
    await new Promise<void>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', (e: NodeJS.ErrnoException) => reject(new Error(e.code === 'EADDRINUSE' ? `port ${port} is in use (another benchmark or Portico running?)` : `port ${port}: ${e.message}`)));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
    });
  }
}

let installed = false;
export async function installPorticoRbac(): Promise<void> {
  if (installed) return;
  // kustomize/ without its running parts (e2e/overlays/host): the suites run Portico in-process.
  kubectl(['apply', '-k', path.join(REPO_ROOT, 'e2e/overlays/host')]);
  // A webhook configuration left by an earlier apply of the full install (kubectl apply does not delete): only
  // Portico pods back its Service; without this every Ingress write would wait for the API server to give up.
  kubectl(['delete', 'validatingwebhookconfiguration', 'portico', '--ignore-not-found']);
  installed = true;
}

export interface RunningPortico extends Portico {
  manager: Manager;
  client: KubeClient;
  config: Config;
  httpPort: number;
  httpsPort: number;
  healthPort: number;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

/** Starts Portico in this process with test ports (base+0 http, +1 https, +2 status, +3 health). */
export async function startPortico(base: number, extraFlags: string[] = []): Promise<RunningPortico> {
  await installPorticoRbac();
  const cfg = parseConfig(
    [
      '--http-port', String(base), '--https-port', String(base + 1), '--status-port', String(base + 2),
      '--health-addr', `127.0.0.1:${base + 3}`, '--runtime-dir', path.join(REPO_ROOT, '.dev', `nginx-${base}`),
      '--access-log-path', path.join(REPO_ROOT, '.dev', `nginx-${base}`, 'access.log'),
      '--configmap', 'portico-system/portico', '--sync-quiet', '20ms', '--sync-max-wait', '100ms', '--worker-shutdown-timeout', '5s',
      ...extraFlags,
    ],
    {},
  );
  const client = new KubeClient(await serviceAccountKubeConfig('portico-system', 'portico'), {
    rateLimit: { qps: cfg['kube-api-qps'], burst: cfg['kube-api-burst'] },
  });
  const manager = new Manager({
    client,
    log: createLogger((process.env.E2E_LOG_LEVEL as 'info' | undefined) ?? 'error'),
    metrics: new Metrics({ prefix: 'portico' }),
    namespace: 'portico-system',
    reportingController: cfg['controller-class'],
    leaderElection: { name: extraFlags.includes('--election-id') ? cfg['election-id'] : `portico-e2e-${base}-${Date.now().toString(36)}`, leaseDurationMs: cfg['lease-duration'], renewDeadlineMs: cfg['renew-deadline'], retryPeriodMs: cfg['retry-period'] },
    health: cfg['health-addr'],
  });
  const p = await setupPortico(manager, cfg);
  await manager.start();
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const m = (await manager.metrics.registry.getMetricsAsJSON()).find((x) => x.name === name);
    return (m?.values ?? [])
      .filter((v) => Object.entries(labels).every(([k, val]) => (v.labels as Record<string, unknown>)[k] === val))
      .reduce((s, v) => s + Number(v.value), 0);
  };
  return {
    ...p,
    manager,
    client,
    config: cfg,
    httpPort: base,
    httpsPort: base + 1,
    healthPort: base + 3,
    metric,
    stop: () => manager.stop(),
  };
}
