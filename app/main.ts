#!/usr/bin/env node
// portico: the ingress controller process. Flags: see app/flags.ts (docs/reference/flags.md has the table).
// `portico migrate …` runs the migration report instead (app/migrate.ts).
import { existsSync } from 'node:fs';
import { ConfigError, parseConfig, type Config } from './flags.ts';
import { KubeClient, loadKubeConfig } from '../operator/kube/client.ts';
import { createLogger } from '../operator/log.ts';
import { Manager } from '../operator/manager.ts';
import { Metrics } from '../operator/metrics.ts';
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

const kubeconfigPath = cfg.kubeconfig ?? process.env.KUBECONFIG;
if (kubeconfigPath && !existsSync(kubeconfigPath)) fail(`kubeconfig ${kubeconfigPath} does not exist`);
let client: KubeClient;
try {
  client = new KubeClient(loadKubeConfig(cfg.kubeconfig), { rateLimit: { qps: cfg['kube-api-qps'], burst: cfg['kube-api-burst'] } });
} catch (e) {
  fail(`cannot load a kubeconfig: ${describe(e)} (pass --kubeconfig or run in a pod)`);
}

const log = createLogger(cfg['log-level']);
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
  log.info('portico started', { identity: manager.identity, version: process.env.npm_package_version ?? '0.1.0' });
} catch (e) {
  log.error('startup failed', { error: describe(e) });
  await manager.stop();
  process.exit(1);
}
