// The gateway's metrics (prom-client), registered once on the manager's registry.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface GatewayMetrics {
  reloads: Counter;
  dynamic: Counter;
  dynamicBytes: Counter;
  syncs: Histogram;
  failures: Counter;
  checksum: Gauge;
  ready: Gauge;
  dictFailures: Gauge;
  certificatesNotStored: Gauge;
  rejectedEndpoints: Gauge;
}

export function gatewayMetrics(registry: Registry): GatewayMetrics {
  const r = [registry];
  return {
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
