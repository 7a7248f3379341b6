// Logging and tracing: enable-access-log (a directive profile); the rewrite log, OpenTelemetry, and the tracing and
// metrics ingress-nginx has removed are refused.
import { refused, row } from '../group.ts';
import { boolSchema } from '../../values/safe.ts';

export const rows = {
  'enable-access-log': row(boolSchema, 'location', 'low', '"false": requests of this Ingress are not written to the access log (access_log off); default true'),
  'enable-rewrite-log': refused('location', 'low', 'not supported: there is no rewrite log to enable'),
  'enable-opentelemetry': refused('location', 'low', 'OpenTelemetry tracing is not supported yet'),
  'opentelemetry-operation-name': refused('location', 'medium', 'OpenTelemetry tracing is not supported yet'),
  'opentelemetry-trust-incoming-span': refused('location', 'low', 'OpenTelemetry tracing is not supported yet'),
  'enable-opentracing': refused('location', 'low', 'removed from ingress-nginx (replaced by OpenTelemetry) and not supported', { removed: true }),
  'opentracing-trust-incoming-span': refused('location', 'low', 'removed from ingress-nginx (replaced by OpenTelemetry) and not supported', { removed: true }),
  'enable-influxdb': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-measurement': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-port': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-host': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-server-name': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
};
