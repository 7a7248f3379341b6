// Logging and tracing: enable-access-log (a directive profile), OpenTelemetry (route data: tracing.lua); the rewrite
// log, and the tracing and
// metrics ingress-nginx has removed are refused.
import { z } from 'zod';
import { refused, row } from '../group.ts';
import { boolSchema } from '../../values/safe.ts';

/** opentelemetry-operation-name: ingress-nginx's own rule, ^[A-Za-z0-9_\-]*$ (no spaces, no variables). */
const operationNameSchema = z
  .string()
  .max(128, 'at most 128 characters')
  .regex(/^[A-Za-z0-9_-]*$/, 'expected letters, digits, "_" and "-" (ingress-nginx\'s rule: no spaces, no variables)');

export const rows = {
  'enable-access-log': row(boolSchema, 'location', 'low', '"false": requests of this Ingress are not written to the access log (access_log off); default true'),
  'enable-rewrite-log': refused('location', 'low', 'not supported: there is no rewrite log to enable'),
  'enable-opentelemetry': row(boolSchema, 'location', 'low', '"true": this Ingress\'s requests are traced (one SERVER span each, W3C traceparent continued and sent upstream) even when the ConfigMap\'s enable-opentelemetry is false; "false": they are not. Needs the ConfigMap\'s otlp-collector-host', {
    difference: 'spans are exported over OTLP/HTTP (JSON), not gRPC (see otlp-collector-port); the default span name is the path as written ("/api"; ingress-nginx: the location, "/api/")',
  }),
  'opentelemetry-operation-name': row(operationNameSchema, 'location', 'medium', 'Span name of this Ingress\'s requests (letters, digits, "_" and "-", as ingress-nginx)', {
    difference: 'applies whenever the Ingress is traced, also by the ConfigMap alone (ingress-nginx ignores it unless the Ingress sets enable-opentelemetry "true")',
  }),
  'opentelemetry-trust-incoming-span': row(boolSchema, 'location', 'low', 'Whether a valid incoming traceparent is continued for this Ingress\'s requests (overrides the ConfigMap\'s opentelemetry-trust-incoming-span)', {
    difference: 'applies whenever the Ingress is traced, also by the ConfigMap alone (ingress-nginx ignores it unless the Ingress sets enable-opentelemetry "true")',
  }),
  'enable-opentracing': refused('location', 'low', 'removed from ingress-nginx (replaced by OpenTelemetry) and not supported', { removed: true }),
  'opentracing-trust-incoming-span': refused('location', 'low', 'removed from ingress-nginx (replaced by OpenTelemetry) and not supported', { removed: true }),
  'enable-influxdb': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-measurement': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-port': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-host': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-server-name': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
};
