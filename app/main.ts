#!/usr/bin/env node
// portico: the ingress controller process. Flags: see app/flags.ts (docs/reference/flags.md has the table).
// `portico migrate …` runs the migration report instead (app/migrate.ts).
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, parseConfig, type Config } from './flags.ts';
import { KubeClient } from '../operator/kube/client.ts';
import { loadCredentials } from '../operator/kube/credentials.ts';
import { createLogger } from '../operator/log.ts';
import { Manager } from '../operator/manager.ts';
import { Metrics } from '../operator/metrics.ts';
import { startMemorySettler } from '../operator/memory.ts';
import { describe } from '../operator/informer.ts';
import { setupPortico } from './setup.ts';

function fail(msg: string): never {
  process.stderr.write(`portico: ${msg}\n`);
  process.exit(2);
}

// `portico migrate …`: a report on moving from ingress-nginx (app/migrate.ts), not the controller.
if (process.argv[2] === 'migrate') {
  const { runMigrate } = await import('./migrate.ts');
  process.exit(await runMigrate(process.argv.slice(3)));
}

let cfg: Config;
try {
  cfg = parseConfig(process.argv.slice(2));
} catch (e) {
  if (e instanceof ConfigError) fail(e.message);
  throw e;
}

const VERSION = packageVersion();
if (cfg.version) {
  process.stdout.write(`portico ${VERSION}\n`);
  process.exit(0);
}

// ingress-nginx's --apiserver-host (and --certificate-authority, read only with it): replaces the server.
const apiserver = cfg['apiserver-host'] ? { server: cfg['apiserver-host'], ...(cfg['certificate-authority'] ? { caFile: cfg['certificate-authority'] } : {}) } : undefined;
const kubeconfigPath = cfg.kubeconfig ?? (apiserver ? undefined : process.env.KUBECONFIG);
if (kubeconfigPath && !existsSync(kubeconfigPath)) fail(`kubeconfig ${kubeconfigPath} does not exist`);
let client: KubeClient;
try {
  client = new KubeClient(await loadCredentials(cfg.kubeconfig, apiserver), { rateLimit: { qps: cfg['kube-api-qps'], burst: cfg['kube-api-burst'] } });
} catch (e) {
  fail(`cannot load a kubeconfig: ${describe(e)} (pass --kubeconfig or run in a pod)`);
}

const log = createLogger(cfg['log-level']);
if (cfg.ingressNginxProgram) log.info('started as /nginx-ingress-controller: the flags Portico shares with ingress-nginx default to ingress-nginx\'s values (docs/reference/flags.md)');
for (const n of cfg.noEffect) log.warn(`ingress-nginx flag --${n.flag} is accepted but has no effect in Portico`, { flag: n.flag, why: n.why });
if (cfg['certificate-authority'] && !apiserver) log.warn('--certificate-authority is read only with --apiserver-host (as ingress-nginx): no effect', { flag: 'certificate-authority' });
const metrics = new Metrics({ prefix: 'portico', defaultMetrics: true });
client.instrument(metrics);
const manager = new Manager({
  client,
  log,
  metrics,
  namespace: cfg.namespace,
  reportingController: cfg['controller-class'],
  leaderElection: cfg['leader-elect']
    ? {
        name: cfg['election-id'],
        leaseDurationMs: cfg['lease-duration'],
        renewDeadlineMs: cfg['renew-deadline'],
        retryPeriodMs: cfg['retry-period'],
      }
    : false,
  health: cfg['health-addr'],
});

try {
  await setupPortico(manager, cfg);
  manager.handleSignals(cfg['shutdown-grace-period']);
  await manager.start();
  log.info('portico started', { identity: manager.identity, version: VERSION });
  startMemorySettler(manager.metrics, log);
} catch (e) {
  log.error('startup failed', { error: describe(e) });
  await manager.stop();
  process.exit(1);
}

/** The version in package.json (next to app/ in the image too), else the npm-provided one. */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return process.env.npm_package_version ?? 'unknown';
  }
}
