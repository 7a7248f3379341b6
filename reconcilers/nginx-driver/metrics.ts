// The gateway's metrics (prom-client), registered once on the manager's registry.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { PREFIX, type ConstLabels } from './compat-metrics.ts';

export interface GatewayMetrics {
  reloads: Counter;
  dynamic: Counter;
  dynamicBytes: Counter;
  syncs: Histogram;
  failures: Counter;
  checksum: Gauge;
  ready: Gauge;
  dictFailures: Gauge;
  tracingDropped: Gauge;
  rateLimitStoreFailures: Gauge;
  certificatesNotStored: Gauge;
  rejectedEndpoints: Gauge;
  /** ingress-nginx's reload metrics (nginx_ingress_controller_*), labelled with the controller's constant labels. */
  compat: { labels: ConstLabels; success: Counter; errors: Counter; configHash: Gauge; lastReloadOk: Gauge; lastReloadAt: Gauge };
}

const CONST_LABEL_NAMES = ['controller_namespace', 'controller_class', 'controller_pod'];

export function gatewayMetrics(registry: Registry, labels: ConstLabels): GatewayMetrics {
  const r = [registry];
  const compat = {
    labels,
    success: new Counter({ name: `${PREFIX}success`, help: 'Cumulative number of Ingress controller reload operations', labelNames: CONST_LABEL_NAMES, registers: r }),
    errors: new Counter({ name: `${PREFIX}errors`, help: 'Cumulative number of Ingress controller errors during reload operations', labelNames: CONST_LABEL_NAMES, registers: r }),
    configHash: new Gauge({ name: `${PREFIX}config_hash`, help: 'Running configuration hash actually running', labelNames: CONST_LABEL_NAMES, registers: r }),
    lastReloadOk: new Gauge({ name: `${PREFIX}config_last_reload_successful`, help: 'Whether the last configuration reload attempt was successful', labelNames: CONST_LABEL_NAMES, registers: r }),
    lastReloadAt: new Gauge({ name: `${PREFIX}config_last_reload_successful_timestamp_seconds`, help: 'Timestamp of the last successful configuration reload.', labelNames: CONST_LABEL_NAMES, registers: r }),
  };
  // Present from the start, as ingress-nginx's (0 until the first successful reload).
  compat.configHash.set({ ...labels }, 0);
  compat.lastReloadOk.set({ ...labels }, 0);
  compat.lastReloadAt.set({ ...labels }, 0);
  return {
    compat,
    reloads: new Counter({ name: 'portico_nginx_reloads_total', help: 'nginx configuration reloads by result', labelNames: ['result'], registers: r }),
    dynamic: new Counter({ name: 'portico_dynamic_updates_total', help: 'Data-only updates pushed to Lua (no reload), by result', labelNames: ['result'], registers: r }),
    dynamicBytes: new Counter({ name: 'portico_dynamic_update_bytes_total', help: 'Bytes of data deltas sent to nginx', registers: r }),
    syncs: new Histogram({
      name: 'portico_sync_duration_seconds',
      help: 'Gateway sync latency (translate + diff + apply), by kind: reload, dynamic (structural lane, no reload), endpoints (data lane)',
      labelNames: ['kind'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: r,
    }),
    failures: new Counter({ name: 'portico_sync_failures_total', help: 'Failed gateway syncs by lane (each is retried with backoff)', labelNames: ['lane'], registers: r }),
    checksum: new Gauge({ name: 'portico_config_checksum', help: 'First 48 bits of the running structure checksum', registers: r }),
    ready: new Gauge({ name: 'portico_nginx_ready', help: '1 once nginx runs a complete Portico configuration', registers: r }),
    tracingDropped: new Gauge({
      name: 'portico_tracing_spans_dropped',
      help: 'OpenTelemetry spans nginx dropped since it started: a worker\'s queue was full (otel-max-queuesize) or the collector did not take an export',
      registers: r,
    }),
    rateLimitStoreFailures: new Gauge({
      name: 'portico_global_rate_limit_store_failures',
      help: 'Requests whose global rate limit (global-rate-limit annotations, Plugins with policy redis) could not ask Redis since nginx started, by outcome: open (let through, global-rate-limit-redis-fail-open) or closed (answered 503)',
      labelNames: ['outcome'],
      registers: r,
    }),
    dictFailures: new Gauge({
      name: 'portico_nginx_shared_dict_write_failures',
      help: 'Writes the Lua side refused because a shared-memory zone was full, since nginx started (raise lua-shared-dicts)',
      labelNames: ['dict'],
      registers: r,
    }),
    certificatesNotStored: new Gauge({
      name: 'portico_nginx_certificates_not_stored',
      help: 'Hosts (and client-certificate hosts) whose certificate nginx could not store because the certificate zone is full; they keep their previous certificate or get the default (raise lua-shared-dicts certificate_data)',
      registers: r,
    }),
    rejectedEndpoints: new Gauge({ name: 'portico_nginx_rejected_endpoints', help: 'Endpoints the Lua side refused (loopback, link-local, unspecified, not an IP) since nginx started', registers: r }),
  };
}

/** A reload's outcome in Portico's and ingress-nginx's metrics (checksum: the running structure's, on success). */
export function recordReload(m: GatewayMetrics, ok: boolean, checksum?: string): void {
  const l = { ...m.compat.labels };
  m.reloads.inc({ result: ok ? 'success' : 'failure' });
  if (ok) {
    m.compat.success.inc(l);
    m.compat.lastReloadOk.set(l, 1);
    m.compat.lastReloadAt.set(l, Math.floor(Date.now() / 1000));
    if (checksum) {
      const hash = Number.parseInt(checksum.slice(0, 12), 16);
      m.checksum.set(hash);
      m.compat.configHash.set(l, hash);
    }
  } else {
    m.compat.errors.inc(l);
    m.compat.lastReloadOk.set(l, 0);
    m.compat.configHash.set(l, 0);
  }
}
