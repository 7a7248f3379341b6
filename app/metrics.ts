// ingress-nginx's controller-level metrics that belong to the application (build info, leader election) and the
// options of the nginx-level ones (reconcilers/nginx-driver/compat-metrics.ts), from the flags.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { Gauge } from 'prom-client';
import type { Config } from './flags.ts';
import type { Logger } from '../operator/log.ts';
import type { Manager } from '../operator/manager.ts';
import { PREFIX, SOCKET_METRICS, type ConstLabels, type RequestMetricsOptions } from '../reconcilers/nginx-driver/compat-metrics.ts';

/** build_info's release: the package version ("v0.1.0"); repository: the project's name (it has no public URL yet). */
export const RELEASE = `v${(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version}`;
export const REPOSITORY = 'portico';

/** The per-request metric options and the constant labels (POD_NAMESPACE / POD_NAME as ingress-nginx reads them). */
export function compatMetricsOptions(cfg: Config, podName: string | undefined, podNamespace: string | undefined, log: Logger): RequestMetricsOptions & { enabled: boolean } {
  const unknown = cfg['exclude-socket-metrics'].filter((n) => !SOCKET_METRICS.includes(n));
  if (unknown.length) log.warn('--exclude-socket-metrics names metrics that are not per-request metrics; they are not excluded', { names: unknown, perRequest: SOCKET_METRICS });
  if (cfg['bucket-factor'] > 1) log.warn('--bucket-factor asks for native histograms, which Portico does not export: the classic buckets (--time-buckets, --length-buckets, --size-buckets) are served', { bucketFactor: cfg['bucket-factor'] });
  if (cfg['monitor-max-batch-size'] !== 10000) log.info('--monitor-max-batch-size has no effect: nginx aggregates per-request metrics in shared memory and sends nothing per request');
  return {
    enabled: cfg['enable-metrics'],
    constLabels: { controller_namespace: podNamespace || cfg.namespace, controller_class: cfg['controller-class'], controller_pod: podName || hostname() },
    perHost: cfg['metrics-per-host'],
    statusClasses: cfg['report-status-classes'],
    exclude: new Set(cfg['exclude-socket-metrics']),
    buckets: { time: cfg['time-buckets'], length: cfg['length-buckets'], size: cfg['size-buckets'] },
  };
}

/** build_info (constant 1) and leader_election_status{name} (1 leading, 0 following; after the first transition). */
export function registerControllerCompatMetrics(m: Manager, labels: ConstLabels, electionId: string): void {
  const r = [m.metrics.registry];
  const build = new Gauge({ name: `${PREFIX}build_info`, help: "A metric with a constant '1' labeled with information about the build.", labelNames: [...Object.keys(labels), 'release', 'build', 'repository'], registers: r });
  build.set({ ...labels, release: RELEASE, build: process.env.PORTICO_BUILD ?? 'git', repository: REPOSITORY }, 1);
  const leader = new Gauge({
    name: `${PREFIX}leader_election_status`,
    help: "Gauge reporting status of the leader election, 0 indicates follower, 1 indicates leader. 'name' is the string used to identify the lease",
    labelNames: [...Object.keys(labels), 'name'],
    registers: r,
  });
  const l = { ...labels, name: electionId };
  if (m.leader) {
    m.leader.onStartedLeading(() => leader.set(l, 1));
    m.leader.onStoppedLeading(() => leader.set(l, 0));
  } else leader.set(l, 1);
}
